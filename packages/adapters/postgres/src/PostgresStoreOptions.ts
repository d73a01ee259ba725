/**
 * The options of a PostgreSQL store, as a Schema (validated when the store opens) and as an Effect
 * `Config` read from `REWIND_PG_*` variables.
 */
import { Config, Schema } from "effect"

/** A schema name the store can use unquoted everywhere: lowercase letters, digits, `_`. */
export const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

export const PostgresStoreOptions = Schema.Struct({
  /**
   * A libpq-style URL, `postgres://user:password@host:port/database?sslmode=require`. The password
   * never appears in an error message.
   */
  connectionString: Schema.NonEmptyString,
  /** The PostgreSQL schema holding the store's tables (created when missing; default `rewind`). */
  schema: Schema.optional(
    Schema.String.pipe(
      Schema.pattern(SCHEMA_NAME, {
        message: () => "a schema name is 1-63 lowercase letters, digits and _ (not starting with a digit)",
      }),
    ),
  ),
  /** Connections this process keeps at most (default 10). Each one is a server process: see the docs. */
  poolSize: Schema.optional(Schema.Int.pipe(Schema.between(1, 1_000))),
  /** How long to wait for a connection (a new one, or a free one from a full pool) before failing. */
  connectionTimeoutMillis: Schema.optional(Schema.Int.pipe(Schema.between(0, 600_000))),
  /** How long an unused connection stays open before the pool closes it (default 30 s). */
  idleTimeoutMillis: Schema.optional(Schema.Int.pipe(Schema.between(0, 3_600_000))),
  /** How long a write waits for another writer's lock on the same stream (server `lock_timeout`). */
  lockTimeoutMillis: Schema.optional(Schema.Int.pipe(Schema.between(0, 600_000))),
  /** Server `statement_timeout` for every statement; 0 (default) means none. */
  statementTimeoutMillis: Schema.optional(Schema.Int.pipe(Schema.between(0, 3_600_000))),
  /** Attempts of a write transaction that failed on a deadlock or serialization failure (default 5). */
  maxTransactionAttempts: Schema.optional(Schema.Int.pipe(Schema.between(1, 100))),
  /** `application_name` the server shows in `pg_stat_activity` (default `rewind`). */
  applicationName: Schema.optional(Schema.String.pipe(Schema.maxLength(63))),
})
export type PostgresStoreOptions = typeof PostgresStoreOptions.Type

export interface ResolvedPostgresStoreOptions {
  readonly connectionString: string
  readonly schema: string
  readonly poolSize: number
  readonly connectionTimeoutMillis: number
  readonly idleTimeoutMillis: number
  readonly lockTimeoutMillis: number
  readonly statementTimeoutMillis: number
  readonly maxTransactionAttempts: number
  readonly applicationName: string
}

export const DEFAULT_SCHEMA = "rewind"
export const DEFAULT_POOL_SIZE = 10

export const resolveOptions = (options: PostgresStoreOptions): ResolvedPostgresStoreOptions => ({
  connectionString: options.connectionString,
  schema: options.schema ?? DEFAULT_SCHEMA,
  poolSize: options.poolSize ?? DEFAULT_POOL_SIZE,
  connectionTimeoutMillis: options.connectionTimeoutMillis ?? 10_000,
  idleTimeoutMillis: options.idleTimeoutMillis ?? 30_000,
  lockTimeoutMillis: options.lockTimeoutMillis ?? 10_000,
  statementTimeoutMillis: options.statementTimeoutMillis ?? 0,
  maxTransactionAttempts: options.maxTransactionAttempts ?? 5,
  applicationName: options.applicationName ?? "rewind",
})

/**
 * `REWIND_PG_URL` (required), `REWIND_PG_SCHEMA`, `REWIND_PG_POOL_SIZE`,
 * `REWIND_PG_CONNECT_TIMEOUT_MS`, `REWIND_PG_LOCK_TIMEOUT_MS`, `REWIND_PG_STATEMENT_TIMEOUT_MS`.
 */
export const postgresStoreConfig: Config.Config<PostgresStoreOptions> = Config.all({
  connectionString: Config.nonEmptyString("REWIND_PG_URL"),
  schema: Config.string("REWIND_PG_SCHEMA").pipe(Config.withDefault(DEFAULT_SCHEMA)),
  poolSize: Config.integer("REWIND_PG_POOL_SIZE").pipe(Config.withDefault(DEFAULT_POOL_SIZE)),
  connectionTimeoutMillis: Config.integer("REWIND_PG_CONNECT_TIMEOUT_MS").pipe(Config.withDefault(10_000)),
  lockTimeoutMillis: Config.integer("REWIND_PG_LOCK_TIMEOUT_MS").pipe(Config.withDefault(10_000)),
  statementTimeoutMillis: Config.integer("REWIND_PG_STATEMENT_TIMEOUT_MS").pipe(Config.withDefault(0)),
})

/** Where the store is, for messages: the URL without its password, and the schema. */
export const describeLocation = (connectionString: string, schema: string): string => {
  try {
    const url = new URL(connectionString)
    const host = url.host === "" ? "localhost" : url.host
    return `postgres://${host}${url.pathname} (schema ${schema})`
  } catch {
    return `postgres (schema ${schema})`
  }
}
