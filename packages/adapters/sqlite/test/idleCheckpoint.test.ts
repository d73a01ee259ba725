// WAL checkpoints while the store is idle: a checkpoint lets the next writer start the WAL over,
// so a store that was idle between two bursts of writes ends with a WAL no longer than one burst's,
// while with idle checkpoints off (and the bursts below SQLite's 1,000-page threshold) it holds
// both. On the checkpoint thread, checkpoints also happen while calls keep coming: the database
// file takes in the WAL's pages during a run of appends that never pauses.
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { SessionStore } from "@rewind/core"
import { StoreEvents } from "@rewind/testkit"
import { Effect } from "effect"
import { SqliteSessionStore } from "../src/index.js"
import { makeCheckpointThread } from "../src/internal/checkpointThread.js"
import { tempDir } from "./tempStore.js"

const { sessionCreated, sessionIdOf, textPart, userMessage } = StoreEvents

const session = sessionIdOf("idle")
/** Events per burst, each with about 1 KB of text: some hundreds of KB of WAL, far below 1,000 pages. */
const PER_BURST = 150

/** Creates the session the appends go to (version 2 afterwards). */
const startSession = Effect.flatMap(SessionStore, (store) =>
  store.append({
    sessionId: session,
    expectedVersion: 0,
    events: [sessionCreated(session), userMessage(session, 1)],
    at: 1,
  }),
)

/** One commit of one text part of about 1 KB (part `n`), on a stream at `version`. */
const appendText = (version: number, n: number) =>
  Effect.flatMap(SessionStore, (store) =>
    store.append({
      sessionId: session,
      expectedVersion: version,
      events: [textPart(1, n, `${n} `.padEnd(1_000, "x"))],
      at: 2,
    }),
  )

/** Two bursts of appends with a pause between them; the WAL file's size after each. */
const walAfterTwoBursts = (
  idleCheckpointMillis: number,
  backgroundCheckpoints = true,
  perBurst = PER_BURST,
) =>
  Effect.gen(function* () {
    const file = path.join(yield* tempDir, "store.db")
    return yield* Effect.provide(
      Effect.gen(function* () {
        yield* startSession
        let version = 2
        const burst = (from: number) =>
          Effect.gen(function* () {
            // One commit per event, as a working session makes them.
            for (let i = from; i < from + perBurst; i++) {
              yield* appendText(version, i)
              version++
            }
            return fs.statSync(`${file}-wal`).size
          })
        const first = yield* burst(0)
        const before = fs.statSync(file).size
        // Idle: well past the idle delay. With checkpoints on and a burst worth copying, until one
        // has copied the burst into the database file (the file grows), however long a loaded
        // machine takes to start the thread; a few seconds at most.
        const copyExpected = idleCheckpointMillis > 0 && perBurst === PER_BURST
        yield* Effect.sleep(`${idleCheckpointMillis * 4 + 200} millis`)
        for (
          let waited = 0;
          copyExpected && fs.statSync(file).size === before && waited < 10_000;
          waited += 50
        )
          yield* Effect.sleep("50 millis")
        const grownWhileIdle = fs.statSync(file).size - before
        const second = yield* burst(perBurst)
        return { first, second, grownWhileIdle }
      }),
      SqliteSessionStore.layer({ path: file, idleCheckpointMillis, backgroundCheckpoints }),
    )
  })

/** Just below the store's WAL backstop (64 MiB): below it, only an idle or a thread checkpoint copies pages. */
const WAL_LIMIT = 60 * 1024 * 1024

/**
 * Appends without a pause (about 1 KB each, one commit each) until the database file has grown by
 * `growth` bytes, the WAL has reached WAL_LIMIT, or `maxMillis` have passed; the file's growth and
 * the WAL's size at the end.
 */
