/**
 * @rewind/adapter-postgres: the SessionStore, its OperationJournal and a shared content-addressed ArtifactStore on
 * PostgreSQL (Kysely + pg), for many agent workers on many machines sharing one database. See
 * docs/storage-postgres.md.
 */
import type { StoreError, StoreIncompatible } from "@rewind/contracts"
import type { ArtifactStore, OperationJournal, SessionStore, StoreIntegrity } from "@rewind/core"
import { Layer } from "effect"
import * as PostgresArtifactStore from "./PostgresArtifactStore.js"
import * as PostgresDatabase from "./PostgresDatabase.js"
import * as PostgresSessionStore from "./PostgresSessionStore.js"
import type { PostgresStoreOptions } from "./PostgresStoreOptions.js"

export { PostgresArtifactStore, PostgresDatabase, PostgresSessionStore }
export {
  DEFAULT_POOL_SIZE,
  DEFAULT_SCHEMA,
  PostgresStoreOptions,
  postgresStoreConfig,
} from "./PostgresStoreOptions.js"

/** The session store, its operation journal, its StoreIntegrity and the artifact store over one pool (one build opens one database). */
export const layerPostgres = (
  options: PostgresStoreOptions,
): Layer.Layer<
  | SessionStore
  | OperationJournal
  | StoreIntegrity
  | ArtifactStore
  | PostgresSessionStore.PostgresStore
  | PostgresArtifactStore.PostgresArtifacts
  | PostgresDatabase.PostgresDatabase,
  StoreIncompatible | StoreError
> =>
  Layer.mergeAll(PostgresSessionStore.layerFromDatabase, PostgresArtifactStore.layerFromDatabase).pipe(
    Layer.provideMerge(PostgresDatabase.layer(options)),
  )
