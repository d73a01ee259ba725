/**
 * The ArtifactStore in the SQLite store's own database file (see internal/artifactStore.ts for the
 * table, the compression and what a committed put survives). Layer it over a `SqliteDatabase`
 * (`layerFromDatabase`, as PostgreSQL's is over a `PostgresDatabase`), or over
 * `SqliteSessionStore.layer`'s `SqliteStore` (`layer`); either way it shares the session store's
 * connection and permit.
 */
import { ArtifactStore } from "@rewind/core"
import { Effect, Layer } from "effect"
import { COMPRESS_FROM_BYTES } from "./internal/artifactStore.js"
import { artifactStoreOf } from "./internal/storeService.js"
import { SqliteDatabase } from "./SqliteDatabase.js"
import { SqliteStore } from "./SqliteSessionStore.js"

/**
 * Contents smaller than this are stored as they are, never compressed (the codec's framing would
 * eat the saving): part of what a store of a given tree holds, so measurements of it can say so.
 */
export const STORED_AS_IS_BELOW_BYTES: number = COMPRESS_FROM_BYTES

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
