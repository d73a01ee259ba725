/**
 * The ArtifactStore in the SQLite store's own database file (see internal/artifactStore.ts for the
 * table, the compression and what a committed put survives). Layer it over a `SqliteDatabase`
 * (`layerFromDatabase`, as PostgreSQL's is over a `PostgresDatabase`), or over
 * `SqliteSessionStore.layer`'s `SqliteStore` (`layer`); either way it shares the session store's
 * connection and permit.
 */
import { ArtifactStore } from "@rewind/core"
import { Effect, Layer } from "effect"
import { artifactStoreOf } from "./internal/storeService.js"
import { SqliteDatabase } from "./SqliteDatabase.js"
import { SqliteStore } from "./SqliteSessionStore.js"

/** The ArtifactStore over the SQLite store in context. */
export const layer: Layer.Layer<ArtifactStore, never, SqliteStore> = Layer.effect(
  ArtifactStore,
  Effect.map(SqliteStore, (store) => store.artifactStore),
)

/** The ArtifactStore over the `SqliteDatabase` in context. */
export const layerFromDatabase: Layer.Layer<ArtifactStore, never, SqliteDatabase> = Layer.effect(
  ArtifactStore,
  Effect.map(SqliteDatabase, artifactStoreOf),
)
