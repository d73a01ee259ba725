/**
 * @rewind/adapter-sqlite: the SessionStore on SQLite (Kysely + better-sqlite3), for a file shared
 * by several processes or a private `:memory:` database. See docs/storage-sqlite.md.
 */
export * as SqliteArtifactStore from "./SqliteArtifactStore.js"
export * as SqliteSessionStore from "./SqliteSessionStore.js"
export {
  DEFAULT_BUSY_TIMEOUT_MILLIS,
  SqliteStoreOptions,
  SynchronousMode,
  sqliteStoreConfig,
} from "./SqliteStoreOptions.js"
