/**
 * Opening a PostgreSQL store: the connection pool, then — on one connection, holding an advisory
 * lock named after the schema so that many workers starting at once take turns — recognise what
 * is in the schema, refuse what must not be touched, and migrate.
 *
 * Nothing is written to a schema until it is known to be a Rewind store this build understands, or
 * empty: a schema holding other tables is refused (`not_a_store`), one written by a newer Rewind
 * (`newer_version`), both before any DDL. Every pooled connection starts with the store's
 * `search_path`, `lock_timeout` and `statement_timeout` (startup options: no extra round trip), and
 * reads `bigint` columns as JS numbers (refusing any beyond 2^53).
 */
import { StoreError, StoreIncompatible } from "@rewind/contracts"
import {
  isUnknownMigrationError,
  latestVersion,
  migrationProvider,
  type StoreMigration,
} from "@rewind/kysely-store"
import { Effect, type Scope } from "effect"
import { Kysely, Migrator, PostgresDialect, sql } from "kysely"
import pg from "pg"
import { describeLocation, type ResolvedPostgresStoreOptions } from "../PostgresStoreOptions.js"
import { STORE_MARKER } from "./migrations.js"
import { toStoreError } from "./pgErrors.js"
import type { PostgresTables } from "./tables.js"

export interface OpenedDatabase {
  readonly pool: pg.Pool
  readonly kysely: Kysely<PostgresTables>
  readonly options: ResolvedPostgresStoreOptions
  /** The URL without its password, and the schema: for messages. */
  readonly location: string
  /** The schema version after opening (always the latest this build knows). */
  readonly schemaVersion: number
  /** Migrations this open applied, oldest first (empty when the store was already current). */
  readonly migrationsApplied: ReadonlyArray<string>
  /** `server_version` as the server reports it. */
  readonly serverVersion: string
}

/** `int8` (bigint, count(*), sum of bigints) as a JS number; refused past 2^53 rather than rounded. */
const INT8_OID = 20
const NUMERIC_OID = 1700
const parseInteger = (text: string): number => {
  const value = Number(text)
  if (!Number.isSafeInteger(value))
    throw new RangeError(`integer ${text} is beyond what JavaScript represents exactly`)
  return value
}
const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    (oid === INT8_OID || oid === NUMERIC_OID) && format !== "binary"
      ? parseInteger
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
}

/** Startup options of every connection (`-c name=value`, PostgreSQL's `options` parameter). */
const startupOptions = (options: ResolvedPostgresStoreOptions): string =>
  [
    `-c search_path=${options.schema}`,
    `-c lock_timeout=${options.lockTimeoutMillis}`,
    `-c statement_timeout=${options.statementTimeoutMillis}`,
  ].join(" ")

/** The advisory lock taken while opening: class "RWND", key the hash of the schema name. */
const OPEN_LOCK_CLASS = 0x52574e44

const MIGRATOR_TABLES = new Set(["kysely_migration", "kysely_migration_lock"])

type SchemaState = { readonly kind: "fresh" } | { readonly kind: "existing"; readonly version: number }

const incompatible = (reason: StoreIncompatible["reason"], location: string, message: string) =>
  new StoreIncompatible({ reason, location, message })

/** Read-only questions to the schema: does it exist, whose tables are in it, which version. */
const inspectSchema = async (
  db: Kysely<PostgresTables>,
  schema: string,
  location: string,
  latest: number,
): Promise<SchemaState | StoreIncompatible> => {
  const tables = (
    await sql<{ name: string }>`
      select c.relname as name from pg_catalog.pg_class c
      join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where n.nspname = ${schema} and c.relkind in ('r', 'p', 'v', 'm', 'f')`.execute(db)
  ).rows.map((r) => r.name)
  const foreign = tables.filter((t) => !MIGRATOR_TABLES.has(t))
  if (foreign.length === 0) {
    const migrated =
      tables.includes("kysely_migration") &&
      Number(
        (
          await sql<{ n: number }>`select count(*) as n from ${sql.id(schema, "kysely_migration")}`.execute(
            db,
          )
        ).rows[0]?.n ?? 0,
      ) > 0
    if (migrated) {
      return incompatible(
        "not_a_store",
        location,
        `${location} records Kysely migrations but has none of Rewind's tables; it was left untouched`,
      )
    }
    return { kind: "fresh" }
  }
  if (!tables.includes("rewind_meta")) {
    return incompatible(
      "not_a_store",
      location,
      `${location} holds tables of another application (${foreign.slice(0, 8).join(", ")}), not a Rewind store; it was left untouched. Use another schema.`,
    )
  }
  const meta = new Map(
    (
      await sql<{
        key: string
        value: string
      }>`select key, value from ${sql.id(schema, "rewind_meta")}`.execute(db)
    ).rows.map((r) => [r.key, r.value]),
  )
  if (meta.get("store") !== STORE_MARKER) {
    return incompatible(
      "not_a_store",
      location,
      `${location} is not a Rewind store (its rewind_meta has no store marker); it was left untouched`,
    )
  }
  const version = Number(meta.get("schema_version"))
  if (!Number.isSafeInteger(version) || version < 1) {
    return incompatible(
      "corrupt",
      location,
      `${location} is marked as a Rewind store but records no schema version`,
    )
  }
  if (version > latest) {
    return incompatible(
      "newer_version",
      location,
      `${location} was written by a newer Rewind (store schema version ${version}; this build understands up to ${latest}). Upgrade Rewind to open it; nothing was changed.`,
    )
  }
  return { kind: "existing", version }
}

