/**
 * Opening a store file: recognise it, refuse what must not be touched, back it up, migrate it.
 *
 * Nothing is written to a file until it is known to be a Rewind store this build understands (or a
 * new, empty file). The checks go from what touches nothing to what touches little: a file that is
 * not SQLite is refused from its first bytes; a store whose header (as the main file or a committed
 * frame of its `-wal` holds it, see storeHeader.ts) says a newer Rewind or another application
 * wrote it is refused without SQLite ever opening it, so the main file, `-wal` and `-shm` stay
 * byte for byte; what only SQL can tell (a damaged file, a schema that is missing, migrations this
 * build does not know, another application's tables) is asked, when a `-wal` holds changes, on a
 * read-only connection, which cannot checkpoint them into the main file on close (SQLite may
 * rebuild the `-shm` index, a cache it derives from the `-wal`). Only then is the file opened for writing, WAL mode and the
 * migrations applied, after copying a store with data to `<file>.bak-v<version>`.
 */
import * as fs from "node:fs"
import { StoreError, StoreIncompatible } from "@rewind/contracts"
import { isUnknownMigrationError, type StoreTables } from "@rewind/kysely-store"
import Database from "better-sqlite3"
import { Effect, type Scope } from "effect"
import { Kysely, Migrator } from "kysely"
import type { ResolvedSqliteStoreOptions } from "../SqliteStoreOptions.js"
import { ImmediateSqliteDialect } from "./dialect.js"
import { latestVersion, migrationProvider, REWIND_APPLICATION_ID, type StoreMigration } from "./migrations.js"
import { Busy, isBusy, isCorrupt, retryBusy, toStoreError } from "./sqliteErrors.js"
import { readStoreHeader } from "./storeHeader.js"

/** The longest a statement waits synchronously (inside SQLite) for another connection's lock. */
export const SYNC_BUSY_WAIT_MILLIS = 20

export const MEMORY_PATH = ":memory:"
/** With idle checkpoints, a commit still checkpoints once the WAL passes this many bytes. */
export const WAL_BACKSTOP_BYTES = 64 * 1024 * 1024
/**
 * The page size of a store this build creates (an existing store keeps the one it was made with;
 * SQLite fixes it when the first page is written). Blobs are most of a store: with 16 KiB pages
 * a blob of up to ~16 KiB sits in its row instead of spilling into overflow pages whose last one
 * is partly empty, so a first capture of babel's shape wrote 1.1 MB (3.4%) less and its inserts
 * took about a third less time than with SQLite's default 4 KiB; a small commit writes 16 KiB
 * frames to the WAL instead of 4 KiB ones (~40 µs more per commit, measured). Durability is the
 * same either way (`synchronous`).
 */
export const NEW_STORE_PAGE_SIZE = 16_384

export interface OpenedDatabase {
  readonly db: Database.Database
  readonly kysely: Kysely<StoreTables>
  readonly location: string
  /** The schema version of the store after opening (always the latest this build knows). */
  readonly schemaVersion: number
  /** Names of the migrations this open applied (empty when the store was already current). */
  readonly migrationsApplied: ReadonlyArray<string>
  /** Where the pre-migration copy was written, when one was made. */
  readonly backupPath: string | undefined
  readonly settings: ConnectionSettings
  /** 0 when SQLite checkpoints inside commits; see `SqliteStoreOptions.idleCheckpointMillis`. */
  readonly idleCheckpointMillis: number
  /** Whether those checkpoints run on a worker thread (`SqliteStoreOptions.backgroundCheckpoints`). */
  readonly backgroundCheckpoints: boolean
}

/** The connection's settings as SQLite reports them back after opening. */
export interface ConnectionSettings {
  /** `wal` for files; `memory` for `:memory:`. */
  readonly journalMode: string
  readonly synchronous: string
  readonly busyTimeoutMillis: number
  readonly foreignKeys: boolean
}

const SYNCHRONOUS_NAMES = ["OFF", "NORMAL", "FULL", "EXTRA"]

const SQLITE_HEADER = Buffer.from("SQLite format 3\u0000", "latin1")
/** Tables Kysely's Migrator creates before its first migration runs (a crash can leave them alone). */
const MIGRATOR_TABLES = new Set(["kysely_migration", "kysely_migration_lock"])

type FileState = "absent" | "empty" | "sqlite"

const incompatible = (reason: StoreIncompatible["reason"], location: string, message: string) =>
  new StoreIncompatible({ reason, location, message })

