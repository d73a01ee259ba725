/**
 * The options of a SQLite session store, as a Schema (validated when the store opens) and as an
 * Effect `Config` read from `REWIND_SQLITE_*` variables.
 */
import { Config, Schema } from "effect"

export const SynchronousMode = Schema.Literal("NORMAL", "FULL")
export type SynchronousMode = typeof SynchronousMode.Type

export const SqliteStoreOptions = Schema.Struct({
  /** Path of the database file (created when missing), or `:memory:` for a private in-memory store. */
  path: Schema.NonEmptyString,
  /** How long a write waits for another connection's lock before failing (SQLite busy_timeout). */
  busyTimeoutMillis: Schema.optional(Schema.Int.pipe(Schema.between(0, 600_000))),
  /**
   * `NORMAL` (default): with WAL, a commit survives a process crash but the last commits can be
   * lost on power failure or an OS crash. `FULL`: every commit is synced to disk before it returns.
   */
  synchronous: Schema.optional(SynchronousMode),
  /** Run `PRAGMA quick_check` when opening (reads the whole file: slow on big stores). */
  integrityCheckOnOpen: Schema.optional(Schema.Boolean),
  /** Copy the file to `<path>.bak-v<from>` before migrating a store that has data (default true). */
  backupBeforeMigration: Schema.optional(Schema.Boolean),
  /**
   * Checkpoint the WAL (copy its pages into the database file) once the store has had no call for
   * this long, in ms (default 250), if about 1 MiB was written since the last checkpoint (a smaller
   * WAL waits: see `IDLE_CHECKPOINT_FROM_BYTES`), and, with `backgroundCheckpoints`, at most this often while
   * calls keep coming, so commits do not pay for it; a commit still checkpoints when the WAL passes
   * 64 MiB. 0: SQLite's default, a checkpoint inside the commit that takes the WAL past 1,000 pages.
   */
  idleCheckpointMillis: Schema.optional(Schema.Int.pipe(Schema.between(0, 3_600_000))),
  /**
   * Run those checkpoints on a worker thread with its own connection (default true), so they run
   * beside the store's calls instead of blocking them. The thread starts on the first checkpoint;
   * if it cannot start, the store checkpoints on its own connection while idle.
   */
  backgroundCheckpoints: Schema.optional(Schema.Boolean),
})
export type SqliteStoreOptions = typeof SqliteStoreOptions.Type

export interface ResolvedSqliteStoreOptions {
  readonly path: string
  readonly busyTimeoutMillis: number
  readonly synchronous: SynchronousMode
  readonly integrityCheckOnOpen: boolean
  readonly backupBeforeMigration: boolean
  readonly idleCheckpointMillis: number
  readonly backgroundCheckpoints: boolean
}

export const DEFAULT_BUSY_TIMEOUT_MILLIS = 5_000
export const DEFAULT_IDLE_CHECKPOINT_MILLIS = 250

export const resolveOptions = (options: SqliteStoreOptions): ResolvedSqliteStoreOptions => ({
  path: options.path,
  busyTimeoutMillis: options.busyTimeoutMillis ?? DEFAULT_BUSY_TIMEOUT_MILLIS,
  synchronous: options.synchronous ?? "NORMAL",
  integrityCheckOnOpen: options.integrityCheckOnOpen ?? false,
  backupBeforeMigration: options.backupBeforeMigration ?? true,
  idleCheckpointMillis: options.idleCheckpointMillis ?? DEFAULT_IDLE_CHECKPOINT_MILLIS,
  backgroundCheckpoints: options.backgroundCheckpoints ?? true,
})

/**
 * `REWIND_SQLITE_PATH` (required), `REWIND_SQLITE_BUSY_TIMEOUT_MS`, `REWIND_SQLITE_SYNCHRONOUS`
 * (`NORMAL` or `FULL`), `REWIND_SQLITE_INTEGRITY_CHECK` (boolean), `REWIND_SQLITE_IDLE_CHECKPOINT_MS`, `REWIND_SQLITE_BACKGROUND_CHECKPOINTS` (boolean).
 */
export const sqliteStoreConfig: Config.Config<SqliteStoreOptions> = Config.all({
  path: Config.nonEmptyString("REWIND_SQLITE_PATH"),
  busyTimeoutMillis: Config.integer("REWIND_SQLITE_BUSY_TIMEOUT_MS").pipe(
    Config.withDefault(DEFAULT_BUSY_TIMEOUT_MILLIS),
  ),
  synchronous: Config.literal(
    "NORMAL",
    "FULL",
  )("REWIND_SQLITE_SYNCHRONOUS").pipe(Config.withDefault("NORMAL")),
  integrityCheckOnOpen: Config.boolean("REWIND_SQLITE_INTEGRITY_CHECK").pipe(Config.withDefault(false)),
  idleCheckpointMillis: Config.integer("REWIND_SQLITE_IDLE_CHECKPOINT_MS").pipe(
    Config.withDefault(DEFAULT_IDLE_CHECKPOINT_MILLIS),
  ),
  backgroundCheckpoints: Config.boolean("REWIND_SQLITE_BACKGROUND_CHECKPOINTS").pipe(
    Config.withDefault(true),
  ),
})
