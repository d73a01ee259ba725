import { describe, expect, it } from "@effect/vitest"
import { CheckpointCreated, TurnCompleted, type TurnId } from "@rewind/contracts"
import {
  ArtifactStore,
  FileRewindSettings,
  getTurnFileChanges,
  hashContent,
  loadSession,
  recordFileMutation,
  rewindToCheckpoint,
  SessionStore,
  StoredPatch,
} from "@rewind/core"
import { Effect, Schema } from "effect"
import { agentWrite, makeEnv, newSession, reply, userTurn } from "../support/fileRewindEnv.js"

const decode = (b: Uint8Array) => new TextDecoder().decode(b)

describe("recordFileMutation", () => {
  it.effect("stores before, after and a structured patch, anchored to the turn's user message", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const user = yield* userTurn(sessionId, "edit a.txt")
      const result = yield* recordFileMutation({
        sessionId,
        turnId: user.turnId,
        path: "src/a.txt",
        toolName: "Edit",
        before: "one\ntwo\n",
        after: "one\nTWO\nthree\n",
        beforeMode: 0o644,
      })
      expect(result.recorded).toBe(true)
      if (!result.recorded) return
      const c = result.checkpoint
      expect(c.anchorMessageId).toBe(user.messageId)
      expect(c.turnId).toBe(user.turnId)
      expect(c.path).toBe("src/a.txt")
      expect([c.linesAdded, c.linesRemoved]).toEqual([2, 1])
      expect(c.before).toEqual({ _tag: "present", hash: hashContent("one\ntwo\n"), mode: 0o644 })
      expect(c.after).toEqual({ _tag: "present", hash: hashContent("one\nTWO\nthree\n") })

      const artifacts = yield* ArtifactStore
      expect(decode(yield* artifacts.get(hashContent("one\ntwo\n")))).toBe("one\ntwo\n")
      expect(decode(yield* artifacts.get(hashContent("one\nTWO\nthree\n")))).toBe("one\nTWO\nthree\n")
      const patch = Schema.decodeUnknownSync(StoredPatch)(
        JSON.parse(decode(yield* artifacts.get(c.patchHash!))),
      )
      expect(patch.hunks[0]!.lines).toEqual([" one", "-two", "+TWO", "+three"])

      const events = yield* Effect.flatMap(SessionStore, (s) => s.read(sessionId))
      expect(events.at(-1)!.event).toBeInstanceOf(CheckpointCreated)
      expect((yield* loadSession(sessionId)).checkpoints).toEqual([c])
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("records a created file as absent before and a deleted one as absent after", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const { turnId } = yield* userTurn(sessionId, "create then delete")
      const created = yield* agentWrite(env, sessionId, turnId, "new.txt", "a\nb\n")
      const deleted = yield* agentWrite(env, sessionId, turnId, "new.txt", null)
      expect(created.before).toEqual({ _tag: "absent" })
      expect([created.linesAdded, created.linesRemoved]).toEqual([2, 0])
      expect(deleted.after).toEqual({ _tag: "absent" })
      expect([deleted.linesAdded, deleted.linesRemoved]).toEqual([0, 2])
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("keeps binary content exactly, without a patch", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const { turnId } = yield* userTurn(sessionId, "binary")
      const before = new Uint8Array([0xff, 0xfe, 0x00, 0x01])
      const after = new Uint8Array([0xff, 0xfe, 0x00, 0x02, 0x03])
      const result = yield* recordFileMutation({
        sessionId,
        turnId,
        path: "img.bin",
        toolName: "Write",
        before,
        after,
      })
      expect(result.recorded).toBe(true)
      if (!result.recorded) return
      expect(result.checkpoint.patchHash).toBeUndefined()
      expect(yield* Effect.flatMap(ArtifactStore, (a) => a.get(hashContent(after)))).toEqual(after)
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("answers bad input, no change and an unknown turn with a warning, never a failure", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const { turnId } = yield* userTurn(sessionId, "x")
      const base = { sessionId, turnId, toolName: "Write", before: "a", after: "b" }
      const cases = [
        [{ ...base, path: "../escape.txt" }, "invalid_input"],
        [{ ...base, path: "/etc/passwd" }, "invalid_input"],
        [{ ...base, path: "a\u0000b" }, "invalid_input"],
        [{ ...base, path: "a.txt", before: null, after: null }, "invalid_input"],
        [{ ...base, path: "a.txt", after: "a" }, "unchanged"],
        [{ ...base, path: "a.txt", turnId: "turn_missing" as TurnId }, "turn_not_found"],
        [{ ...base, path: "a.txt", sessionId: "ses_missing" as typeof sessionId }, "session_unavailable"],
      ] as const
      for (const [input, reason] of cases) {
        const result = yield* recordFileMutation(input)
        expect(result.recorded).toBe(false)
        if (!result.recorded) expect(result.warning.reason).toBe(reason)
      }
      expect((yield* loadSession(sessionId)).checkpoints).toEqual([])
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("when the content cannot be stored, it warns and makes no checkpoint", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const { turnId } = yield* userTurn(sessionId, "x")
      env.artifacts.control.inject({ operation: "put", nth: 2 })
      const result = yield* recordFileMutation({
        sessionId,
        turnId,
        path: "a.txt",
        toolName: "Write",
        before: "old",
        after: "new",
      })
      expect(result.recorded).toBe(false)
      if (!result.recorded) expect(result.warning.reason).toBe("content_not_stored")
      expect((yield* loadSession(sessionId)).checkpoints).toEqual([])
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("records parallel tool results of one turn (conflicting appends are retried)", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const { turnId } = yield* userTurn(sessionId, "x")
      const results = yield* Effect.all(
        Array.from({ length: 6 }, (_, i) =>
          recordFileMutation({
            sessionId,
            turnId,
            path: `f${i}.txt`,
            toolName: "Write",
            before: null,
            after: `${i}`,
          }),
        ),
        { concurrency: "unbounded" },
      )
      expect(results.every((r) => r.recorded)).toBe(true)
      expect((yield* loadSession(sessionId)).checkpoints.map((c) => c.path).sort()).toEqual([
        "f0.txt",
        "f1.txt",
        "f2.txt",
        "f3.txt",
        "f4.txt",
        "f5.txt",
      ])
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("retries when another writer appended first (a version conflict)", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const { turnId } = yield* userTurn(sessionId, "x")
      const inner = yield* SessionStore
      let interfered = false
      // A store on which someone else appends to the stream just before our first append.
      const racing = {
        ...inner,
        append: (request: Parameters<typeof inner.append>[0]) =>
          Effect.gen(function* () {
            if (!interfered) {
              interfered = true
              const version = yield* inner.version(request.sessionId)
              yield* inner.append({
                sessionId: request.sessionId,
                expectedVersion: version,
                events: [new TurnCompleted({ turnId, status: "completed" })],
                at: 0,
              })
            }
            return yield* inner.append(request)
          }),
      }
      const result = yield* recordFileMutation({
        sessionId,
        turnId,
        path: "a.txt",
        toolName: "Write",
        before: null,
        after: "a",
      }).pipe(Effect.provideService(SessionStore, racing))
      expect(interfered).toBe(true)
      expect(result.recorded).toBe(true)
      const state = yield* loadSession(sessionId)
      expect(state.checkpoints).toHaveLength(1)
      expect(state.turns.get(turnId)!.status).toBe("completed")
    }).pipe(Effect.provide(env.layer()))
  })
})

describe("this turn's changes", () => {
  it.effect(
    "lists each changed file with lines added and removed, rebuilt from events after a reopen",
    () => {
      const env = makeEnv()
      return Effect.gen(function* () {
        const sessionId = yield* newSession
        const t1 = yield* userTurn(sessionId, "one")
        yield* agentWrite(env, sessionId, t1.turnId, "a.txt", "1\n2\n")
        yield* reply(sessionId, t1.turnId)
        const t2 = yield* userTurn(sessionId, "two")
        yield* agentWrite(env, sessionId, t2.turnId, "a.txt", "1\nTWO\n3\n")
        const created = yield* agentWrite(env, sessionId, t2.turnId, "b.txt", "b\n")
        yield* agentWrite(env, sessionId, t2.turnId, "a.txt", "1\nTWO\n3\n4\n")
        yield* agentWrite(env, sessionId, t2.turnId, "log.txt", "x\n", "Bash")

        const table = (yield* getTurnFileChanges(sessionId))!
        expect(table.turnId).toBe(t2.turnId)
        expect(
          table.files.map((f) => [f.path, f.linesAdded, f.linesRemoved, f.created, f.shellOnly]),
        ).toEqual([
          ["a.txt", 3, 1, false, false],
          ["b.txt", 1, 0, true, false],
          ["log.txt", 1, 0, true, true],
        ])
        expect([table.linesAdded, table.linesRemoved]).toEqual([5, 1])
        expect((yield* getTurnFileChanges(sessionId, t1.turnId))!.files.map((f) => f.path)).toEqual(["a.txt"])

        // A reopen (fresh layers over the same stored data) derives the same table; an undone
        // checkpoint drops out of it.
        const reopened = yield* getTurnFileChanges(sessionId).pipe(Effect.provide(env.layer()))
        expect(reopened).toEqual(table)
        yield* rewindToCheckpoint({ sessionId, checkpointId: created.checkpointId })
        const after = (yield* getTurnFileChanges(sessionId).pipe(Effect.provide(env.layer())))!
        expect(after.files.map((f) => f.path)).toEqual(["a.txt", "log.txt"])
      }).pipe(Effect.provide(env.layer()))
    },
  )

  it.effect("marks shell-only rows by the configurable tool list", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const { turnId } = yield* userTurn(sessionId, "x")
      yield* agentWrite(env, sessionId, turnId, "a.txt", "a\n", "RunShell")
      const table = (yield* getTurnFileChanges(sessionId).pipe(
        Effect.provideService(FileRewindSettings, { shellLikeTools: ["runshell"], maxPatchBytes: 1024 }),
      ))!
      expect(table.files[0]!.shellOnly).toBe(true)
      expect((yield* getTurnFileChanges(sessionId))!.files[0]!.shellOnly).toBe(false)
    }).pipe(Effect.provide(env.layer()))
  })
})
