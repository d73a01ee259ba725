// The engine's one redo undoing a point restore, on the memory adapters: files back to the rescue
// versions with the conversation left as it is (messages added since kept), the `conflict` refusal
// when a file changed since, the stack order with rewinds, and the rescue content kept through GC.
import { describe, expect, it } from "@effect/vitest"
import type { SessionId, TurnId } from "@rewind/contracts"
import {
  activeBranch,
  applyPointRestore,
  capturePoint,
  cleanup,
  loadSession,
  OperationJournal,
  previewPointRestore,
  redo,
  rewindCascade,
} from "@rewind/core"
import { expectRefusal, refusalOf } from "@rewind/testkit"
import { Effect, TestClock } from "effect"
import { agentWrite, makeEnv, newSession, ROOT, reply, userTurn } from "../support/fileRewindEnv.js"

const captured = (sessionId: SessionId, turn: string) =>
  Effect.gen(function* () {
    const outcome = yield* capturePoint(sessionId, turn as TurnId)
    if (outcome._tag !== "Captured") return yield* Effect.dieMessage(outcome.reason)
    return outcome.point
  })

const restoreTo = (sessionId: SessionId, pointId: Parameters<typeof previewPointRestore>[1]) =>
  Effect.gen(function* () {
    const preview = yield* previewPointRestore(sessionId, pointId)
    return yield* applyPointRestore(sessionId, pointId, preview.token!)
  })

describe("redo of a point restore", () => {
  it.effect("puts the files back and leaves the conversation as it is, messages added since included", () => {
    const env = makeEnv()
    env.fs.writeFile(`${ROOT}/a.txt`, "a1")
    env.fs.writeFile(`${ROOT}/b.txt`, "b1")
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const point = yield* captured(sessionId, "turn-1")
      env.fs.writeFile(`${ROOT}/a.txt`, "a2")
      env.fs.remove(`${ROOT}/b.txt`)
      env.fs.writeFile(`${ROOT}/c.txt`, "c2")
      const beforeRestore = env.files()
      const restored = yield* restoreTo(sessionId, point.pointId)
      expect(env.files()).toEqual({ "a.txt": "a1", "b.txt": "b1", "c.txt": "c2" })
      // The restore left a redo entry in the journal.
      const stack = yield* (yield* OperationJournal).redoStack(sessionId)
      expect(stack.map((r) => r.intent.operationId)).toEqual([restored.operationId])

      // The conversation goes on after the restore: redo must not cut it.
      const later = yield* userTurn(sessionId, "after the restore")
      yield* reply(sessionId, later.turnId)
      const branch = activeBranch(yield* loadSession(sessionId))
      expect(branch).toContain(later.messageId)

      const redone = yield* redo(sessionId)
      expect(redone.redoneOperationId).toBe(restored.operationId)
      expect(env.files()).toEqual(beforeRestore)
      expect(activeBranch(yield* loadSession(sessionId))).toEqual(branch)
      expect(redone.activeBranch).toEqual(branch)
      yield* expectRefusal(redo(sessionId), "nothing_to_undo")
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("refuses (conflict, nothing written) when a restored file changed since; then works", () => {
    const env = makeEnv()
    env.fs.writeFile(`${ROOT}/a.txt`, "a1")
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const point = yield* captured(sessionId, "turn-1")
      env.fs.writeFile(`${ROOT}/a.txt`, "a2")
      yield* restoreTo(sessionId, point.pointId)
      env.fs.writeFile(`${ROOT}/a.txt`, "edited after the restore")
      const refusal = yield* refusalOf(redo(sessionId))
      expect(refusal.kind).toBe("conflict")
      expect(refusal.message).toContain("a.txt")
      expect(refusal.message).toContain("changed since the restore")
      expect(env.files()).toEqual({ "a.txt": "edited after the restore" })
      // The entry is still there: with the file as the restore left it, the redo goes through.
      env.fs.writeFile(`${ROOT}/a.txt`, "a1")
      yield* redo(sessionId)
      expect(env.files()).toEqual({ "a.txt": "a2" })
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("a restore that changes nothing leaves nothing to undo", () => {
    const env = makeEnv()
    env.fs.writeFile(`${ROOT}/a.txt`, "a1")
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const point = yield* captured(sessionId, "turn-1")
      const restored = yield* restoreTo(sessionId, point.pointId)
      expect(restored.event.files).toEqual([])
      yield* expectRefusal(redo(sessionId), "nothing_to_undo")
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("a rewind then a point restore are undone newest first", () => {
    const env = makeEnv()
    env.fs.writeFile(`${ROOT}/a.txt`, "a0\n")
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const first = yield* userTurn(sessionId, "first")
      yield* agentWrite(env, sessionId, first.turnId, "a.txt", "a1\n")
      yield* reply(sessionId, first.turnId)
      const point = yield* captured(sessionId, "turn-after-first")
      const second = yield* userTurn(sessionId, "second")
      yield* agentWrite(env, sessionId, second.turnId, "a.txt", "a2\n")
      yield* reply(sessionId, second.turnId)
      const fullBranch = activeBranch(yield* loadSession(sessionId))

      // A rewind of both files and conversation to before the first turn, then a point restore.
      const rewound = yield* rewindCascade({ sessionId, messageId: first.messageId, scope: "both" })
      expect(env.files()).toEqual({ "a.txt": "a0\n" })
      const rewoundBranch = activeBranch(yield* loadSession(sessionId))
      const restored = yield* restoreTo(sessionId, point.pointId)
      expect(env.files()).toEqual({ "a.txt": "a1\n" })

      const undoRestore = yield* redo(sessionId)
      expect(undoRestore.redoneOperationId).toBe(restored.operationId)
      expect(env.files()).toEqual({ "a.txt": "a0\n" })
      expect(activeBranch(yield* loadSession(sessionId))).toEqual(rewoundBranch)
      const undoRewind = yield* redo(sessionId)
      expect(undoRewind.redoneOperationId).toBe(rewound.operationId)
      expect(env.files()).toEqual({ "a.txt": "a2\n" })
      expect(activeBranch(yield* loadSession(sessionId))).toEqual(fullBranch)
      yield* expectRefusal(redo(sessionId), "nothing_to_undo")
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("the rescue content of a redo entry survives a cleanup that releases the rescue point", () => {
    const env = makeEnv()
    env.fs.writeFile(`${ROOT}/a.txt`, "a1")
    env.fs.writeFile(`${ROOT}/b.txt`, "b1")
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const point = yield* captured(sessionId, "turn-1")
      // "a2 only here" is held by no point but the first restore's rescue point.
      env.fs.writeFile(`${ROOT}/a.txt`, "a2 only here")
      const first = yield* restoreTo(sessionId, point.pointId)
      // A second restore makes a newer rescue point, so retention may release the first.
      env.fs.writeFile(`${ROOT}/b.txt`, "b2")
      yield* restoreTo(sessionId, point.pointId)
      yield* TestClock.adjust("1 hour")
      const swept = yield* cleanup({ graceMs: 0, retention: { keepLastPoints: 1 } })
      expect(swept.swept).toBe(true)
      expect(swept.releasedPoints).toContain(first.rescuePointId)
      yield* redo(sessionId)
      expect(env.files()).toEqual({ "a.txt": "a1", "b.txt": "b2" })
      yield* redo(sessionId)
      expect(env.files()).toEqual({ "a.txt": "a2 only here", "b.txt": "b2" })
    }).pipe(Effect.provide(env.layer()))
  })
})
