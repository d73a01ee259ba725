// Many fibers sharing one store (one connection): operations never see each other's open
// transactions, and concurrent writers of one stream get VersionConflicts, not lost events.
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { SessionStore } from "@rewind/core"
import { StoreEvents } from "@rewind/testkit"
import { Effect } from "effect"
import { SqliteSessionStore } from "../src/index.js"
import { tempDir } from "./tempStore.js"

const { sessionCreated, sessionIdOf, textPart } = StoreEvents

describe("fibers sharing one SQLite store", () => {
  it.scoped("interleaved commits, appends and reads stay consistent", () =>
    Effect.gen(function* () {
      const file = path.join(yield* tempDir, "fibers.db")
      const shared = sessionIdOf("shared")
      const own = (n: number) => sessionIdOf(`own-${n}`)
      const result = yield* Effect.provide(
        Effect.gen(function* () {
          const store = yield* SessionStore
          yield* store.append({
            sessionId: shared,
            expectedVersion: 0,
            events: [sessionCreated(shared)],
            at: 0,
          })
          // Every fiber writes its own stream in a multi-stream commit and tries to extend the
          // shared stream from the version it read; readers check that a stream is never seen half-written.
          const outcomes = yield* Effect.all(
            Array.from({ length: 40 }, (_, n) =>
              Effect.gen(function* () {
                const seen = yield* store.version(shared)
                yield* Effect.yieldNow()
                const commit = yield* Effect.either(
                  store.commit({
                    appends: [
                      {
                        sessionId: own(n),
                        expectedVersion: 0,
                        events: [sessionCreated(own(n)), textPart(0, n, "a"), textPart(0, n, "b")],
                        at: n,
                      },
                      {
                        sessionId: shared,
                        expectedVersion: seen,
                        events: [textPart(0, n, `from ${n}`)],
                        at: n,
                      },
                    ],
                  }),
                )
                const mine = yield* store.read(own(n))
                return {
                  committed: commit._tag === "Right",
                  conflict: commit._tag === "Left" && commit.left._tag === "VersionConflict",
                  mine: mine.length,
                }
              }),
            ),
            { concurrency: "unbounded" },
          )
          return { outcomes, shared: yield* store.read(shared), listed: yield* store.listSessions() }
        }),
        SqliteSessionStore.layer({ path: file }),
      )
      const committed = result.outcomes.filter((o) => o.committed)
      expect(committed.length).toBeGreaterThan(0)
      // A commit that lost the race on the shared stream wrote nothing, its own stream included.
      for (const o of result.outcomes) {
        expect(o.committed || o.conflict).toBe(true)
        expect(o.mine).toBe(o.committed ? 3 : 0)
      }
      expect(result.shared.map((e) => e.sequence)).toEqual(
        Array.from({ length: committed.length + 1 }, (_, i) => i + 1),
      )
      expect(result.listed.length).toBe(committed.length + 1)
    }),
  )
})
