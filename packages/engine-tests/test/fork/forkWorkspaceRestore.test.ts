// Forks that put the workspace back (forkFromCheckpoint over the real ForkWorkspaceRestore layer)
// and rewind by fork, on the memory adapters: files, the journal, the child, and every refusal.
import { describe, expect, it } from "@effect/vitest"
import type { CommandId, SessionId } from "@rewind/contracts"
import {
  activeBranch,
  branchView,
  cancelRewindByFork,
  completeTurn,
  forkFromCheckpoint,
  layerForkWorkspaceRestore,
  listRewindPoints,
  loadSession,
  OperationJournal,
  previewRewindByFork,
  redo,
  rewindByFork,
  SessionStore,
  transcript,
} from "@rewind/core"
import { expectRefusal } from "@rewind/testkit"
import { Effect, Layer, TestClock } from "effect"
import { agentWrite, type Env, makeEnv, newSession, reply, userTurn } from "../support/fileRewindEnv.js"

const cmd = (s: string) => s as CommandId

/** The env's services plus the real fork restore over its workspace, blobs and journal. */
const withRestore = (env: Env) => {
  const base = env.layer()
  return Layer.provideMerge(layerForkWorkspaceRestore, base)
}

/** Three turns: the first creates c.txt, the second edits a.txt, the third edits a.txt and b.txt. */
const threeTurns = (env: Env) =>
  Effect.gen(function* () {
    env.fs.writeFile("/home/dev/project/a.txt", "a0\n")
    env.fs.writeFile("/home/dev/project/b.txt", "b0\n")
    const sessionId = yield* newSession
    const first = yield* userTurn(sessionId, "create c")
    yield* agentWrite(env, sessionId, first.turnId, "c.txt", "c1\n")
    yield* reply(sessionId, first.turnId)
    yield* completeTurn(sessionId, first.turnId)
    const second = yield* userTurn(sessionId, "edit a")
    const a1 = yield* agentWrite(env, sessionId, second.turnId, "a.txt", "a1\n")
    yield* reply(sessionId, second.turnId)
    yield* completeTurn(sessionId, second.turnId)
    const third = yield* userTurn(sessionId, "edit a and b")
    const a2 = yield* agentWrite(env, sessionId, third.turnId, "a.txt", "a2\n")
    yield* agentWrite(env, sessionId, third.turnId, "b.txt", "b2\n")
    yield* reply(sessionId, third.turnId)
    yield* completeTurn(sessionId, third.turnId)
    return { sessionId, first, second, third, a1, a2 }
  })

const sessionCount = Effect.flatMap(SessionStore, (s) => s.listSessions()).pipe(Effect.map((l) => l.length))

describe("forkFromCheckpoint over the real workspace restore", () => {
  it.effect(
    "an explicit checkpoint: its file gets its before-content back, then the child is committed",
    () => {
      const env = makeEnv()
      return Effect.gen(function* () {
        const { sessionId, a2 } = yield* threeTurns(env)
        const fork = yield* forkFromCheckpoint({
          sessionId,
          target: { checkpointId: a2.checkpointId },
          commandId: cmd("f1"),
        })
        expect(env.files()).toEqual({ "a.txt": "a1\n", "b.txt": "b2\n", "c.txt": "c1\n" })
        expect(fork.restoredFiles?.map((f) => f.path)).toEqual(["a.txt"])
        const child = yield* loadSession(fork.childSessionId)
        expect(child.session?.parentId).toBe(sessionId)
        // The restore is a journaled operation of the parent, with a rescue point of what was there.
        const ops = yield* (yield* OperationJournal).all()
        expect(ops.map((o) => [o.intent.kind, o.status, o.intent.sessionId])).toEqual([
          ["fork_restore", "committed", sessionId],
        ])
        expect(ops[0]!.intent.files.map((f) => f.path)).toEqual(["a.txt"])
        expect(ops[0]!.intent.files[0]!.rescue._tag).toBe("present")
        // Replaying the command answers with the same child and writes nothing again.
        env.fs.writeFile("/home/dev/project/a.txt", "a2\n")
        const again = yield* forkFromCheckpoint({
          sessionId,
          target: { checkpointId: a2.checkpointId },
          commandId: cmd("f1"),
        })
        expect(again.childSessionId).toBe(fork.childSessionId)
        expect(again.replayed).toBe(true)
        expect(env.text("a.txt")).toBe("a2\n")
      }).pipe(Effect.provide(withRestore(env)))
    },
  )

  it.effect("a message target undoes, per file, every change made after the end of that turn", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, second } = yield* threeTurns(env)
      const fork = yield* forkFromCheckpoint({
        sessionId,
        target: { messageId: second.messageId },
        commandId: cmd("f2"),
      })
      expect(env.files()).toEqual({ "a.txt": "a1\n", "b.txt": "b0\n", "c.txt": "c1\n" })
      expect(fork.restoredFiles?.map((f) => f.path).sort()).toEqual(["a.txt", "b.txt"])
    }).pipe(Effect.provide(withRestore(env)))
  })

  it.effect("a file changed behind the agent's back refuses: nothing written, no child, no operation", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, second } = yield* threeTurns(env)
      env.fs.writeFile("/home/dev/project/b.txt", "edited by a person\n")
      const before = env.files()
      const refusal = yield* expectRefusal(
        forkFromCheckpoint({ sessionId, target: { messageId: second.messageId }, commandId: cmd("f3") }),
        "unsafe_files",
      )
      expect(refusal.message).toContain("b.txt (external_modified)")
      expect(env.files()).toEqual(before)
      expect(yield* sessionCount).toBe(1)
      expect(yield* (yield* OperationJournal).all()).toEqual([])
      // The command id was not used up: once the file is back, the same command forks.
      env.fs.writeFile("/home/dev/project/b.txt", "b2\n")
      const fork = yield* forkFromCheckpoint({
        sessionId,
        target: { messageId: second.messageId },
        commandId: cmd("f3"),
      })
      expect(fork.replayed).toBe(false)
      expect(env.text("b.txt")).toBe("b0\n")
    }).pipe(Effect.provide(withRestore(env)))
  })

  it.effect("a write that fails is compensated: every file back, refusal, no child", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, second } = yield* threeTurns(env)
      const before = env.files()
      env.workspace.control.inject({ operation: "write", target: "b.txt", persistent: true })
      yield* expectRefusal(
        forkFromCheckpoint({ sessionId, target: { messageId: second.messageId }, commandId: cmd("f4") }),
        "unavailable",
      )
      env.workspace.control.clear()
      expect(env.files()).toEqual(before)
      expect(yield* sessionCount).toBe(1)
      const ops = yield* (yield* OperationJournal).all()
      expect(ops.map((o) => o.status)).toEqual(["rolled_back"])
    }).pipe(Effect.provide(withRestore(env)))
  })
})