const readSchemaVersion = async (db: Kysely<PostgresTables>): Promise<number> => {
  const row = await db
    .selectFrom("rewind_meta")
    .select("value")
    .where("key", "=", "schema_version")
    .executeTakeFirst()
  return Number(row?.value ?? 0)
}

interface Migrated {
  readonly schemaVersion: number
  readonly migrationsApplied: ReadonlyArray<string>
  readonly serverVersion: string
}

/** Inspect and migrate on one connection, under the schema's advisory lock. */
const prepareSchema = (
  kysely: Kysely<PostgresTables>,
  options: ResolvedPostgresStoreOptions,
  location: string,
  migrations: ReadonlyArray<StoreMigration>,
): Effect.Effect<Migrated, StoreIncompatible | StoreError> =>
  Effect.tryPromise({
    try: () =>
      kysely.connection().execute(async (db) => {
        const schema = options.schema
        const lockKey = sql`${sql.lit(OPEN_LOCK_CLASS)}, hashtext(${schema})`
        // Waits for another worker that is opening (and maybe migrating) the same schema.
        await sql`select pg_advisory_lock(${lockKey})`.execute(db)
        try {
          const latest = latestVersion(migrations)
          const state = await inspectSchema(db, schema, location, latest)
          if (state instanceof StoreIncompatible) throw state
          const pending = migrations.filter((m) => state.kind === "fresh" || m.version > state.version)
          let applied: ReadonlyArray<string> = []
          if (pending.length > 0) {
            await sql`create schema if not exists ${sql.id(schema)}`.execute(db)
            const migrator = new Migrator({
              db,
              provider: migrationProvider(migrations),
              migrationTableSchema: schema,
            })
            const result = await migrator.migrateToLatest()
            if (result.error !== undefined) {
              if (isUnknownMigrationError(result.error)) {
                throw incompatible(
                  "newer_version",
                  location,
                  `${location} records migrations this build of Rewind does not know (${result.error.message}); upgrade Rewind to open it`,
                )
              }
              throw result.error
            }
            applied = (result.results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName)
          }
          const schemaVersion = await readSchemaVersion(db)
          if (schemaVersion !== latest) {
            throw new StoreError({
              operation: "migrate",
              message: `${location} is at schema version ${schemaVersion} after migrating, expected ${latest}`,
            })
          }
          const server = await sql<{ v: string }>`select current_setting('server_version') as v`.execute(db)
          return { schemaVersion, migrationsApplied: applied, serverVersion: server.rows[0]?.v ?? "unknown" }
        } finally {
          // If this fails the connection is most likely gone, and the lock went with it.
          await sql`select pg_advisory_unlock(${lockKey})`.execute(db).catch(() => undefined)
        }
      }),
    catch: (error) =>
      error instanceof StoreIncompatible || error instanceof StoreError
        ? error
        : toStoreError("open", error, location),
  })

/** Opens (creating or migrating as needed) the store; the pool is closed with the scope. */
export const openDatabase = (
  options: ResolvedPostgresStoreOptions,
  migrations: ReadonlyArray<StoreMigration>,
): Effect.Effect<OpenedDatabase, StoreIncompatible | StoreError, Scope.Scope> =>
  Effect.gen(function* () {
    const location = describeLocation(options.connectionString, options.schema)
    const { pool, kysely } = yield* Effect.acquireRelease(
      Effect.try({
        try: () => {
          const pool = new pg.Pool({
            connectionString: options.connectionString,
            max: options.poolSize,
            connectionTimeoutMillis: options.connectionTimeoutMillis,
            idleTimeoutMillis: options.idleTimeoutMillis,
            application_name: options.applicationName,
            options: startupOptions(options),
            types,
          })
          // An idle connection that the server drops (restart, idle timeout) is reported here; the
          // pool discards it and the next query opens a new one. Without a listener Node would
          // treat the event as an uncaught error and end the process.
          pool.on("error", () => {})
          return { pool, kysely: new Kysely<PostgresTables>({ dialect: new PostgresDialect({ pool }) }) }
        },
        catch: (error) => toStoreError("open", error, location),
      }),
      ({ kysely }) => Effect.promise(() => kysely.destroy().catch(() => undefined)),
    )
    const migrated = yield* prepareSchema(kysely, options, location, migrations)
    return { pool, kysely, options, location, ...migrated }
  })
