// Version conflicts are the engine's to retry (issue 21 item 14): one helper with a bounded,
// jittered Schedule (retryOnVersionConflict), used by recordFileMutation and by every restore
// program's appendFresh. A store on which another writer wins the race many times in a row still
// gets the command recorded; one that always loses gets a bounded number of attempts, then the
// conflict as the answer.
import { describe, expect, it } from "@effect/vitest"
import { TurnCompleted, type TurnId, type TurnStarted, VersionConflict } from "@rewind/contracts"
import {
  applyPointRestore,
  capturePoint,
  declareWriteIntent,
  loadSession,
  previewPointRestore,
  recordFileMutation,
  retryOnVersionConflict,
  SessionStore,
} from "@rewind/core"
import { Effect, Random } from "effect"
import { makeEnv, newSession, ROOT, userTurn } from "../support/fileRewindEnv.js"

/** The SessionStore of the environment, with `times` rival appends landing just before ours. */
const rivalled = (times: number, rival: (turnId: TurnId) => TurnStarted | TurnCompleted, turnId: TurnId) =>
  Effect.gen(function* () {
    const inner = yield* SessionStore
    let left = times
    let ours = 0
    const service: typeof inner = {
      ...inner,
      append: (request) =>
        Effect.gen(function* () {
          ours++
          if (left > 0) {
            left--
            const version = yield* inner.version(request.sessionId)
            yield* inner.append({
              sessionId: request.sessionId,
              expectedVersion: version,
              events: [rival(turnId)],
              at: 0,
            })
          }
          return yield* inner.append(request)
        }),
    }
    return { service, attempts: () => ours }
  })

describe("retryOnVersionConflict", () => {
  // Live: past the immediate retries the helper pauses on the Clock (a few ms, jittered).
  it.live(
    "recordFileMutation is recorded after 10 lost races in a row (8 attempts used to be the end)",
    () => {
      const env = makeEnv()
      return Effect.gen(function* () {
        const sessionId = yield* newSession
        const { turnId } = yield* userTurn(sessionId, "x")
        // The rival completes and restarts nothing: it only moves the stream's version on.
        const store = yield* rivalled(
          10,
          (t) => new TurnCompleted({ turnId: t, status: "completed" }),
          turnId,
        )
        const result = yield* recordFileMutation({
          sessionId,
          turnId,
          path: "a.txt",
          toolName: "Write",
          before: null,
          after: "a",
        }).pipe(Effect.provideService(SessionStore, store.service))
        expect(result.recorded).toBe(true)
        expect(store.attempts()).toBe(11)
        expect((yield* loadSession(sessionId)).checkpoints).toHaveLength(1)
      }).pipe(Effect.provide(env.layer()), Effect.withRandom(Random.make(21)))
    },
  )

  it.live("a point restore and a write intent are recorded though other writers win races meanwhile", () => {
    const env = makeEnv()
    env.fs.writeFile(`${ROOT}/a.txt`, "a1")
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const { turnId } = yield* userTurn(sessionId, "x")
      const captured = yield* capturePoint(sessionId, turnId)
      if (captured._tag !== "Captured") return yield* Effect.dieMessage(captured.reason)
      env.fs.writeFile(`${ROOT}/a.txt`, "a2")
      const preview = yield* previewPointRestore(sessionId, captured.point.pointId)
      // Three rival appends: before the rescue point, and before the restore's own record.
      const store = yield* rivalled(3, (t) => new TurnCompleted({ turnId: t, status: "completed" }), turnId)
      yield* applyPointRestore(sessionId, captured.point.pointId, preview.token!).pipe(
        Effect.provideService(SessionStore, store.service),
      )
      expect(env.text("a.txt")).toBe("a1")
      const rivalsAgain = yield* rivalled(
        3,
        (t) => new TurnCompleted({ turnId: t, status: "completed" }),
        turnId,
      )
      const intent = yield* declareWriteIntent(sessionId, turnId, ["a.txt"]).pipe(
        Effect.provideService(SessionStore, rivalsAgain.service),
      )
      expect(intent.entries.map((e) => e.path)).toEqual(["a.txt"])
    }).pipe(Effect.provide(env.layer()), Effect.withRandom(Random.make(21)))
  })

  it.live("gives up after a bounded number of attempts with the conflict itself", () =>
    Effect.gen(function* () {
      let attempts = 0
      const always = Effect.suspend(() => {
        attempts++
        return Effect.fail(
          new VersionConflict({
            sessionId: "ses_x" as never,
            expectedVersion: attempts,
            actualVersion: attempts + 1,
          }),
        )
      })
      const error = yield* Effect.flip(retryOnVersionConflict(always))
      expect(error).toBeInstanceOf(VersionConflict)
      expect(attempts).toBe(14)
      // Anything else is not retried.
      let other = 0
      yield* Effect.flip(
        retryOnVersionConflict(Effect.suspend(() => Effect.fail(new Error(`no ${++other}`)))),
      )
      expect(other).toBe(1)
    }).pipe(Effect.withRandom(Random.make(21))),
  )
})
