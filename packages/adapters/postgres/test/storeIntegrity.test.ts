// Issue 22 item 5: the PostgreSQL layer provides core's StoreIntegrity port (so doctor checks a
// PostgreSQL store too, which it never did), over the streams check shared with SQLite.
import { expect, it } from "@effect/vitest"
import { SessionStore, StoreIntegrity } from "@rewind/core"
import { StoreEvents } from "@rewind/testkit"
import { Effect } from "effect"
import { PostgresSessionStore } from "../src/index.js"
import { describePg, rawQueryEffect, storeOptions, tempSchema } from "./pgTest.js"

const { sessionCreated, sessionIdOf, userMessage } = StoreEvents
const a = sessionIdOf("a")

describePg("PostgreSQL StoreIntegrity", () => {
  it.scoped("is provided by the layer, passes a healthy store and finds a projection behind its events", () =>
    Effect.gen(function* () {
      const schema = yield* tempSchema
      const layer = PostgresSessionStore.layer(storeOptions(schema))
      const healthy = yield* Effect.provide(
        Effect.gen(function* () {
          const store = yield* SessionStore
          yield* store.append({
            sessionId: a,
            expectedVersion: 0,
            events: [sessionCreated(a, { at: 1 }), userMessage(a, 1)],
            at: 1,
          })
          const port = yield* StoreIntegrity
          const pg = yield* PostgresSessionStore.PostgresStore
          return { port, pg, check: yield* port.check, readOnly: yield* port.readOnly }
        }),
        layer,
      )
      expect(healthy.port.kind).toBe("postgresql")
      expect(healthy.port.location).toBe(healthy.pg.location)
      expect(healthy.port.schemaVersion).toBe(healthy.pg.schemaVersion)
      expect(healthy.check).toEqual({ ok: true, problems: [] })
      expect(healthy.readOnly).toBeUndefined()

      yield* rawQueryEffect(schema, "update streams set version = 1 where session_id = $1", [a])
      const damaged = yield* Effect.provide(
        Effect.flatMap(StoreIntegrity, (port) => port.check),
        layer,
      )
      expect(damaged).toEqual({
        ok: false,
        problems: [`stream ${a}: streams.version 1 but the last event is 2`],
      })
    }),
  )
})
