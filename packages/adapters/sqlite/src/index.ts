/**
 * @rewind/adapter-sqlite: the SessionStore on SQLite (Kysely + better-sqlite3), for a file shared
 * by several processes or a private `:memory:` database: a `SqliteDatabase` (the opened file) with
 * the session store, its operation journal, StoreIntegrity and the artifact store layered over it.
 * See docs/storage-sqlite.md.
 */
export * as SqliteArtifactStore from "./SqliteArtifactStore.js"
export * as SqliteDatabase from "./SqliteDatabase.js"
export * as SqliteSessionStore from "./SqliteSessionStore.js"
export {
  DEFAULT_BUSY_TIMEOUT_MILLIS,
  SqliteStoreOptions,
  SynchronousMode,
  sqliteStoreConfig,
} from "./SqliteStoreOptions.js"
