/**
 * The SQLite SessionStore and its OperationJournal, layered over a `SqliteDatabase` (one opened
 * file, or `:memory:`) as the PostgreSQL adapter's are over a `PostgresDatabase`, plus the
 * adapter's own service (`SqliteStore`) for what only this adapter can do: rebuild its
 * projections, check integrity, say which schema version and journal mode it runs with and where
 * it put its pre-migration backup. The integrity check and the read-only probe are also provided
 * as core's StoreIntegrity port, so a health check reaches them without naming this adapter.
 */
import type { EventDecodeError, StoreError, StoreIncompatible } from "@rewind/contracts"
import {
  type ArtifactStoreService,
  OperationJournal,
  type OperationJournalService,
  SessionStore,
  type SessionStoreService,
  StoreIntegrity,
  type StoreIntegrityService,
} from "@rewind/core"
import type { RebuildReport } from "@rewind/kysely-store"
import { type Config, Context, Effect, Layer, type Scope } from "effect"
import { makeSqliteStore, storeFromDatabase } from "./internal/makeSqliteStore.js"
import { STORE_MIGRATIONS } from "./internal/migrations.js"
import type { ConnectionSettings } from "./internal/openDatabase.js"
import type { IntegrityReport } from "./internal/storeService.js"
import {
  layer as databaseLayer,
  layerConfig as databaseLayerConfig,
  SqliteDatabase,
  type SqliteDatabaseService,
} from "./SqliteDatabase.js"
import type { SqliteStoreOptions } from "./SqliteStoreOptions.js"

export type { RebuildReport } from "@rewind/kysely-store"
export type { ConnectionSettings } from "./internal/openDatabase.js"
export type { IntegrityReport } from "./internal/storeService.js"

export interface SqliteStoreService {
  readonly sessionStore: SessionStoreService
  /** The file path, or `:memory:`. */
  readonly location: string
  readonly schemaVersion: number
  /** The connection's pragmas as SQLite reports them (journal mode, synchronous, busy timeout, foreign keys). */
  readonly settings: ConnectionSettings
  /** Migrations this open applied, oldest first (empty when the store was already current). */
  readonly migrationsApplied: ReadonlyArray<string>
  /** The copy made before migrating a store that had data, if this open made one. */
  readonly backupPath: string | undefined
  /** Recomputes the `streams` and `sessions` projections from the events, in one transaction. */
  readonly rebuildProjections: Effect.Effect<RebuildReport, StoreError | EventDecodeError>
  /**
   * Why the store cannot be written now (the file or its directory is read-only for this process),
   * or undefined when it can. SQLite opens such a file read-only without failing; this says so.
   */
  readonly readOnly: Effect.Effect<string | undefined>
  /** `PRAGMA integrity_check` and `foreign_key_check`, and every stream against its events (kysely-store's check). */
  readonly integrityCheck: Effect.Effect<IntegrityReport, StoreError>
  /** The durable journal of multi-file restores, in the same database. */
  readonly operationJournal: OperationJournalService
  /** Content-addressed blobs in the same database (see SqliteArtifactStore.ts). */
  readonly artifactStore: ArtifactStoreService
}

export class SqliteStore extends Context.Tag("@rewind/adapter-sqlite/SqliteStore")<
  SqliteStore,
  SqliteStoreService
>() {}

/** Opens the store for the life of the scope: the connection closes when the scope does. */
export const make = (
  options: SqliteStoreOptions,
): Effect.Effect<SqliteStoreService, StoreIncompatible | StoreError, Scope.Scope> =>
  makeSqliteStore(options, STORE_MIGRATIONS)

/** The adapter's own service; `layer` provides it together with the SessionStore. */
export const layerSqliteStore = (
  options: SqliteStoreOptions,
): Layer.Layer<SqliteStore, StoreIncompatible | StoreError> => Layer.scoped(SqliteStore, make(options))

/** The StoreIntegrity port of an opened store. */
export const storeIntegrity = (store: SqliteStoreService): StoreIntegrityService => ({
  kind: "sqlite",
  location: store.location,
  schemaVersion: store.schemaVersion,
  check: store.integrityCheck,
  readOnly: store.readOnly,
})

/** The adapter's service over an opened database (its stores share the database's connection). */
export const fromDatabase = (database: SqliteDatabaseService): SqliteStoreService =>
  storeFromDatabase(database)

/** The session store, its operation journal and StoreIntegrity over the `SqliteDatabase` in context. */
export const layerFromDatabase: Layer.Layer<
  SessionStore | OperationJournal | StoreIntegrity | SqliteStore,
  never,
  SqliteDatabase
> = Layer.mergeAll(
  Layer.effect(
    SessionStore,
    Effect.map(SqliteStore, (store) => store.sessionStore),
  ),
  Layer.effect(
    OperationJournal,
    Effect.map(SqliteStore, (store) => store.operationJournal),
  ),
  Layer.effect(StoreIntegrity, Effect.map(SqliteStore, storeIntegrity)),
).pipe(Layer.provideMerge(Layer.effect(SqliteStore, Effect.map(SqliteDatabase, fromDatabase))))

/**
 * A SessionStore, its OperationJournal and its StoreIntegrity over a SQLite file, with the
 * `SqliteDatabase` they share (so `SqliteArtifactStore.layerFromDatabase` can be layered over the
 * same connection). Each build of the layer opens the file; the scope closes it.
 */
export const layer = (
  options: SqliteStoreOptions,
): Layer.Layer<
  SessionStore | OperationJournal | StoreIntegrity | SqliteStore | SqliteDatabase,
  StoreIncompatible | StoreError
> => layerFromDatabase.pipe(Layer.provideMerge(databaseLayer(options)))

/** Like `layer`, reading its options from `Config` (by default the `REWIND_SQLITE_*` variables). */
export const layerConfig = (
  config?: Config.Config<SqliteStoreOptions>,
): Layer.Layer<
  SessionStore | OperationJournal | StoreIntegrity | SqliteStore | SqliteDatabase,
  StoreIncompatible | StoreError
> => layerFromDatabase.pipe(Layer.provideMerge(databaseLayerConfig(config)))

/** Rebuilds the projections of the store in context from its events. */
export const rebuildProjections: Effect.Effect<RebuildReport, StoreError | EventDecodeError, SqliteStore> =
  Effect.flatMap(SqliteStore, (store) => store.rebuildProjections)

/** Runs SQLite's integrity and foreign key checks, and the streams check, on the store in context. */
export const integrityCheck: Effect.Effect<IntegrityReport, StoreError, SqliteStore> = Effect.flatMap(
  SqliteStore,
  (store) => store.integrityCheck,
)
