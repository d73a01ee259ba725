// Issue 22 item 5: the SQLite adapter in the PostgreSQL adapter's shape: a SqliteDatabase Tag (one
// opened file) with the session store, its journal, StoreIntegrity and the artifact store layered
// over it, all on the one connection.
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { ArtifactStore, SessionStore, StoreIntegrity } from "@rewind/core"
import { StoreEvents } from "@rewind/testkit"
import { Effect, Layer } from "effect"
import { SqliteArtifactStore, SqliteDatabase, SqliteSessionStore } from "../src/index.js"
import { tempDir } from "./tempStore.js"

const { sessionCreated, sessionIdOf } = StoreEvents
const a = sessionIdOf("a")

const stores = (file: string) =>
  Layer.mergeAll(SqliteSessionStore.layerFromDatabase, SqliteArtifactStore.layerFromDatabase).pipe(
    Layer.provideMerge(SqliteDatabase.layer({ path: file })),
  )

describe("SqliteDatabase with its stores layered over it", () => {
  it.scoped("sessions and blobs go to one file through one connection, and are there after reopening", () =>
    Effect.gen(function* () {
      const file = path.join(yield* tempDir, "store.db")
      const written = yield* Effect.provide(
        Effect.gen(function* () {
          const database = yield* SqliteDatabase.SqliteDatabase
          const store = yield* SqliteSessionStore.SqliteStore
          yield* (yield* SessionStore).append({
            sessionId: a,
            expectedVersion: 0,
            events: [sessionCreated(a, { at: 1 })],
            at: 1,
          })
          const hash = yield* (yield* ArtifactStore).put(new TextEncoder().encode("blob"))
          const integrity = yield* StoreIntegrity
          return { database, store, hash, check: yield* integrity.check }
        }),
        stores(file),
      )
      expect(written.database.location).toBe(file)
      expect(written.store.location).toBe(file)
      expect(written.store.schemaVersion).toBe(written.database.schemaVersion)
      expect(written.check).toEqual({ ok: true, problems: [] })
      // The same file through the session store's layer and its SqliteStore's artifact store.
      const reread = yield* Effect.provide(
        Effect.gen(function* () {
          const version = yield* (yield* SessionStore).version(a)
          const content = yield* (yield* ArtifactStore).get(written.hash)
          return { version, text: new TextDecoder().decode(content) }
        }),
        SqliteArtifactStore.layer.pipe(Layer.provideMerge(SqliteSessionStore.layer({ path: file }))),
      )
      expect(reread).toEqual({ version: 1, text: "blob" })
    }),
  )
})
