import { describe, expect, it } from "@effect/vitest"
import { Checkpoint, CheckpointCreated, type CheckpointId, type ContentHash } from "@rewind/contracts"
import {
  ArtifactStore,
  appendDecided,
  applyFileRewind,
  FileRewindSettings,
  getTurnFileChanges,
  hashContent,
  loadSession,
  previewFileRewind,
  rewindCascade,
  SessionStore,
  toBytes,
} from "@rewind/core"
import { expectRefusal } from "@rewind/testkit"
import { Effect, Schema } from "effect"
import { agentWrite, makeEnv, newSession, ROOT, reply, userTurn } from "../support/fileRewindEnv.js"

describe("preview, then apply", () => {
  it.effect("undoes a turn: simulated newest to oldest, applied with FileRewindApplied", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      env.fs.writeFile("/home/dev/project/a.txt", "a0\n")
      const sessionId = yield* newSession
      const t1 = yield* userTurn(sessionId, "one")
      yield* agentWrite(env, sessionId, t1.turnId, "a.txt", "a1\n")
      yield* agentWrite(env, sessionId, t1.turnId, "new.txt", "n\n")
      yield* agentWrite(env, sessionId, t1.turnId, "a.txt", "a2\n")
      yield* reply(sessionId, t1.turnId)

      const preview = yield* previewFileRewind({ sessionId, turnId: t1.turnId })
      expect(preview.canApply).toBe(true)
      expect(preview.unsafe).toEqual([])
      expect(preview.files.map((f) => [f.path, f.action, f.currentHash, f.targetHash])).toEqual([
        ["a.txt", "restored", hashContent("a2\n"), hashContent("a0\n")],
        ["new.txt", "deleted", hashContent("n\n"), null],
      ])
      expect(preview.files[0]!.checkpointIds).toHaveLength(2)
      expect(env.files()).toEqual({ "a.txt": "a2\n", "new.txt": "n\n" })

      const applied = yield* applyFileRewind(preview)
      expect(applied.files).toEqual([
        { path: "a.txt", action: "restored" },
        { path: "new.txt", action: "deleted" },
      ])
      expect(env.files()).toEqual({ "a.txt": "a0\n" })
      const events = (yield* Effect.flatMap(SessionStore, (s) => s.read(sessionId))).map((e) => e.event)
      expect(events.find((e) => e._tag === "FileRewindApplied")).toMatchObject({
        checkpointIds: preview.checkpointIds,
      })
      // The same preview cannot be applied twice: its token is spent.
      yield* expectRefusal(applyFileRewind(preview), "token_used")
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("an external modification blocks apply, and nothing is written", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const t1 = yield* userTurn(sessionId, "one")
      yield* agentWrite(env, sessionId, t1.turnId, "a.txt", "agent\n")
      yield* agentWrite(env, sessionId, t1.turnId, "b.txt", "b\n")
      env.fs.writeFile("/home/dev/project/a.txt", "human edit\n")
      const before = env.files()

      const preview = yield* previewFileRewind({ sessionId, turnId: t1.turnId })
      expect(preview.canApply).toBe(false)
      expect(preview.unsafe).toEqual([
        expect.objectContaining({
          path: "a.txt",
          reason: "external_modified",
          currentHash: hashContent("human edit\n"),
          expectedHash: hashContent("agent\n"),
        }),
      ])
      const refusal = yield* expectRefusal(applyFileRewind(preview), "unsafe_files")
      expect(refusal.message).toContain("a.txt")
      // Even a preview doctored to claim it is safe is re-checked against the files.
      yield* expectRefusal(applyFileRewind({ ...preview, unsafe: [], canApply: true }), "unsafe_files")
      expect(env.files()).toEqual(before)
      expect((yield* loadSession(sessionId)).spentCheckpointIds.size).toBe(0)
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("apply re-checks hashes: a change after the preview refuses, writing nothing", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const t1 = yield* userTurn(sessionId, "one")
      yield* agentWrite(env, sessionId, t1.turnId, "a.txt", "agent\n")
      yield* agentWrite(env, sessionId, t1.turnId, "b.txt", "b\n")
      const preview = yield* previewFileRewind({ sessionId, turnId: t1.turnId })
      expect(preview.canApply).toBe(true)
      env.fs.writeFile("/home/dev/project/b.txt", "changed after preview\n")
      const before = env.files()
      yield* expectRefusal(applyFileRewind(preview), "unsafe_files")
      expect(env.files()).toEqual(before)
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("reports, and never writes, paths the ignore rules exclude (DESIGN §5: both ways)", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const t1 = yield* userTurn(sessionId, "one")
      yield* agentWrite(env, sessionId, t1.turnId, "src/main.ts", "main\n")
      const dist = yield* agentWrite(env, sessionId, t1.turnId, "dist/out.js", "built\n")
      const log = yield* agentWrite(env, sessionId, t1.turnId, "debug.log", "log\n")
      const secret = yield* agentWrite(env, sessionId, t1.turnId, "src/secret.ts", "s\n")
      // The rules arrive after the checkpoints were recorded (a checkpoint of an ignored path is
      // refused at recording time now); the preview applies the rules in force.
      env.fs.writeFile(`${ROOT}/.gitignore`, "dist/\n*.log\n")
      env.fs.writeFile(`${ROOT}/src/.rewindignore`, "secret.ts\n")
      const preview = yield* previewFileRewind({ sessionId, turnId: t1.turnId })
      expect(preview.ignored.map((i) => [i.checkpointId, i.path, i.reason])).toEqual([
        [secret.checkpointId, "src/secret.ts", "ignore_rule"],
        [log.checkpointId, "debug.log", "ignore_rule"],
        [dist.checkpointId, "dist/out.js", "ignore_rule"],
      ])
      expect(preview.files.map((f) => [f.path, f.action])).toEqual([["src/main.ts", "deleted"]])
      expect(preview.canApply).toBe(true)
      yield* applyFileRewind(preview)
      const files = env.files()
      expect(files["src/main.ts"]).toBeUndefined()
      expect([files["dist/out.js"], files["debug.log"], files["src/secret.ts"]]).toEqual([
        "built\n",
        "log\n",
        "s\n",
      ])
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("lists shell-like changes as ignored, by a configurable list", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const t1 = yield* userTurn(sessionId, "one")
      yield* agentWrite(env, sessionId, t1.turnId, "a.txt", "a\n")
      const shell = yield* agentWrite(env, sessionId, t1.turnId, "build.log", "log\n", "Bash")
      const preview = yield* previewFileRewind({ sessionId, turnId: t1.turnId })
      expect(preview.ignored).toEqual([
        { checkpointId: shell.checkpointId, path: "build.log", toolName: "Bash", reason: "shell_like_tool" },
      ])
      expect(preview.files.map((f) => f.path)).toEqual(["a.txt"])
      yield* applyFileRewind(preview)
      expect(env.files()).toEqual({ "build.log": "log\n" })
      // The shell change is still on offer in the table, and only it.
      expect((yield* getTurnFileChanges(sessionId))!.files.map((f) => [f.path, f.shellOnly])).toEqual([
        ["build.log", true],
      ])
      const custom = yield* previewFileRewind({ sessionId, turnId: t1.turnId }).pipe(
        Effect.provideService(FileRewindSettings, { shellLikeTools: [], maxPatchBytes: 1 << 20 }),
      )
      expect(custom.ignored).toEqual([])
      expect(custom.files.map((f) => [f.path, f.action])).toEqual([["build.log", "deleted"]])
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("the undo offer stays spent after a reopen", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const t1 = yield* userTurn(sessionId, "one")
      yield* agentWrite(env, sessionId, t1.turnId, "a.txt", "a\n")
      yield* applyFileRewind(yield* previewFileRewind({ sessionId, turnId: t1.turnId }))
      const reopened = env.layer()
      yield* expectRefusal(previewFileRewind({ sessionId, turnId: t1.turnId }), "nothing_to_undo").pipe(
        Effect.provide(reopened),
      )
      const table = yield* getTurnFileChanges(sessionId).pipe(Effect.provide(reopened))
      expect(table!.files).toEqual([])
      yield* expectRefusal(previewFileRewind({ sessionId, messageId: t1.messageId }), "no_checkpoint").pipe(
        Effect.provide(reopened),
      )
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("by message, covers every turn from that message on", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const t1 = yield* userTurn(sessionId, "one")
      yield* agentWrite(env, sessionId, t1.turnId, "a.txt", "a1\n")
      yield* reply(sessionId, t1.turnId)
      const t2 = yield* userTurn(sessionId, "two")
      yield* agentWrite(env, sessionId, t2.turnId, "a.txt", "a2\n")
      yield* reply(sessionId, t2.turnId)
      const t3 = yield* userTurn(sessionId, "three")
      yield* agentWrite(env, sessionId, t3.turnId, "b.txt", "b3\n")
      const preview = yield* previewFileRewind({ sessionId, messageId: t2.messageId })
      expect(preview.selection).toEqual({ _tag: "message", messageId: t2.messageId })
      expect(preview.checkpointIds).toHaveLength(2)
      yield* applyFileRewind(preview)
      expect(env.files()).toEqual({ "a.txt": "a1\n" })
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("a failure at write N during apply restores 1..N-1, for every N", () =>
    Effect.gen(function* () {
      for (let n = 1; n <= 4; n++) {
        const env = makeEnv()
        yield* Effect.gen(function* () {
          const sessionId = yield* newSession
          const t1 = yield* userTurn(sessionId, "four files")
          for (const name of ["a", "b", "c", "d"]) {
            env.fs.writeFile(`/home/dev/project/${name}.txt`, `${name}0\n`)
            yield* agentWrite(env, sessionId, t1.turnId, `${name}.txt`, `${name}1\n`)
          }
          const preview = yield* previewFileRewind({ sessionId, turnId: t1.turnId })
          const before = env.files()
          env.workspace.control.inject({ operation: "write", nth: n })
          yield* expectRefusal(applyFileRewind(preview), "unavailable")
          expect(env.files(), `N=${n}`).toEqual(before)
          env.workspace.control.clear()
          expect((yield* loadSession(sessionId)).spentCheckpointIds.size).toBe(0)
          // Nothing is lost: once the fault is gone, a new preview (the token was spent) applies.
          yield* applyFileRewind(yield* previewFileRewind({ sessionId, turnId: t1.turnId }))
          expect(env.files()).toEqual({ "a.txt": "a0\n", "b.txt": "b0\n", "c.txt": "c0\n", "d.txt": "d0\n" })
        }).pipe(Effect.provide(env.layer()))
      }
    }),
  )

  it.effect("unreadable snapshots and unreadable files are unsafe, never guessed", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      env.fs.writeFile("/home/dev/project/a.txt", "a0\n")
      const sessionId = yield* newSession
      const t1 = yield* userTurn(sessionId, "one")
      yield* agentWrite(env, sessionId, t1.turnId, "a.txt", "a1\n")
      yield* agentWrite(env, sessionId, t1.turnId, "b.txt", "b1\n")
      env.artifactData.blobs.delete(hashContent("a0\n"))
      env.workspace.control.inject({ operation: "read", target: "b.txt" })
      const preview = yield* previewFileRewind({ sessionId, turnId: t1.turnId })
      expect(preview.canApply).toBe(false)
      expect(preview.unsafe.map((u) => [u.path, u.reason])).toEqual([
        ["b.txt", "file_read_failed"],
        ["a.txt", "checkpoint_unreadable"],
      ])
    }).pipe(Effect.provide(env.layer()))
  })
})

/** Appends a checkpoint as an older Rewind wrote it: no after-content, only before + patch. */
const appendLegacyCheckpoint = (
  sessionId: Parameters<typeof loadSession>[0],
  fields: { turnId: string; anchor: string; path: string; before: string; patch: unknown },
) =>
  Effect.gen(function* () {
    const artifacts = yield* ArtifactStore
    const beforeHash = yield* artifacts.put(toBytes(fields.before))
    const patchHash = yield* artifacts.put(toBytes(JSON.stringify(fields.patch)))
    const checkpoint = Schema.decodeUnknownSync(Checkpoint)({
      checkpointId: "ckpt_legacy",
      turnId: fields.turnId,
      anchorMessageId: fields.anchor,
      toolName: "Edit",
      path: fields.path,
      before: { _tag: "present", hash: beforeHash },
      patchHash,
      linesAdded: 1,
      linesRemoved: 1,
    })
    const state = yield* loadSession(sessionId)
    yield* appendDecided(state, sessionId, [new CheckpointCreated({ checkpoint })])
    return checkpoint.checkpointId as CheckpointId
  })

const patchOf = (oldLine: string, newLine: string) => ({
  oldFileName: "a.txt",
  newFileName: "a.txt",
  hunks: [
    { oldStart: 1, oldLines: 2, newStart: 1, newLines: 2, lines: [" keep", `-${oldLine}`, `+${newLine}`] },
  ],
})

describe("snapshots the store cannot hand back", () => {
  it.effect("a blob the store reports missing or corrupt makes its file unsafe and a cascade refuse", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      env.fs.writeFile("/home/dev/project/a.txt", "a0\n")
      env.fs.writeFile("/home/dev/project/b.txt", "b0\n")
      const sessionId = yield* newSession
      const t1 = yield* userTurn(sessionId, "one")
      yield* agentWrite(env, sessionId, t1.turnId, "a.txt", "a1\n")
      yield* agentWrite(env, sessionId, t1.turnId, "b.txt", "b1\n")
      const before = env.files()
      env.artifacts.control.inject({
        operation: "get",
        target: hashContent("a0\n"),
        as: "corrupt",
        persistent: true,
      })
      env.artifacts.control.inject({
        operation: "get",
        target: hashContent("b1\n"),
        as: "missing",
        persistent: true,
      })
      const preview = yield* previewFileRewind({ sessionId, turnId: t1.turnId })
      expect(preview.unsafe.map((u) => [u.path, u.reason])).toEqual([
        ["b.txt", "checkpoint_unreadable"],
        ["a.txt", "checkpoint_unreadable"],
      ])
      expect(preview.unsafe[1]!.message).toContain("corrupt")
      const refusal = yield* expectRefusal(
        rewindCascade({ sessionId, messageId: t1.messageId, scope: "workspace" }),
        "unavailable",
      )
      expect(refusal.message).toContain("corrupt")
      expect(env.files()).toEqual(before)
    }).pipe(Effect.provide(env.layer()))
  })
})

describe("checkpoints without after-content", () => {
  it.effect("are rebuilt by replaying the patch with zero fuzz", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const t1 = yield* userTurn(sessionId, "legacy")
      env.fs.writeFile("/home/dev/project/a.txt", "keep\nnew\n")
      yield* appendLegacyCheckpoint(sessionId, {
        turnId: t1.turnId,
        anchor: t1.messageId,
        path: "a.txt",
        before: "keep\nold\n",
        patch: patchOf("old", "new"),
      })
      const preview = yield* previewFileRewind({ sessionId, turnId: t1.turnId })
      expect(preview.canApply).toBe(true)
      expect(preview.files[0]!.currentHash).toBe(hashContent("keep\nnew\n"))
      yield* applyFileRewind(preview)
      expect(env.files()).toEqual({ "a.txt": "keep\nold\n" })
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("are unsupported when the patch does not replay, and unreadable when it is gone", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const t1 = yield* userTurn(sessionId, "legacy")
      env.fs.writeFile("/home/dev/project/a.txt", "keep\nnew\n")
      yield* appendLegacyCheckpoint(sessionId, {
        turnId: t1.turnId,
        anchor: t1.messageId,
        path: "a.txt",
        before: "keep\nold\n",
        patch: patchOf("something else", "new"),
      })
      const preview = yield* previewFileRewind({ sessionId, turnId: t1.turnId })
      expect(preview.unsafe.map((u) => u.reason)).toEqual(["unsupported_checkpoint"])
      const patchHash = (yield* loadSession(sessionId)).checkpoints[0]!.patchHash as ContentHash
      env.artifactData.blobs.delete(patchHash)
      const again = yield* previewFileRewind({ sessionId, turnId: t1.turnId })
      expect(again.unsafe.map((u) => u.reason)).toEqual(["checkpoint_unreadable"])
      expect(env.files()).toEqual({ "a.txt": "keep\nnew\n" })
    }).pipe(Effect.provide(env.layer()))
  })
})