const appendWithoutPause = (backgroundCheckpoints: boolean, growth: number, maxMillis: number) =>
  Effect.gen(function* () {
    const file = path.join(yield* tempDir, "store.db")
    const outcome = yield* Effect.provide(
      Effect.gen(function* () {
        yield* startSession
        const initial = fs.statSync(file).size
        const started = performance.now()
        let version = 2
        while (
          fs.statSync(file).size - initial < growth &&
          fs.statSync(`${file}-wal`).size < WAL_LIMIT &&
          performance.now() - started < maxMillis
        ) {
          yield* appendText(version, version)
          version++
          // A breath far below the idle delay, so a loaded machine still starts the thread and
          // copies before the WAL reaches WAL_LIMIT.
          yield* Effect.sleep("1 millis")
        }
        return { grown: fs.statSync(file).size - initial, wal: fs.statSync(`${file}-wal`).size }
      }),
      // Idle never comes within the run (a checkpoint here is one the writes asked for).
      SqliteSessionStore.layer({ path: file, idleCheckpointMillis: 60_000, backgroundCheckpoints }),
    )
    // The store closed last (after its checkpoint thread), so closing removed the WAL.
    return { ...outcome, walLeftAfterClose: fs.existsSync(`${file}-wal`) }
  })

describe("idle WAL checkpoints", () => {
  it.live("an idle store checkpoints: the next burst reuses the WAL instead of growing it", () =>
    Effect.gen(function* () {
      const { first, second } = yield* Effect.scoped(walAfterTwoBursts(25))
      expect(second).toBeLessThanOrEqual(first * 1.2)
    }),
  )

  it.live("a pause after a few small commits checkpoints nothing: the next commit appends to the WAL", () =>
    Effect.gen(function* () {
      // Five commits note about 65 KB, far below IDLE_CHECKPOINT_FROM_BYTES: a checkpoint now would
      // only make the next commit start the WAL over, and sync its header, inside the next call.
      for (const backgroundCheckpoints of [true, false]) {
        const { first, second, grownWhileIdle } = yield* Effect.scoped(
          walAfterTwoBursts(25, backgroundCheckpoints, 5),
        )
        expect(grownWhileIdle).toBe(0)
        expect(second).toBeGreaterThan(first)
      }
    }),
  )

  it.live("with idle checkpoints off, the same bursts (below SQLite's threshold) grow the WAL", () =>
    Effect.gen(function* () {
      const { first, second } = yield* Effect.scoped(walAfterTwoBursts(0))
      expect(second).toBeGreaterThan(first * 1.6)
    }),
  )

  it.live("idle checkpoints on the store's own connection (no checkpoint thread) reuse the WAL too", () =>
    Effect.gen(function* () {
      const { first, second } = yield* Effect.scoped(walAfterTwoBursts(25, false))
      expect(second).toBeLessThanOrEqual(first * 1.2)
    }),
  )

  it.live("the checkpoint thread copies the WAL into the database while appends never pause", () =>
    Effect.gen(function* () {
      // Well below SQLite's backstop: only the thread's checkpoints can grow the file this much.
      const { grown, wal, walLeftAfterClose } = yield* Effect.scoped(
        appendWithoutPause(true, 256 * 1024, 20_000),
      )
      expect(grown).toBeGreaterThanOrEqual(256 * 1024)
      expect(wal).toBeLessThan(WAL_LIMIT)
      expect(walLeftAfterClose).toBe(false)
    }),
  )

  it.live("without the checkpoint thread, nothing is copied until the store is idle", () =>
    Effect.gen(function* () {
      const { grown, wal, walLeftAfterClose } = yield* Effect.scoped(
        appendWithoutPause(false, 256 * 1024, 1_000),
      )
      // Hundreds of commits' worth of WAL, and not a page of it copied.
      expect(wal).toBeGreaterThan(1024 * 1024)
      expect(grown).toBe(0)
      expect(walLeftAfterClose).toBe(false)
    }),
  )
})

describe("the checkpoint thread", () => {
  it.scopedLive(
    "reports a thread that cannot open the store once, so the store checkpoints itself again",
    () =>
      Effect.gen(function* () {
        const missing = path.join(yield* tempDir, "missing.db")
        const failures: Array<unknown> = []
        const thread = makeCheckpointThread({
          path: missing,
          busyTimeoutMillis: 100,
          synchronous: "NORMAL",
          onFailure: (error) => failures.push(error),
        })
        thread.request()
        yield* Effect.promise(async () => {
          for (let i = 0; i < 200 && failures.length === 0; i++) await new Promise((r) => setTimeout(r, 25))
        })
        thread.request()
        expect(failures).toHaveLength(1)
        expect(failures[0]).toMatchObject({ code: "SQLITE_CANTOPEN" })
        expect(thread.stats()).toMatchObject({ completed: 0, failed: true })
        // Nothing was created in the store's place.
        expect(fs.existsSync(missing)).toBe(false)
        yield* Effect.promise(() => thread.close())
      }),
  )
})
