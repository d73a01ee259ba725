import { describe, expect, it } from "@effect/vitest"
import { MemoryTaskRegistry } from "@rewind/adapter-memory"
import { StoreError, type TaskId, UnrecoverableRewindError } from "@rewind/contracts"
import {
  branchView,
  hashContent,
  loadSession,
  rewindCascade,
  rewindToCheckpoint,
  rewindToMessageCheckpoint,
  SessionStore,
  startBackgroundTask,
  Workspace,
  type WorkspaceService,
} from "@rewind/core"
import { expectRefusal } from "@rewind/testkit"
import { Effect } from "effect"
import { agentWrite, makeEnv, newSession, OUTSIDE, reply, userTurn } from "../support/fileRewindEnv.js"

const eventsOf = (sessionId: Parameters<typeof loadSession>[0]) =>
  Effect.flatMap(SessionStore, (s) => s.read(sessionId)).pipe(Effect.map((es) => es.map((e) => e.event)))

describe("direct restore", () => {
  it.effect("a created file is deleted by its rewind, and the model is told", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const { turnId } = yield* userTurn(sessionId, "create")
      const c = yield* agentWrite(env, sessionId, turnId, "src/new.ts", "export {}\n")
      yield* reply(sessionId, turnId)
      expect(env.text("src/new.ts")).toBe("export {}\n")

      const result = yield* rewindToCheckpoint({ sessionId, checkpointId: c.checkpointId })
      expect(result.files).toEqual([{ path: "src/new.ts", action: "deleted" }])
      expect(env.text("src/new.ts")).toBeUndefined()

      const state = yield* loadSession(sessionId)
      expect(state.spentCheckpointIds.has(c.checkpointId)).toBe(true)
      const events = yield* eventsOf(sessionId)
      const rewound = events.find((e) => e._tag === "WorkspaceRewound")
      expect(rewound).toMatchObject({ outcome: "applied", checkpointIds: [c.checkpointId] })
      // The notice: a model-only message with a notice part naming the file, on the active branch.
      const noticeId = branchView(state).messageIds.at(-1)!
      expect(state.messages.get(noticeId)).toMatchObject({ role: "system", visibility: "model_only", turnId })
      const part = state.parts.get(noticeId)![0]!
      expect(part.kind).toBe("notice")
      expect(part.text).toContain("src/new.ts (deleted)")
      expect(part.data).toMatchObject({
        kind: "files_restored",
        files: [{ path: "src/new.ts", action: "deleted" }],
      })
      expect(branchView(state).modelHistory).toContain(noticeId)
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("puts back the before-content whatever the file holds now, keeping its mode", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      env.fs.writeFile("/home/dev/project/run.sh", "#!/bin/sh\necho 1\n", 0o755)
      const sessionId = yield* newSession
      const { turnId } = yield* userTurn(sessionId, "edit")
      const c = yield* agentWrite(env, sessionId, turnId, "run.sh", "#!/bin/sh\necho 2\n")
      env.fs.writeFile("/home/dev/project/run.sh", "someone else\n", 0o755)
      const result = yield* rewindToCheckpoint({ sessionId, checkpointId: c.checkpointId })
      expect(result.files).toEqual([{ path: "run.sh", action: "restored" }])
      expect(env.text("run.sh")).toBe("#!/bin/sh\necho 1\n")
      const node = env.fs.node("/home/dev/project/run.sh")
      expect(node?.kind === "file" && node.mode).toBe(0o755)
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("rewindToMessageCheckpoint restores the latest live checkpoint tied to that user message", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const t1 = yield* userTurn(sessionId, "one")
      yield* agentWrite(env, sessionId, t1.turnId, "a.txt", "v1\n")
      yield* agentWrite(env, sessionId, t1.turnId, "a.txt", "v2\n")
      yield* reply(sessionId, t1.turnId)
      const t2 = yield* userTurn(sessionId, "two")
      yield* agentWrite(env, sessionId, t2.turnId, "b.txt", "b\n")

      yield* rewindToMessageCheckpoint({ sessionId, messageId: t1.messageId })
      expect(env.files()).toEqual({ "a.txt": "v1\n", "b.txt": "b\n" })
      // That checkpoint is spent; the next call peels the one before it.
      yield* rewindToMessageCheckpoint({ sessionId, messageId: t1.messageId })
      expect(env.files()).toEqual({ "b.txt": "b\n" })
      yield* expectRefusal(rewindToMessageCheckpoint({ sessionId, messageId: t1.messageId }), "no_checkpoint")
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("refuses an unknown checkpoint and a message with nothing to restore", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const t1 = yield* userTurn(sessionId, "one")
      yield* reply(sessionId, t1.turnId)
      yield* expectRefusal(rewindToCheckpoint({ sessionId, checkpointId: "ckpt_nope" as never }), "not_found")
      yield* expectRefusal(rewindToMessageCheckpoint({ sessionId, messageId: t1.messageId }), "no_checkpoint")
      yield* expectRefusal(
        rewindCascade({ sessionId, messageId: t1.messageId, scope: "workspace" }),
        "no_checkpoint",
      )
    }).pipe(Effect.provide(env.layer()))
  })
})