/** Looks at the file's first bytes without opening it with SQLite. */
const inspectFile = (path: string): Effect.Effect<FileState, StoreIncompatible | StoreError> =>
  Effect.gen(function* () {
    if (path === MEMORY_PATH) return "absent" as const
    const stat = yield* Effect.try({
      try: () => fs.statSync(path, { throwIfNoEntry: false }),
      catch: (cause) => toStoreError("open", cause, path),
    })
    if (stat === undefined) return "absent" as const
    if (!stat.isFile()) {
      return yield* incompatible(
        "not_a_store",
        path,
        `${path} is not a regular file, so it cannot be a Rewind store`,
      )
    }
    if (stat.size === 0) return "empty" as const
    const header = yield* Effect.try({
      try: () => {
        const fd = fs.openSync(path, "r")
        try {
          const buffer = Buffer.alloc(SQLITE_HEADER.length)
          const read = fs.readSync(fd, buffer, 0, buffer.length, 0)
          return buffer.subarray(0, read)
        } finally {
          fs.closeSync(fd)
        }
      },
      catch: (cause) => toStoreError("open", cause, path),
    })
    if (!header.equals(SQLITE_HEADER)) {
      return yield* incompatible(
        "not_a_store",
        path,
        `${path} is not a SQLite database, so it is not a Rewind store; it was left untouched`,
      )
    }
    return "sqlite" as const
  })

interface StoreInfo {
  readonly kind: "fresh" | "existing"
  readonly userVersion: number
}

/** Read-only questions to the file: whose is it, which schema version, is it readable at all. */
const readStoreInfo = (
  db: Database.Database,
  location: string,
  latest: number,
  integrityCheck: boolean,
  knownMigrations: ReadonlySet<string>,
): Effect.Effect<StoreInfo, StoreIncompatible | StoreError | Busy> =>
  Effect.try({
    try: () => {
      const applicationId = db.pragma("application_id", { simple: true }) as number
      const userVersion = db.pragma("user_version", { simple: true }) as number
      const tables = db
        .prepare(
          "select name from sqlite_schema where type = 'table' and name not like 'sqlite\\_%' escape '\\'",
        )
        .pluck()
        .all() as Array<string>
      if (applicationId === REWIND_APPLICATION_ID) {
        if (userVersion > latest) {
          return incompatible(
            "newer_version",
            location,
            `${location} was written by a newer Rewind (store schema version ${userVersion}; this build understands up to ${latest}). Upgrade Rewind to open it; the file was not changed.`,
          )
        }
        if (userVersion < 1 || !tables.includes("events")) {
          return incompatible(
            "corrupt",
            location,
            `${location} is marked as a Rewind store but its schema is missing`,
          )
        }
        const unknown = tables.includes("kysely_migration")
          ? (
              db.prepare("select name from kysely_migration order by name").pluck().all() as Array<string>
            ).filter((name) => !knownMigrations.has(name))
          : []
        if (unknown.length > 0) {
          return incompatible(
            "newer_version",
            location,
            `${location} records migrations this build of Rewind does not know (${unknown.join(", ")}); upgrade Rewind to open it; the file was not changed`,
          )
        }
      } else {
        const foreign = tables.filter((t) => !MIGRATOR_TABLES.has(t))
        const migrated =
          tables.includes("kysely_migration") &&
          (db.prepare("select count(*) from kysely_migration").pluck().get() as number) > 0
        if (applicationId !== 0 || userVersion !== 0 || foreign.length > 0 || migrated) {
          return incompatible(
            "not_a_store",
            location,
            `${location} is a SQLite database of another application (application_id ${applicationId}, tables: ${foreign.join(", ") || "none"}), not a Rewind store; it was left untouched`,
          )
        }
      }
      if (integrityCheck) {
        const problems = (db.pragma("quick_check(10)") as Array<Record<string, string>>).map(
          (row) => Object.values(row)[0],
        )
        if (problems.length !== 1 || problems[0] !== "ok") {
          return incompatible(
            "corrupt",
            location,
            `${location} failed its integrity check: ${problems.join("; ")}`,
          )
        }
      }
      return { kind: applicationId === REWIND_APPLICATION_ID ? "existing" : "fresh", userVersion } as const
    },
    catch: (cause) =>
      isCorrupt(cause)
        ? incompatible(
            "corrupt",
            location,
            `${location} is damaged or not a database (${String(cause)}); it was left untouched`,
          )
        : isBusy(cause)
          ? new Busy({ operation: "open", cause })
          : toStoreError("open", cause, location),
  }).pipe(
    Effect.flatMap((result) =>
      result instanceof StoreIncompatible ? Effect.fail(result) : Effect.succeed(result),
    ),
  )

