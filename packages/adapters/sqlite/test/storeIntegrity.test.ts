// Issue 22 item 5: the SQLite layer provides core's StoreIntegrity port, and its check runs the
// streams-against-events check shared with PostgreSQL (kysely-store) beside SQLite's own pragmas,
// so a projection that disagrees with its events is found (before, only the pragmas ran).
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { SessionStore, StoreIntegrity } from "@rewind/core"
import { StoreEvents } from "@rewind/testkit"
import { Effect } from "effect"
import { SqliteSessionStore } from "../src/index.js"
import { tempDir, withRawDatabase } from "./tempStore.js"

const { sessionCreated, sessionIdOf, userMessage } = StoreEvents
const a = sessionIdOf("a")

const withStore = <A, E>(
  file: string,
  body: Effect.Effect<A, E, SessionStore | StoreIntegrity | SqliteSessionStore.SqliteStore>,
) => Effect.provide(body, SqliteSessionStore.layer({ path: file }))

const seeded = Effect.gen(function* () {
  const file = path.join(yield* tempDir, "store.db")
  yield* withStore(
    file,
    Effect.flatMap(SessionStore, (store) =>
      store.append({
        sessionId: a,
        expectedVersion: 0,
        events: [sessionCreated(a, { at: 1 }), userMessage(a, 1)],
        at: 1,
      }),
    ),
  )
  return file
})

describe("SQLite StoreIntegrity", () => {
  it.scoped("is provided by the layer: the store's kind, location, schema version and a passing check", () =>
    Effect.gen(function* () {
      const file = yield* seeded
      const seen = yield* withStore(
        file,
        Effect.gen(function* () {
          const port = yield* StoreIntegrity
          const store = yield* SqliteSessionStore.SqliteStore
          return { port, store, check: yield* port.check, readOnly: yield* port.readOnly }
        }),
      )
      expect(seen.port.kind).toBe("sqlite")
      expect(seen.port.location).toBe(seen.store.location)
      expect(seen.port.schemaVersion).toBe(seen.store.schemaVersion)
      expect(seen.check).toEqual({ ok: true, problems: [] })
      expect(seen.readOnly).toBeUndefined()
    }),
  )

  it.scoped(
    "finds a stream whose projection disagrees with its events, a stream row without events and events without one",
    () =>
      Effect.gen(function* () {
        const file = yield* seeded
        withRawDatabase(file, (db) => {
          db.pragma("foreign_keys = OFF")
          db.exec("update streams set version = 1 where session_id = 'a'")
          db.exec("insert into streams (session_id, version, updated_at) values ('ghost', 2, 0)")
        })
        const check = yield* withStore(
          file,
          Effect.flatMap(StoreIntegrity, (port) => port.check),
        )
        expect(check.ok).toBe(false)
        expect(check.problems).toEqual([
          `stream ${a}: streams.version 1 but the last event is 2`,
          "stream ghost: a streams row (version 2) without events",
        ])
      }),
  )
})