/** Records each write the workspace receives, in order. */
const spyOnWrites = (inner: WorkspaceService) => {
  const log: Array<string> = []
  const service: WorkspaceService = {
    ...inner,
    write: (path, content, options) =>
      Effect.tap(inner.write(path, content, options), () =>
        log.push(`${path}=${new TextDecoder().decode(content).trim()}`),
      ),
    delete: (path) => Effect.tap(inner.delete(path), () => log.push(`${path}=<deleted>`)),
  }
  return { service, log }
}

describe("cascade", () => {
  it.effect("peels several edits of one file back to the oldest before-content, writing it once", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const t1 = yield* userTurn(sessionId, "one")
      yield* agentWrite(env, sessionId, t1.turnId, "a.txt", "v1\n")
      yield* reply(sessionId, t1.turnId)
      const t2 = yield* userTurn(sessionId, "two")
      yield* agentWrite(env, sessionId, t2.turnId, "a.txt", "v2\n")
      yield* agentWrite(env, sessionId, t2.turnId, "b.txt", "b\n")
      yield* reply(sessionId, t2.turnId)
      const t3 = yield* userTurn(sessionId, "three")
      yield* agentWrite(env, sessionId, t3.turnId, "a.txt", "v3\n")

      const spy = spyOnWrites(yield* Workspace)
      const result = yield* rewindCascade({ sessionId, messageId: t2.messageId, scope: "workspace" }).pipe(
        Effect.provideService(Workspace, spy.service),
      )
      // Written once, with its final content: a crash can never leave a.txt at v2 (neither the
      // rescue nor the planned version, so recovery could neither continue nor roll back).
      // Deletions run before the writes that put content back (journaledWrites.ts).
      expect(spy.log).toEqual(["b.txt=<deleted>", "a.txt=v1"])
      expect(env.files()).toEqual({ "a.txt": "v1\n" })
      expect(result.files).toEqual([
        { path: "a.txt", action: "restored" },
        { path: "b.txt", action: "deleted" },
      ])
      expect(result.checkpointIds).toHaveLength(3)
      // Conversation untouched by a workspace-only cascade.
      expect((yield* loadSession(sessionId)).cursor).toBeUndefined()
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("refuses the whole when any snapshot is missing or corrupt, writing nothing", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const { turnId, messageId } = yield* userTurn(sessionId, "edit")
      env.fs.writeFile("/home/dev/project/a.txt", "a0\n")
      env.fs.writeFile("/home/dev/project/b.txt", "b0\n")
      yield* agentWrite(env, sessionId, turnId, "a.txt", "a1\n")
      yield* agentWrite(env, sessionId, turnId, "b.txt", "b1\n")
      const before = env.files()

      const blob = env.artifactData.blobs.get(hashContent("a0\n"))!
      blob.bytes = new TextEncoder().encode("a9\n")
      const refusal = yield* expectRefusal(
        rewindCascade({ sessionId, messageId, scope: "workspace" }),
        "unavailable",
      )
      expect(refusal.message).toContain("corrupt")
      expect(env.files()).toEqual(before)

      env.artifactData.blobs.delete(hashContent("a0\n"))
      yield* expectRefusal(rewindCascade({ sessionId, messageId, scope: "workspace" }), "unavailable")
      expect(env.files()).toEqual(before)

      const events = yield* eventsOf(sessionId)
      const failures = events.filter((e) => e._tag === "WorkspaceRewound" && e.outcome === "unavailable")
      expect(failures).toHaveLength(2)
      expect((yield* loadSession(sessionId)).spentCheckpointIds.size).toBe(0)
    }).pipe(Effect.provide(env.layer()))
  })

  for (const timing of ["before", "after"] as const) {
    it.effect(`a failure at write N restores writes 1..N-1, for every N (fault ${timing} the write)`, () =>
      Effect.gen(function* () {
        for (let n = 1; n <= 5; n++) {
          const env = makeEnv()
          yield* Effect.gen(function* () {
            const sessionId = yield* newSession
            const { turnId, messageId } = yield* userTurn(sessionId, "five files")
            env.fs.writeFile("/home/dev/project/keep.txt", "keep\n")
            env.fs.writeFile("/home/dev/project/e.txt", "e0\n")
            for (const name of ["a", "b", "c", "d"]) {
              env.fs.writeFile(`/home/dev/project/${name}.txt`, `${name}0\n`)
              yield* agentWrite(env, sessionId, turnId, `${name}.txt`, `${name}1\n`)
            }
            yield* agentWrite(env, sessionId, turnId, "e.txt", null)
            const before = env.files()

            // Five restores, all writes (newest first: e, d, c, b, a); the Nth one fails.
            env.workspace.control.inject({ operation: "write", nth: n, timing })
            const refusal = yield* expectRefusal(
              rewindCascade({ sessionId, messageId, scope: "workspace" }),
              "unavailable",
            )
            expect(env.workspace.control.injected(), `N=${n}`).toBe(1)
            // N writes attempted, then the journal put back each file that changed (N-1, or N
            // when the failed write had in fact happened): e.txt by a delete, the others by writes.
            const calls = env.workspace.control.calls("write") + env.workspace.control.calls("delete")
            expect(calls, `N=${n}`).toBe(timing === "before" ? 2 * n - 1 : 2 * n)
            expect(refusal.message).toContain("put back")
            expect(env.files(), `N=${n}`).toEqual(before)
            const state = yield* loadSession(sessionId)
            expect(state.spentCheckpointIds.size).toBe(0)
            env.workspace.control.clear()
          }).pipe(Effect.provide(env.layer()))
        }
      }),
    )
  }

  it.effect("compensation that fails too raises UnrecoverableRewindError naming every file", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const { turnId, messageId } = yield* userTurn(sessionId, "three files")
      env.fs.writeFile("/home/dev/project/a.txt", "a0\n")
      env.fs.writeFile("/home/dev/project/b.txt", "b0\n")
      yield* agentWrite(env, sessionId, turnId, "a.txt", "a1\n")
      yield* agentWrite(env, sessionId, turnId, "b.txt", "b1\n")
      yield* agentWrite(env, sessionId, turnId, "c.txt", "c1\n")
      // Newest first: c (deleted), b, a. The delete of c works, b fails, and c cannot be put back.
      env.workspace.control.inject({ operation: "write", target: "b.txt", nth: 1 })
      env.workspace.control.inject({ operation: "write", target: "c.txt", persistent: true })
      const error = yield* Effect.flip(rewindCascade({ sessionId, messageId, scope: "workspace" }))
      expect(error).toBeInstanceOf(UnrecoverableRewindError)
      if (!(error instanceof UnrecoverableRewindError)) return
      expect(error.files.map((f) => [f.path, f.state])).toEqual([
        ["c.txt", "unknown"],
        ["b.txt", "restored"],
        ["a.txt", "untouched"],
      ])
      expect(error.files[0]!.detail).toContain(hashContent("c1\n"))
      expect(env.files()).toEqual({ "a.txt": "a1\n", "b.txt": "b1\n" })
      const events = yield* eventsOf(sessionId)
      expect(events.at(-1)).toMatchObject({ _tag: "WorkspaceRewound", outcome: "unavailable" })
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("both: files first, then the cursor in the same commit, the notice on the new branch", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const t1 = yield* userTurn(sessionId, "one")
      yield* agentWrite(env, sessionId, t1.turnId, "a.txt", "v1\n")
      const r1 = yield* reply(sessionId, t1.turnId)
      const t2 = yield* userTurn(sessionId, "two")
      yield* agentWrite(env, sessionId, t2.turnId, "a.txt", "v2\n")
      yield* reply(sessionId, t2.turnId)

      const result = yield* rewindCascade({ sessionId, messageId: t2.messageId, scope: "both" })
      expect(env.files()).toEqual({ "a.txt": "v1\n" })
      expect(result.conversation?.targetMessageId).toBe(t2.messageId)
      const state = yield* loadSession(sessionId)
      expect(state.cursor?.scope).toBe("both")
      const branch = branchView(state).messageIds
      expect(branch.slice(0, 2)).toEqual([t1.messageId, r1.messageId])
      expect(branch).toHaveLength(3)
      expect(state.parts.get(branch[2]!)![0]!.kind).toBe("notice")
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("both: a cursor that cannot be committed puts the files back", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const t1 = yield* userTurn(sessionId, "one")
      yield* agentWrite(env, sessionId, t1.turnId, "a.txt", "v1\n")
      yield* reply(sessionId, t1.turnId)
      const { taskId } = yield* startBackgroundTask(sessionId, t1.turnId, "dev server", "task_1" as TaskId)
      const registry = yield* MemoryTaskRegistry
      registry.register(taskId, { refuseToStop: true })
      const before = env.files()

      yield* expectRefusal(
        rewindCascade({ sessionId, messageId: t1.messageId, scope: "both" }),
        "task_not_stopped",
      )
      expect(env.files()).toEqual(before)
      const state = yield* loadSession(sessionId)
      expect(state.cursor).toBeUndefined()
      expect(state.spentCheckpointIds.size).toBe(0)
      const events = yield* eventsOf(sessionId)
      expect(events.at(-1)).toMatchObject({ _tag: "WorkspaceRewound", outcome: "unavailable", scope: "both" })
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("a restore the session store will not record is undone", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const { turnId } = yield* userTurn(sessionId, "one")
      env.fs.writeFile("/home/dev/project/a.txt", "a0\n")
      const c = yield* agentWrite(env, sessionId, turnId, "a.txt", "a1\n")
      const inner = yield* SessionStore
      const broken = {
        ...inner,
        append: () => Effect.fail(new StoreError({ operation: "append", message: "disk full" })),
      }
      const error = yield* Effect.flip(
        rewindToCheckpoint({ sessionId, checkpointId: c.checkpointId }).pipe(
          Effect.provideService(SessionStore, broken),
        ),
      )
      expect(error).toMatchObject({ _tag: "StoreError", message: "disk full" })
      expect(env.files()).toEqual({ "a.txt": "a1\n" })
      expect((yield* loadSession(sessionId)).spentCheckpointIds.size).toBe(0)
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("conversation scope moves only the cursor", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const t1 = yield* userTurn(sessionId, "one")
      yield* agentWrite(env, sessionId, t1.turnId, "a.txt", "v1\n")
      const result = yield* rewindCascade({ sessionId, messageId: t1.messageId, scope: "conversation" })
      expect(result.files).toEqual([])
      expect(env.files()).toEqual({ "a.txt": "v1\n" })
      expect((yield* loadSession(sessionId)).cursor?.targetMessageId).toBe(t1.messageId)
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("a checkpoint naming a path through a symlink out of the root never reaches outside", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      env.fs.symlink("/home/dev/project/link", OUTSIDE)
      env.fs.symlink("/home/dev/project/rel", "../outside")
      const sessionId = yield* newSession
      const { turnId, messageId } = yield* userTurn(sessionId, "evil")
      yield* agentWrite(env, sessionId, turnId, "a.txt", "a1\n")
      const { recordFileMutation } = yield* Effect.promise(() => import("@rewind/core"))
      const { injectCheckpoint } = yield* Effect.promise(() => import("@rewind/testkit"))
      for (const path of ["link/secret.txt", "rel/new.txt"]) {
        // Refused at the door now (it could never be written back)...
        const r = yield* recordFileMutation({
          sessionId,
          turnId,
          path,
          toolName: "Write",
          before: "x",
          after: "y",
        })
        expect(r.recorded).toBe(false)
        // ...but a record already in the store is data: restoring it must never reach outside.
        yield* injectCheckpoint({ sessionId, turnId, path, before: "x", after: "y" })
      }
      const outsideBefore = JSON.stringify(env.fs.describe(OUTSIDE))
      const before = env.files()
      env.fs.accesses.length = 0
      yield* expectRefusal(rewindCascade({ sessionId, messageId, scope: "workspace" }), "unavailable")
      const state = yield* loadSession(sessionId)
      for (const c of state.checkpoints.filter((c) => c.path !== "a.txt")) {
        yield* expectRefusal(rewindToCheckpoint({ sessionId, checkpointId: c.checkpointId }), "unavailable")
      }
      expect(env.files()).toEqual(before)
      expect(JSON.stringify(env.fs.describe(OUTSIDE))).toBe(outsideBefore)
      expect(env.outsideAccesses()).toEqual([])
    }).pipe(Effect.provide(env.layer()))
  })
})