/** Refuses, from the header bytes alone, a store a newer Rewind or another application wrote. */
const refuseByHeader = (location: string, latest: number): Effect.Effect<void, StoreIncompatible> => {
  const header = readStoreHeader(location)
  if (header === undefined) return Effect.void
  if (header.applicationId === REWIND_APPLICATION_ID && header.userVersion > latest) {
    return Effect.fail(
      incompatible(
        "newer_version",
        location,
        `${location} was written by a newer Rewind (store schema version ${header.userVersion}; this build understands up to ${latest}). Upgrade Rewind to open it; the file was not changed.`,
      ),
    )
  }
  if (
    header.applicationId !== REWIND_APPLICATION_ID &&
    (header.applicationId !== 0 || header.userVersion !== 0)
  ) {
    return Effect.fail(
      incompatible(
        "not_a_store",
        location,
        `${location} is a SQLite database of another application (application_id ${header.applicationId}, user_version ${header.userVersion}), not a Rewind store; it was left untouched`,
      ),
    )
  }
  return Effect.void
}

/**
 * The SQL checks on a read-only connection, closed before anything is written. A file SQLite will
 * not open read-only (no `-shm` can be made beside it, say) is left to the writing connection.
 */
const checkReadOnly = (
  location: string,
  latest: number,
  options: ResolvedSqliteStoreOptions,
  knownMigrations: ReadonlySet<string>,
): Effect.Effect<boolean, StoreIncompatible | StoreError | Busy> =>
  Effect.acquireUseRelease(
    Effect.try({
      try: () => new Database(location, { readonly: true, fileMustExist: true }),
      catch: (cause) => cause,
    }).pipe(Effect.option),
    (db) =>
      db._tag === "None"
        ? Effect.succeed(false)
        : Effect.flatMap(
            Effect.sync(() => db.value.pragma(`busy_timeout = ${options.busyTimeoutMillis}`)),
            () =>
              Effect.as(
                readStoreInfo(db.value, location, latest, options.integrityCheckOnOpen, knownMigrations),
                true,
              ),
          ),
    (db) => Effect.sync(() => (db._tag === "Some" && db.value.open ? db.value.close() : undefined)),
  )

/** Copies the store (a consistent snapshot, compacted) next to it, never over an existing file. */
const backupBeforeMigration = (db: Database.Database, path: string, fromVersion: number) =>
  Effect.try({
    try: () => {
      for (let n = 0; n < 1000; n++) {
        const target = n === 0 ? `${path}.bak-v${fromVersion}` : `${path}.bak-v${fromVersion}.${n}`
        if (fs.existsSync(target)) continue
        try {
          db.prepare("vacuum into ?").run(target)
          return target
        } catch (error) {
          // Another process may have taken the name between the check and the copy.
          if (fs.existsSync(target)) continue
          throw error
        }
      }
      throw new Error(`too many backups of ${path} already exist`)
    },
    catch: (cause) => toStoreError("backup before migration", cause, path),
  })

/**
 * Runs the pending migrations with Kysely's Migrator. Running it on a current store is a no-op;
 * a store whose recorded migrations this build does not know was written by a newer Rewind.
 */
export const migrateStore = (
  kysely: Kysely<StoreTables>,
  location: string,
  migrations: ReadonlyArray<StoreMigration>,
): Effect.Effect<ReadonlyArray<string>, StoreIncompatible | StoreError | Busy> =>
  Effect.gen(function* () {
    const migrator = new Migrator({ db: kysely, provider: migrationProvider(migrations) })
    const result = yield* Effect.promise(() => migrator.migrateToLatest())
    if (result.error !== undefined) {
      const error = result.error
      if (isBusy(error)) return yield* new Busy({ operation: "migrate", cause: error })
      if (isUnknownMigrationError(error)) {
        return yield* incompatible(
          "newer_version",
          location,
          `${location} records migrations this build of Rewind does not know (${error.message}); upgrade Rewind to open it`,
        )
      }
      return yield* toStoreError("migrate", error, location)
    }
    return (result.results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName)
  })

