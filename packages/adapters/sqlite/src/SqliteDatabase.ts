/**
 * One SQLite store file opened by this process, as the PostgreSQL adapter's `PostgresDatabase` is
 * its pool: the connection, migrated to this build's schema, with what every store over it shares
 * (one write permit, idle WAL checkpoints, the blob compression thread). The session store, its
 * operation journal, StoreIntegrity and the artifact store are layered over it
 * (`SqliteSessionStore.layerFromDatabase`, `SqliteArtifactStore.layerFromDatabase`), so they
 * share one connection and one permit. The connection closes with the layer's scope.
 */
import type { StoreError, StoreIncompatible } from "@rewind/contracts"
import { layerFromConfig } from "@rewind/kysely-store"
import { type Config, Context, type Effect, Layer, type Scope } from "effect"
import type { SqliteConnection } from "./internal/connection.js"
import { openSqliteDatabase } from "./internal/makeSqliteStore.js"
import { STORE_MIGRATIONS } from "./internal/migrations.js"
import { type SqliteStoreOptions, sqliteStoreConfig } from "./SqliteStoreOptions.js"

export type { ConnectionSettings } from "./internal/openDatabase.js"

/** The opened file: where it is, its schema version and settings, and the shared connection. */
export type SqliteDatabaseService = SqliteConnection

export class SqliteDatabase extends Context.Tag("@rewind/adapter-sqlite/SqliteDatabase")<
  SqliteDatabase,
  SqliteDatabaseService
>() {}

/** Opens the file for the life of the scope: the connection closes when the scope does. */
export const make = (
  options: SqliteStoreOptions,
): Effect.Effect<SqliteDatabaseService, StoreIncompatible | StoreError, Scope.Scope> =>
  openSqliteDatabase(options, STORE_MIGRATIONS)

export const layer = (
  options: SqliteStoreOptions,
): Layer.Layer<SqliteDatabase, StoreIncompatible | StoreError> => Layer.scoped(SqliteDatabase, make(options))

/** Like `layer`, reading its options from `Config` (by default the `REWIND_SQLITE_*` variables). */
export const layerConfig = (
  config: Config.Config<SqliteStoreOptions> = sqliteStoreConfig,
): Layer.Layer<SqliteDatabase, StoreIncompatible | StoreError> =>
  layerFromConfig("SQLite store", config, layer)
