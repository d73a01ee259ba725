// WAL checkpoints while the store is idle: a checkpoint lets the next writer start the WAL over,
// so a store that was idle between two bursts of writes ends with a WAL no longer than one burst's,
// while with idle checkpoints off (and the bursts below SQLite's 1,000-page threshold) it holds
// both.
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { SessionStore } from "@rewind/core"
import { StoreEvents } from "@rewind/testkit"
import { Effect } from "effect"
import { SqliteSessionStore } from "../src/index.js"
import { tempDir } from "./tempStore.js"

const { sessionCreated, sessionIdOf, textPart, userMessage } = StoreEvents

const session = sessionIdOf("idle")
/** Events per burst, each with about 1 KB of text: some hundreds of KB of WAL, far below 1,000 pages. */
const PER_BURST = 150

/** Two bursts of appends with a pause between them; the WAL file's size after each. */
const walAfterTwoBursts = (idleCheckpointMillis: number) =>
  Effect.gen(function* () {
    const file = path.join(yield* tempDir, "store.db")
    return yield* Effect.provide(
      Effect.gen(function* () {
        const store = yield* SessionStore
        yield* store.append({
          sessionId: session,
          expectedVersion: 0,
          events: [sessionCreated(session), userMessage(session, 1)],
          at: 1,
        })
        let version = 2
        const burst = (from: number) =>
          Effect.gen(function* () {
            // One commit per event, as a working session makes them.
            for (let i = from; i < from + PER_BURST; i++) {
              yield* store.append({
                sessionId: session,
                expectedVersion: version,
                events: [textPart(1, i, `${i} `.padEnd(1_000, "x"))],
                at: 2,
              })
              version++
            }
            return fs.statSync(`${file}-wal`).size
          })
        const first = yield* burst(0)
        // Idle: well past the idle delay.
        yield* Effect.sleep(`${idleCheckpointMillis * 4 + 200} millis`)
        const second = yield* burst(PER_BURST)
        return { first, second }
      }),
      SqliteSessionStore.layer({ path: file, idleCheckpointMillis }),
    )
  })

describe("idle WAL checkpoints", () => {
  it.live("an idle store checkpoints: the next burst reuses the WAL instead of growing it", () =>
    Effect.gen(function* () {
      const { first, second } = yield* Effect.scoped(walAfterTwoBursts(25))
      expect(second).toBeLessThanOrEqual(first * 1.2)
    }),
  )

  it.live("with idle checkpoints off, the same bursts (below SQLite's threshold) grow the WAL", () =>
    Effect.gen(function* () {
      const { first, second } = yield* Effect.scoped(walAfterTwoBursts(0))
      expect(second).toBeGreaterThan(first * 1.6)
    }),
  )
})
