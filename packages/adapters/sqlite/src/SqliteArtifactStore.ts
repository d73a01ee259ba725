/**
 * The ArtifactStore in the SQLite store's own database file (see internal/artifactStore.ts for the
 * table, the compression and what a committed put survives). Provide it over
 * `SqliteSessionStore.layer`, which opens the database.
 */
import { ArtifactStore } from "@rewind/core"
import { Effect, Layer } from "effect"
import { SqliteStore } from "./SqliteSessionStore.js"

/** The ArtifactStore over the SQLite store in context. */
export const layer: Layer.Layer<ArtifactStore, never, SqliteStore> = Layer.effect(
  ArtifactStore,
  Effect.map(SqliteStore, (store) => store.artifactStore),
)