/** Opens (creating or migrating as needed) the store; the connection closes with the scope. */
export const openDatabase = (
  options: ResolvedSqliteStoreOptions,
  migrations: ReadonlyArray<StoreMigration>,
): Effect.Effect<OpenedDatabase, StoreIncompatible | StoreError, Scope.Scope> =>
  Effect.gen(function* () {
    const location = options.path
    const latest = latestVersion(migrations)
    const knownMigrations = new Set(migrations.map((m) => m.name))
    let checkedReadOnly = false
    if ((yield* inspectFile(location)) === "sqlite") {
      yield* refuseByHeader(location, latest)
      // Only a -wal with content can be checkpointed by a closing connection. Without one, the
      // writing connection asks the same read-only questions and its close leaves the main file as
      // it was and removes the -wal and -shm it made; a read-only one would leave them behind.
      if ((fs.statSync(`${location}-wal`, { throwIfNoEntry: false })?.size ?? 0) > 0) {
        checkedReadOnly = yield* retryBusy(checkReadOnly(location, latest, options, knownMigrations))
      }
    }

    const { db, kysely } = yield* Effect.acquireRelease(
      Effect.try({
        try: () => {
          const db = new Database(location)
          const kysely = new Kysely<StoreTables>({ dialect: new ImmediateSqliteDialect({ database: db }) })
          return { db, kysely }
        },
        catch: (cause) =>
          isCorrupt(cause)
            ? incompatible("corrupt", location, `${location} is damaged or not a database (${String(cause)})`)
            : toStoreError("open", cause, location),
      }),
      ({ db, kysely }) =>
        Effect.promise(async () => {
          await kysely.destroy().catch(() => undefined)
          if (db.open) db.close()
        }),
    )

    const setPragma = (pragma: string) =>
      retryBusy(
        Effect.try({
          try: () => db.pragma(pragma, { simple: true }),
          catch: (cause) =>
            isBusy(cause)
              ? new Busy({ operation: "open", cause })
              : toStoreError(`pragma ${pragma}`, cause, location),
        }),
        options.busyTimeoutMillis,
      )

    // SQLite's busy wait is synchronous: it blocks the event loop, so another connection of this
    // process (a second openRewind on the same store) could not finish its transaction and free
    // the lock. Each statement waits at most SYNC_BUSY_WAIT_MILLIS; the rest of the configured
    // busy timeout is waited asynchronously between attempts (retryBusy).
    yield* setPragma(`busy_timeout = ${Math.min(options.busyTimeoutMillis, SYNC_BUSY_WAIT_MILLIS)}`)
    // Asked again on the writing connection: another process may have changed the file meanwhile.
    const info = yield* retryBusy(
      readStoreInfo(db, location, latest, options.integrityCheckOnOpen && !checkedReadOnly, knownMigrations),
      options.busyTimeoutMillis,
    )
    const pending = migrations.filter((m) => m.version > info.userVersion)

    const backupPath =
      info.kind === "existing" &&
      pending.length > 0 &&
      options.backupBeforeMigration &&
      location !== MEMORY_PATH
        ? yield* backupBeforeMigration(db, location, info.userVersion)
        : undefined

    if (info.kind === "fresh") yield* setPragma(`page_size = ${NEW_STORE_PAGE_SIZE}`)
    yield* setPragma(location === MEMORY_PATH ? "journal_mode" : "journal_mode = WAL")
    yield* setPragma(`synchronous = ${options.synchronous}`)
    yield* setPragma("foreign_keys = ON")
    if (options.idleCheckpointMillis > 0 && location !== MEMORY_PATH) {
      // Checkpoints happen when the store is idle (storeService.ts); SQLite's own, inside a commit,
      // only past this many pages, and the WAL file is cut back to that size after a checkpoint.
      const pageSize = Number(yield* setPragma("page_size"))
      yield* setPragma(`wal_autocheckpoint = ${Math.ceil(WAL_BACKSTOP_BYTES / pageSize)}`)
      yield* setPragma(`journal_size_limit = ${WAL_BACKSTOP_BYTES}`)
    }

    const migrationsApplied =
      pending.length > 0
        ? yield* retryBusy(migrateStore(kysely, location, migrations), options.busyTimeoutMillis)
        : []
    const schemaVersion = Number(yield* setPragma("user_version"))
    if (schemaVersion !== latest) {
      return yield* new StoreError({
        operation: "migrate",
        message: `${location} is at schema version ${schemaVersion} after migrating, expected ${latest}`,
      })
    }
    const settings: ConnectionSettings = {
      journalMode: String(yield* setPragma("journal_mode")),
      synchronous: SYNCHRONOUS_NAMES[Number(yield* setPragma("synchronous"))] ?? "unknown",
      // The budget a busy write waits in all (synchronously at most SYNC_BUSY_WAIT_MILLIS of it).
      busyTimeoutMillis: options.busyTimeoutMillis,
      foreignKeys: Number(yield* setPragma("foreign_keys")) === 1,
    }
    const idleCheckpointMillis = location === MEMORY_PATH ? 0 : options.idleCheckpointMillis
    return {
      db,
      kysely,
      location,
      schemaVersion,
      migrationsApplied,
      backupPath,
      settings,
      idleCheckpointMillis,
      backgroundCheckpoints: options.backgroundCheckpoints,
    }
  })
