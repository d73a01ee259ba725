/**
 * The PostgreSQL SessionStore and its OperationJournal (in the same database), for many agent
 * workers on many machines sharing one database: layers over a `PostgresDatabase` (or opening one),
 * plus the adapter's own service (`PostgresStore`) for what only this adapter does: rebuild its
 * projections, check that streams and projections agree, say where it is and which schema version
 * it runs. The check, and whether the server takes writes, are also provided as core's
 * StoreIntegrity port, so a health check reaches them without naming this adapter.
 */
import type { EventDecodeError, StoreError, StoreIncompatible } from "@rewind/contracts"
import {
  OperationJournal,
  type OperationJournalService,
  SessionStore,
  type SessionStoreService,
  StoreIntegrity,
  type StoreIntegrityReport,
  type StoreIntegrityService,
} from "@rewind/core"
import {
  makeSqlOperationJournal,
  makeSqlSessionStore,
  type RebuildReport,
  rebuildProjections as rebuild,
  STREAM_CONSISTENCY_SQL,
  type StreamConsistencyRow,
  streamConsistencyProblems,
} from "@rewind/kysely-store"
import { type Config, Context, Effect, Layer } from "effect"
import { sql } from "kysely"
import { makeJournalBackend } from "./internal/journalBackend.js"
import { toStoreError } from "./internal/pgErrors.js"
import { makeSessionBackend } from "./internal/sessionBackend.js"
import {
  layer as databaseLayer,
  layerConfig as databaseLayerConfig,
  PostgresDatabase,
  type PostgresDatabaseService,
} from "./PostgresDatabase.js"
import type { PostgresStoreOptions } from "./PostgresStoreOptions.js"

export type { RebuildReport } from "@rewind/kysely-store"

/** Streams whose projection disagrees with their events, or whose events have gaps (the StoreIntegrity port's report). */
export type IntegrityReport = StoreIntegrityReport

export interface PostgresStoreService {
  readonly sessionStore: SessionStoreService
  /** The durable journal of multi-file restores, in the same database (shared by every worker). */
  readonly operationJournal: OperationJournalService
  /** The URL without its password, and the schema. */
  readonly location: string
  readonly schema: string
  readonly schemaVersion: number
  /** Migrations this open applied, oldest first (empty when the store was already current). */
  readonly migrationsApplied: ReadonlyArray<string>
  readonly serverVersion: string
  /**
   * Recomputes the `streams` and `sessions` projections from the events, in one transaction that
   * holds writers off (`events`, `streams` and `sessions` locked in SHARE ROW EXCLUSIVE mode).
   */
  readonly rebuildProjections: Effect.Effect<RebuildReport, StoreError | EventDecodeError>
  /** Checks every stream: its version equals its last sequence, and its sequences have no gap. */
  readonly integrityCheck: Effect.Effect<IntegrityReport, StoreError>
}

export class PostgresStore extends Context.Tag("@rewind/adapter-postgres/PostgresStore")<
  PostgresStore,
  PostgresStoreService
>() {}

/** The session store over an opened database (the pool stays the database's). */
export const fromDatabase = (database: PostgresDatabaseService): PostgresStoreService => {
  const backend = makeSessionBackend(database)
  return {
    sessionStore: makeSqlSessionStore(backend),
    operationJournal: makeSqlOperationJournal(makeJournalBackend(database)),
    location: database.location,
    schema: database.options.schema,
    schemaVersion: database.schemaVersion,
    migrationsApplied: database.migrationsApplied,
    serverVersion: database.serverVersion,
    rebuildProjections: rebuild(backend, async (trx) => {
      await sql`lock table events, streams, sessions in share row exclusive mode`.execute(trx)
    }),
    integrityCheck: Effect.tryPromise({
      try: async () => {
        const rows = await sql.raw<StreamConsistencyRow>(STREAM_CONSISTENCY_SQL).execute(database.kysely)
        const problems = streamConsistencyProblems(rows.rows)
        return { ok: problems.length === 0, problems }
      },
      catch: (error) => toStoreError("integrityCheck", error, database.location),
    }),
  }
}

/**
 * The StoreIntegrity port of an opened store. The server refuses writes when it is a hot standby
 * or runs with read-only transactions by default: that is what `readOnly` reports (a server that
 * cannot be asked is reported by the check instead).
 */
export const storeIntegrity = (
  store: PostgresStoreService,
  database: PostgresDatabaseService,
): StoreIntegrityService => ({
  kind: "postgresql",
  location: store.location,
  schemaVersion: store.schemaVersion,
  check: store.integrityCheck,
  readOnly: Effect.tryPromise(() =>
    sql<{ readonly ro: string }>`select current_setting('transaction_read_only') as ro`.execute(
      database.kysely,
    ),
  ).pipe(
    Effect.map((result) =>
      result.rows[0]?.ro === "on"
        ? `the PostgreSQL server at ${store.location} accepts no writes (transaction_read_only is on: a hot standby, or read-only transactions by default)`
        : undefined,
    ),
    Effect.orElseSucceed(() => undefined),
  ),
})

/** The session store, the operation journal and StoreIntegrity over the `PostgresDatabase` in context. */
export const layerFromDatabase: Layer.Layer<
  SessionStore | OperationJournal | StoreIntegrity | PostgresStore,
  never,
  PostgresDatabase
> = Layer.mergeAll(
  Layer.effect(
    SessionStore,
    Effect.map(PostgresStore, (store) => store.sessionStore),
  ),
  Layer.effect(
    OperationJournal,
    Effect.map(PostgresStore, (store) => store.operationJournal),
  ),
  Layer.effect(StoreIntegrity, Effect.zipWith(PostgresStore, PostgresDatabase, storeIntegrity)),
).pipe(Layer.provideMerge(Layer.effect(PostgresStore, Effect.map(PostgresDatabase, fromDatabase))))

/**
 * A SessionStore and its OperationJournal over a PostgreSQL database (each build of the layer
 * opens its own pool).
 */
export const layer = (
  options: PostgresStoreOptions,
): Layer.Layer<
  SessionStore | OperationJournal | StoreIntegrity | PostgresStore | PostgresDatabase,
  StoreIncompatible | StoreError
> => layerFromDatabase.pipe(Layer.provideMerge(databaseLayer(options)))

/** Like `layer`, reading its options from `Config` (by default the `REWIND_PG_*` variables). */
export const layerConfig = (
  config?: Config.Config<PostgresStoreOptions>,
): Layer.Layer<
  SessionStore | OperationJournal | StoreIntegrity | PostgresStore | PostgresDatabase,
  StoreIncompatible | StoreError
> => layerFromDatabase.pipe(Layer.provideMerge(databaseLayerConfig(config)))

/** Rebuilds the projections of the store in context from its events. */
export const rebuildProjections: Effect.Effect<RebuildReport, StoreError | EventDecodeError, PostgresStore> =
  Effect.flatMap(PostgresStore, (store) => store.rebuildProjections)

/** Checks streams against their events on the store in context. */
export const integrityCheck: Effect.Effect<IntegrityReport, StoreError, PostgresStore> = Effect.flatMap(
  PostgresStore,
  (store) => store.integrityCheck,
)