describe("rewind by fork", () => {
  const confirm = (
    sessionId: SessionId,
    messageId: Parameters<typeof rewindByFork>[0]["messageId"],
    token: string,
    id = "r1",
  ) => rewindByFork({ sessionId, messageId, token, commandId: cmd(id) })

  it.effect(
    "list → preview → confirm: the child keeps the branch before the message, files go back, the prompt comes back",
    () => {
      const env = makeEnv()
      return Effect.gen(function* () {
        const { sessionId, first, second, third } = yield* threeTurns(env)
        const points = yield* listRewindPoints(sessionId)
        // The first message has nothing before it to fork.
        expect(points.map((p) => [p.messageId, p.prompt, [...p.paths].sort()])).toEqual([
          [second.messageId, "edit a", ["a.txt", "b.txt"]],
          [third.messageId, "edit a and b", ["a.txt", "b.txt"]],
        ])
        const preview = yield* previewRewindByFork({ sessionId, messageId: second.messageId })
        expect(preview.canApply).toBe(true)
        expect(preview.files.map((f) => [f.path, f.action])).toEqual([
          ["a.txt", "restored"],
          ["b.txt", "restored"],
        ])
        expect(env.files()).toEqual({ "a.txt": "a2\n", "b.txt": "b2\n", "c.txt": "c1\n" })
        const sessionsBefore = yield* sessionCount

        const result = yield* confirm(sessionId, second.messageId, preview.token!)
        expect(result.prompt).toBe("edit a")
        expect(env.files()).toEqual({ "a.txt": "a0\n", "b.txt": "b0\n", "c.txt": "c1\n" })
        expect(yield* sessionCount).toBe(sessionsBefore + 1)
        const child = yield* loadSession(result.childSessionId)
        const copied = branchView(child).messageIds.map((m) => child.messages.get(m)!.forkOrigin?.messageId)
        const parent = yield* loadSession(sessionId)
        const firstTurn = activeBranch(parent).filter((m) => parent.messages.get(m)!.turnId === first.turnId)
        expect(copied.filter((m) => m !== undefined)).toEqual(firstTurn)
        expect(transcript(child).some((line) => line.parts.some((p) => p.text === "edit a"))).toBe(false)

        // The parent recorded the restore; its redo brings the files back.
        const undone = yield* redo(sessionId)
        expect(undone.redoneOperationId).toBe(result.operationId)
        expect(env.files()).toEqual({ "a.txt": "a2\n", "b.txt": "b2\n", "c.txt": "c1\n" })
      }).pipe(Effect.provide(withRestore(env)))
    },
  )

  it.effect("cancel forks nothing and restores nothing, and spends the token", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, second } = yield* threeTurns(env)
      const preview = yield* previewRewindByFork({ sessionId, messageId: second.messageId })
      const before = env.files()
      yield* cancelRewindByFork({ sessionId, messageId: second.messageId, token: preview.token! })
      expect(env.files()).toEqual(before)
      expect(yield* sessionCount).toBe(1)
      yield* expectRefusal(confirm(sessionId, second.messageId, preview.token!), "token_used")
      expect(yield* sessionCount).toBe(1)
    }).pipe(Effect.provide(withRestore(env)))
  })

  it.effect("stale, used, foreign and forged tokens are refused before anything happens", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, second, third } = yield* threeTurns(env)
      const other = yield* newSession
      const preview = yield* previewRewindByFork({ sessionId, messageId: second.messageId })
      const token = preview.token!
      const before = env.files()
      // Foreign: another session, another message; forged: never issued.
      yield* expectRefusal(confirm(other, second.messageId, token), "token_invalid")
      yield* expectRefusal(confirm(sessionId, third.messageId, token), "token_invalid")
      yield* expectRefusal(confirm(sessionId, second.messageId, "rwt1.not-a-real-token"), "token_invalid")
      expect(env.files()).toEqual(before)
      // Used: the first confirm spends it.
      yield* confirm(sessionId, second.messageId, token)
      expect(env.files()).not.toEqual(before)
      yield* expectRefusal(confirm(sessionId, second.messageId, token, "r2"), "token_used")
      // Stale: five minutes after its preview (the parent's redo first puts the files back).
      yield* redo(sessionId)
      const late = yield* previewRewindByFork({ sessionId, messageId: third.messageId })
      yield* TestClock.adjust("5 minutes")
      const sessions = yield* sessionCount
      const files = env.files()
      expect(late.canApply).toBe(true)
      yield* expectRefusal(confirm(sessionId, third.messageId, late.token!, "r3"), "token_expired")
      expect(yield* sessionCount).toBe(sessions)
      expect(env.files()).toEqual(files)
    }).pipe(Effect.provide(withRestore(env)))
  })

  it.effect(
    "an unsafe preview issues no token; a change after the preview refuses after the fork, writing nothing",
    () => {
      const env = makeEnv()
      return Effect.gen(function* () {
        const { sessionId, second } = yield* threeTurns(env)
        env.fs.writeFile("/home/dev/project/a.txt", "a person was here\n")
        const unsafe = yield* previewRewindByFork({ sessionId, messageId: second.messageId })
        expect(unsafe.canApply).toBe(false)
        expect(unsafe.token).toBeUndefined()
        expect(unsafe.unsafe.map((u) => [u.path, u.reason])).toEqual([["a.txt", "external_modified"]])

        env.fs.writeFile("/home/dev/project/a.txt", "a2\n")
        const preview = yield* previewRewindByFork({ sessionId, messageId: second.messageId })
        env.fs.writeFile("/home/dev/project/b.txt", "changed between preview and confirm\n")
        const before = env.files()
        const refusal = yield* expectRefusal(
          confirm(sessionId, second.messageId, preview.token!),
          "unsafe_files",
        )
        expect(env.files()).toEqual(before)
        // The fork came first (the UI order); the refusal names the child, which holds the conversation only.
        const childId = (refusal.details as { childSessionId: SessionId }).childSessionId
        expect((yield* loadSession(childId)).session?.parentId).toBe(sessionId)
        expect(yield* (yield* OperationJournal).all()).toEqual([])
      }).pipe(Effect.provide(withRestore(env)))
    },
  )

  it.effect("the ignore rules are checked again: a path now ignored is not restored", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, second } = yield* threeTurns(env)
      const preview = yield* previewRewindByFork({ sessionId, messageId: second.messageId })
      expect(preview.canApply).toBe(true)
      env.fs.writeFile("/home/dev/project/.rewindignore", "b.txt\n")
      const before = env.files()
      const refusal = yield* expectRefusal(
        confirm(sessionId, second.messageId, preview.token!),
        "unsafe_files",
      )
      expect(refusal.message).toContain("b.txt (ignored)")
      expect(env.files()).toEqual(before)
      const again = yield* previewRewindByFork({ sessionId, messageId: second.messageId })
      expect(again.unsafe.map((u) => [u.path, u.reason])).toEqual([["b.txt", "ignored"]])
      expect(again.token).toBeUndefined()
    }).pipe(Effect.provide(withRestore(env)))
  })

  it.effect("refuses targets that are not rewind points", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, first, second } = yield* threeTurns(env)
      const replyId = branchView(yield* loadSession(sessionId)).messageIds.find(
        (m) => m !== first.messageId && m !== second.messageId,
      )!
      yield* expectRefusal(previewRewindByFork({ sessionId, messageId: first.messageId }), "invalid_input")
      yield* expectRefusal(previewRewindByFork({ sessionId, messageId: replyId }), "not_a_user_message")
    }).pipe(Effect.provide(withRestore(env)))
  })
})
