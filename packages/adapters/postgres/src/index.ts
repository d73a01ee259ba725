/**
 * @rewind/adapter-postgres: the SessionStore and a shared content-addressed ArtifactStore on
 * PostgreSQL (Kysely + pg), for many agent workers on many machines sharing one database. See
 * docs/storage-postgres.md.
 */
export * as PostgresDatabase from "./PostgresDatabase.js"
export * as PostgresSessionStore from "./PostgresSessionStore.js"
export {
  DEFAULT_POOL_SIZE,
  DEFAULT_SCHEMA,
  PostgresStoreOptions,
  postgresStoreConfig,
} from "./PostgresStoreOptions.js"
