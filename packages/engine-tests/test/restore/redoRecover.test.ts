// Rescue points, redo and recovery of interrupted restores, on the memory adapters.
import { describe, expect, it } from "@effect/vitest"
import type { OperationId, WorkspacePath } from "@rewind/contracts"
import {
  ArtifactStore,
  activeBranch,
  applyFileRewind,
  editUserQuery,
  IdGenerator,
  loadSession,
  OperationJournal,
  previewFileRewind,
  recover,
  redo,
  resolveOperation,
  rewindCascade,
  rewindToCheckpoint,
  runDurableRestore,
  SessionStore,
} from "@rewind/core"
import { expectRefusal } from "@rewind/testkit"
import { Effect, Layer, Option } from "effect"
import { agentWrite, type Env, makeEnv, newSession, ROOT, reply, userTurn } from "../support/fileRewindEnv.js"

const encode = (s: string) => new TextEncoder().encode(s)

/** Two turns editing two files and creating a third; returns the first user message. */
const twoTurns = (env: Env) =>
  Effect.gen(function* () {
    env.fs.writeFile("/home/dev/project/a.txt", "a0\n")
    env.fs.writeFile("/home/dev/project/b.txt", "b0\n")
    const sessionId = yield* newSession
    const first = yield* userTurn(sessionId, "first")
    yield* agentWrite(env, sessionId, first.turnId, "a.txt", "a1\n")
    yield* agentWrite(env, sessionId, first.turnId, "c.txt", "c1\n")
    yield* reply(sessionId, first.turnId)
    const second = yield* userTurn(sessionId, "second")
    yield* agentWrite(env, sessionId, second.turnId, "a.txt", "a2\n")
    yield* agentWrite(env, sessionId, second.turnId, "b.txt", "b2\n")
    yield* reply(sessionId, second.turnId)
    return { sessionId, first, second }
  })

describe("rescue points and redo", () => {
  it.effect("a cascade of both, then redo: files and the active branch come back exactly", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, first } = yield* twoTurns(env)
      const filesBefore = env.files()
      const branchBefore = activeBranch(yield* loadSession(sessionId))

      const rewound = yield* rewindCascade({ sessionId, messageId: first.messageId, scope: "both" })
      expect(env.files()).toEqual({ "a.txt": "a0\n", "b.txt": "b0\n" })
      expect(activeBranch(yield* loadSession(sessionId)).length).toBeLessThan(branchBefore.length)

      // The rescue point: every touched file's content from before, stored by content.
      const journal = yield* OperationJournal
      const record = Option.getOrThrow(yield* journal.get(rewound.operationId!))
      expect(record.status).toBe("committed")
      expect(record.intent.files.map((f) => f.path).sort()).toEqual(["a.txt", "b.txt", "c.txt"])
      const artifacts = yield* ArtifactStore
      for (const f of record.intent.files) {
        expect(f.rescue._tag).toBe("present")
        if (f.rescue._tag === "present") {
          expect(new TextDecoder().decode(yield* artifacts.get(f.rescue.hash))).toBe(filesBefore[f.path])
        }
      }

      const redone = yield* redo(sessionId)
      expect(redone.redoneOperationId).toBe(rewound.operationId)
      expect(env.files()).toEqual(filesBefore)
      const after = yield* loadSession(sessionId)
      expect(activeBranch(after)).toEqual(branchBefore)
      expect(after.spentCheckpointIds.size).toBe(0)
      expect(redone.activeBranch).toEqual(branchBefore)
      // The redo entry is spent: there is nothing more to redo.
      yield* expectRefusal(redo(sessionId), "nothing_to_undo")
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect(
    "the redo entry holds the session's version, not its branch; the branch comes from the events",
    () => {
      const env = makeEnv()
      return Effect.gen(function* () {
        const { sessionId, first } = yield* twoTurns(env)
        const before = yield* loadSession(sessionId)
        const rewound = yield* rewindCascade({ sessionId, messageId: first.messageId, scope: "both" })
        const record = Option.getOrThrow(yield* (yield* OperationJournal).get(rewound.operationId!))
        expect(record.intent.redo?.branchAtVersion).toBe(before.version)
        expect(record.intent.redo?.activeBranch).toBeUndefined()
        // Later messages do not change what the redo brings back.
        yield* userTurn(sessionId, "after the rewind")
        const redone = yield* redo(sessionId)
        expect(redone.activeBranch).toEqual(activeBranch(before))
      }).pipe(Effect.provide(env.layer()))
    },
  )

  it.effect(
    "an entry that lists its branch (journaled before versions were recorded) brings that branch back",
    () => {
      const env = makeEnv()
      return Effect.gen(function* () {
        const { sessionId } = yield* twoTurns(env)
        const branch = activeBranch(yield* loadSession(sessionId))
        const operationId = (yield* (yield* IdGenerator).next("op")) as OperationId
        const restored = yield* runDurableRestore(
          {
            sessionId,
            operationId,
            kind: "direct_restore",
            writes: [{ path: "a.txt" as WorkspacePath, content: encode("A\n") }],
            redo: { activeBranch: branch.slice(0, 2), spentCheckpointIds: [] },
          },
          () => Effect.void,
        )
        expect(restored._tag).toBe("Applied")
        const redone = yield* redo(sessionId)
        expect(redone.activeBranch).toEqual(branch.slice(0, 2))
        expect(env.text("a.txt")).toBe("a2\n")
      }).pipe(Effect.provide(env.layer()))
    },
  )

  it.effect("redo refuses (conflict, nothing written) when a file changed since the rewind", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, second } = yield* twoTurns(env)
      yield* rewindCascade({ sessionId, messageId: second.messageId, scope: "workspace" })
      expect(env.files()).toEqual({ "a.txt": "a1\n", "b.txt": "b0\n", "c.txt": "c1\n" })
      env.fs.writeFile("/home/dev/project/b.txt", "someone else\n")
      const before = env.files()
      const refusal = yield* expectRefusal(redo(sessionId), "conflict")
      expect(refusal.details).toMatchObject({ changed: [{ path: "b.txt" }] })
      expect(env.files()).toEqual(before)
      // Putting the file back as the rewind left it makes the redo possible again.
      env.fs.writeFile("/home/dev/project/b.txt", "b0\n")
      yield* redo(sessionId)
      expect(env.files()).toEqual({ "a.txt": "a2\n", "b.txt": "b2\n", "c.txt": "c1\n" })
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("redo after preview/apply makes the undone checkpoints undoable again", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, second } = yield* twoTurns(env)
      const preview = yield* previewFileRewind({ sessionId, turnId: second.turnId })
      yield* applyFileRewind(preview)
      expect(env.files()).toEqual({ "a.txt": "a1\n", "b.txt": "b0\n", "c.txt": "c1\n" })
      yield* expectRefusal(previewFileRewind({ sessionId, turnId: second.turnId }), "nothing_to_undo")
      yield* redo(sessionId)
      expect(env.files()).toEqual({ "a.txt": "a2\n", "b.txt": "b2\n", "c.txt": "c1\n" })
      const again = yield* previewFileRewind({ sessionId, turnId: second.turnId })
      expect(again.canApply).toBe(true)
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("redo of a restore of an already undone checkpoint leaves it undone", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, first } = yield* twoTurns(env)
      yield* rewindCascade({ sessionId, messageId: first.messageId, scope: "workspace" })
      const spent = [...(yield* loadSession(sessionId)).spentCheckpointIds]
      expect(spent).toHaveLength(4)
      // Restoring one of those checkpoints again spends nothing new...
      yield* rewindToCheckpoint({ sessionId, checkpointId: spent[0]! })
      yield* redo(sessionId)
      // ...so its redo must not make it undoable: the cascade's undo still holds.
      expect([...(yield* loadSession(sessionId)).spentCheckpointIds].sort()).toEqual([...spent].sort())
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("two rewinds are redone newest first", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, first, second } = yield* twoTurns(env)
      const branch0 = activeBranch(yield* loadSession(sessionId))
      yield* rewindCascade({ sessionId, messageId: second.messageId, scope: "both" })
      const files1 = env.files()
      const branch1 = activeBranch(yield* loadSession(sessionId))
      yield* rewindCascade({ sessionId, messageId: first.messageId, scope: "both" })
      yield* redo(sessionId)
      expect(env.files()).toEqual(files1)
      expect(activeBranch(yield* loadSession(sessionId))).toEqual(branch1)
      yield* redo(sessionId)
      expect(env.files()).toEqual({ "a.txt": "a2\n", "b.txt": "b2\n", "c.txt": "c1\n" })
      expect(activeBranch(yield* loadSession(sessionId))).toEqual(branch0)
    }).pipe(Effect.provide(env.layer()))
  })
})

/** Starts a restore of a.txt and b.txt that "crashes" (dies) after its writes, before its commit. */
/** A durable restore of `writes` that dies after writing them, before its commit: its operation id. */
const interrupted = (
  sessionId: Parameters<typeof loadSession>[0],
  writes: ReadonlyArray<{ readonly path: string; readonly content: string | null }> = [
    { path: "a.txt", content: "A\n" },
    { path: "b.txt", content: null },
  ],
) =>
  Effect.gen(function* () {
    const operationId = (yield* (yield* IdGenerator).next("op")) as OperationId
    const exit = yield* Effect.exit(
      runDurableRestore(
        {
          sessionId,
          operationId,
          kind: "direct_restore",
          writes: writes.map((w) => ({
            path: w.path as WorkspacePath,
            content: w.content === null ? null : encode(w.content),
          })),
          redo: { activeBranch: [], spentCheckpointIds: [] },
        },
        () => Effect.dieMessage("crash"),
      ),
    )
    expect(exit._tag).toBe("Failure")
    return operationId
  })

describe("a durable restore given what the caller already read and stored", () => {
  const restoreA = (rescue: "as on disk" | "stale") =>
    Effect.gen(function* () {
      const env = makeEnv()
      env.fs.writeFile("/home/dev/project/a.txt", "a0\n")
      const sessionId = yield* newSession.pipe(Effect.provide(env.layer()))
      return yield* Effect.gen(function* () {
        const artifacts = yield* ArtifactStore
        const onDisk = yield* artifacts.put(encode("a0\n"))
        const stale = yield* artifacts.put(encode("older\n"))
        const planned = yield* artifacts.put(encode("A\n"))
        const operationId = (yield* (yield* IdGenerator).next("op")) as OperationId
        const puts = env.artifacts.control.calls("put")
        const reads = env.workspace.control.calls("read")
        const result = yield* runDurableRestore(
          {
            sessionId,
            operationId,
            kind: "point_restore",
            writes: [{ path: "a.txt" as WorkspacePath, content: encode("A\n"), storedHash: planned }],
            rescued: new Map([
              ["a.txt" as WorkspacePath, { _tag: "present", hash: rescue === "stale" ? stale : onDisk }],
            ]),
          },
          () => Effect.void,
        )
        const record = Option.getOrThrow(yield* (yield* OperationJournal).get(operationId))
        return {
          env,
          result,
          record,
          planned,
          onDisk,
          puts: env.artifacts.control.calls("put") - puts,
          // The journaled writer reads each file once, right before writing it.
          readsBeyondTheWriter: env.workspace.control.calls("read") - reads - 1,
        }
      }).pipe(Effect.provide(env.layer()))
    })

  it.effect("stores nothing again and reads nothing but the writer's own check", () =>
    Effect.gen(function* () {
      const { env, result, record, planned, onDisk, puts, readsBeyondTheWriter } =
        yield* restoreA("as on disk")
      expect(result._tag).toBe("Applied")
      expect(env.text("a.txt")).toBe("A\n")
      expect(puts).toBe(0)
      expect(readsBeyondTheWriter).toBe(0)
      expect(record.intent.files).toEqual([
        {
          path: "a.txt",
          rescue: { _tag: "present", hash: onDisk },
          planned: { _tag: "present", hash: planned },
        },
      ])
      expect(record.status).toBe("committed")
    }),
  )

  it.effect("refuses to write over a file that no longer holds the rescue version it was given", () =>
    Effect.gen(function* () {
      const { env, result, record } = yield* restoreA("stale")
      expect(result._tag).toBe("RolledBack")
      if (result._tag === "RolledBack") expect(result.message).toMatch(/changed after it was checked/)
      // The file the journal could not have put back is untouched.
      expect(env.text("a.txt")).toBe("a0\n")
      expect(record.status).toBe("rolled_back")
    }),
  )
})

describe("recover()", () => {
  it.effect("lists an interrupted operation with each file's state; rollback puts the rescue back", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      env.fs.writeFile("/home/dev/project/a.txt", "a0\n")
      env.fs.writeFile("/home/dev/project/b.txt", "b0\n")
      const sessionId = yield* newSession
      const operationId = yield* interrupted(sessionId)
      expect(env.files()).toEqual({ "a.txt": "A\n" })

      const [op, ...rest] = yield* recover()
      expect(rest).toEqual([])
      expect(op!.record.intent.operationId).toBe(operationId)
      expect(op!.recorded).toBe(false)
      expect(op!.resolvable).toBe(true)
      expect(op!.files.map((f) => [f.path, f.state])).toEqual([
        ["a.txt", "planned"],
        ["b.txt", "planned"],
      ])

      yield* resolveOperation(operationId, "rollback")
      expect(env.files()).toEqual({ "a.txt": "a0\n", "b.txt": "b0\n" })
      expect(yield* recover()).toEqual([])
      const record = Option.getOrThrow(yield* (yield* OperationJournal).get(operationId))
      expect(record.status).toBe("rolled_back")
      yield* expectRefusal(resolveOperation(operationId, "continue"), "conflict")
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("continue finishes a half-written operation and records it in the session", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      env.fs.writeFile("/home/dev/project/a.txt", "a0\n")
      env.fs.writeFile("/home/dev/project/b.txt", "b0\n")
      const sessionId = yield* newSession
      const operationId = yield* interrupted(sessionId)
      // As if the crash came between the two writes: b.txt was never deleted.
      env.fs.writeFile("/home/dev/project/b.txt", "b0\n")
      const [op] = yield* recover()
      expect(op!.files.map((f) => f.state)).toEqual(["planned", "rescue"])

      yield* resolveOperation(operationId, "continue")
      expect(env.files()).toEqual({ "a.txt": "A\n" })
      const events = (yield* (yield* SessionStore).read(sessionId)).map((e) => e.event)
      expect(events.at(-1)).toMatchObject({ _tag: "WorkspaceRewound", operationId, outcome: "applied" })
      // Continued, the operation can be redone like any completed restore.
      yield* redo(sessionId)
      expect(env.files()).toEqual({ "a.txt": "a0\n", "b.txt": "b0\n" })
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect(
    "the directories an operation cut short had emptied, or made for nothing, go when it is resolved",
    () =>
      Effect.gen(function* () {
        // Found killing the built bin's `restore` on a real repository: the crash came after every
        // file of docs/patterns was deleted and before the directories those deletions emptied were
        // removed (the operation's last step), and `recover --continue` left docs/patterns empty.
        for (const resolution of ["continue", "rollback"] as const) {
          const env = makeEnv()
          yield* Effect.gen(function* () {
            env.fs.writeFile(`${ROOT}/keep.txt`, "k\n")
            env.fs.writeFile(`${ROOT}/docs/patterns/a.txt`, "a\n")
            env.fs.writeFile(`${ROOT}/docs/patterns/b.txt`, "b\n")
            env.fs.writeFile(`${ROOT}/docs/index.txt`, "i\n")
            const sessionId = yield* newSession
            const operationId = yield* interrupted(sessionId, [
              { path: "docs/patterns/a.txt", content: null },
              { path: "docs/patterns/b.txt", content: null },
              { path: "new/deep/c.txt", content: "c\n" },
            ])
            // As the crash left it: both deletions done, their directory not yet removed; and the
            // created file's directories made but the file itself never written.
            env.fs.mkdirp(`${ROOT}/docs/patterns`)
            env.fs.remove(`${ROOT}/new/deep/c.txt`)
            env.fs.mkdirp(`${ROOT}/new/deep`)
            const [op] = yield* recover()
            expect(op!.files.map((f) => [f.path, f.state])).toEqual([
              ["docs/patterns/a.txt", "planned"],
              ["docs/patterns/b.txt", "planned"],
              ["new/deep/c.txt", "rescue"],
            ])
            yield* resolveOperation(operationId, resolution)
            const directories = env.fs
              .describe(ROOT)
              .filter(([, what]) => what === "directory")
              .map(([path]) => path.slice(ROOT.length + 1))
            if (resolution === "continue") {
              // The deletions' emptied directory goes (its parent still holds a file); the file is written.
              expect(env.fs.node(`${ROOT}/docs/patterns`)).toBeUndefined()
              expect(env.files()).toEqual({
                "keep.txt": "k\n",
                "docs/index.txt": "i\n",
                "new/deep/c.txt": "c\n",
              })
            } else {
              // The files come back; the directories made for the file never written go.
              expect(env.fs.node(`${ROOT}/new`)).toBeUndefined()
              expect(env.files()).toEqual({
                "keep.txt": "k\n",
                "docs/index.txt": "i\n",
                "docs/patterns/a.txt": "a\n",
                "docs/patterns/b.txt": "b\n",
              })
            }
            expect(directories, resolution).toEqual(
              resolution === "continue" ? ["docs", "new", "new/deep"] : ["docs", "docs/patterns"],
            )
          }).pipe(Effect.provide(env.layer()))
        }
      }),
  )

  it.effect("a file that holds neither version is refused and nothing is written", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      env.fs.writeFile("/home/dev/project/a.txt", "a0\n")
      env.fs.writeFile("/home/dev/project/b.txt", "b0\n")
      const sessionId = yield* newSession
      const operationId = yield* interrupted(sessionId)
      env.fs.writeFile("/home/dev/project/b.txt", "edited meanwhile\n")
      const [op] = yield* recover()
      expect(op!.resolvable).toBe(false)
      expect(op!.files.find((f) => f.path === "b.txt")!.state).toBe("changed")
      const before = env.files()
      yield* expectRefusal(resolveOperation(operationId, "rollback"), "conflict")
      yield* expectRefusal(resolveOperation(operationId, "continue"), "conflict")
      expect(env.files()).toEqual(before)
      expect((yield* recover()).length).toBe(1)
    }).pipe(Effect.provide(env.layer()))
  })
})

/**
 * The layers of `env` with a session store whose appends "crash" (die) while `crashing.on` is set:
 * a restore then stops after its files are written and before its record is committed.
 */
const crashingAppends = (env: Env) => {
  const crashing = { on: false }
  /** The event tags of each append, in order. */
  const appends: Array<ReadonlyArray<string>> = []
  const layer = Layer.effect(
    SessionStore,
    Effect.map(SessionStore, (store) => ({
      ...store,
      append: (request: Parameters<typeof store.append>[0]) => {
        if (crashing.on) return Effect.dieMessage("crash before the commit")
        appends.push(request.events.map((e) => e._tag))
        return store.append(request)
      },
    })),
  ).pipe(Layer.provideMerge(env.layer()))
  return { crashing, appends, layer }
}

describe("recover() of a files-and-conversation rewind", () => {
  it.effect("continue writes the conversation cursor with the files' record; redo undoes both", () => {
    const env = makeEnv()
    const { crashing, layer } = crashingAppends(env)
    return Effect.gen(function* () {
      const { sessionId, first, second } = yield* twoTurns(env)
      const filesBefore = env.files()
      const branchBefore = activeBranch(yield* loadSession(sessionId))
      crashing.on = true
      const exit = yield* Effect.exit(
        rewindCascade({ sessionId, messageId: second.messageId, scope: "both" }),
      )
      crashing.on = false
      expect(exit._tag).toBe("Failure")
      // Every file was written, the session recorded nothing: files and conversation disagree.
      expect(env.files()).toEqual({ "a.txt": "a1\n", "b.txt": "b0\n", "c.txt": "c1\n" })
      expect(activeBranch(yield* loadSession(sessionId))).toEqual(branchBefore)

      const [op, ...rest] = yield* recover()
      expect(rest).toEqual([])
      expect(op!.recorded).toBe(false)
      expect(op!.record.intent.cursorTarget).toBe(second.messageId)
      yield* resolveOperation(op!.record.intent.operationId as OperationId, "continue")

      const state = yield* loadSession(sessionId)
      const kept = branchBefore.slice(0, branchBefore.indexOf(second.messageId))
      expect(activeBranch(state).slice(0, kept.length)).toEqual(kept)
      expect(activeBranch(state)).not.toContain(second.messageId)
      expect(activeBranch(state)).toContain(first.messageId)
      expect(state.cursor?.targetMessageId).toBe(second.messageId)
      const events = (yield* (yield* SessionStore).read(sessionId)).map((e) => e.event)
      const rewound = events.findIndex((e) => e._tag === "ConversationRewound")
      expect(events[rewound + 1]).toMatchObject({
        _tag: "WorkspaceRewound",
        operationId: op!.record.intent.operationId,
        scope: "both",
        targetMessageId: second.messageId,
        outcome: "applied",
      })
      expect(yield* recover()).toEqual([])

      yield* redo(sessionId)
      expect(env.files()).toEqual(filesBefore)
      expect(activeBranch(yield* loadSession(sessionId))).toEqual(branchBefore)
    }).pipe(Effect.provide(layer))
  })

  it.effect("continue is refused, nothing written, when the cursor's target left the branch", () => {
    const env = makeEnv()
    const { crashing, layer } = crashingAppends(env)
    return Effect.gen(function* () {
      const { sessionId, first, second } = yield* twoTurns(env)
      const filesBefore = env.files()
      crashing.on = true
      yield* Effect.exit(rewindCascade({ sessionId, messageId: second.messageId, scope: "both" }))
      crashing.on = false
      const [op] = yield* recover()
      // Meanwhile the conversation went back further: the target is on a cut branch now.
      yield* rewindCascade({ sessionId, messageId: first.messageId, scope: "conversation" })
      const filesInterrupted = env.files()
      const operationId = op!.record.intent.operationId as OperationId
      yield* expectRefusal(resolveOperation(operationId, "continue"), "conflict")
      expect(env.files()).toEqual(filesInterrupted)
      yield* resolveOperation(operationId, "rollback")
      expect(env.files()).toEqual(filesBefore)
      expect(yield* recover()).toEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.effect(
    "an edit in rewind mode commits the cursor with the files; interrupted, continue moves it",
    () => {
      const env = makeEnv()
      const { crashing, layer } = crashingAppends(env)
      return Effect.gen(function* () {
        const { sessionId, second } = yield* twoTurns(env)
        const branchBefore = activeBranch(yield* loadSession(sessionId))
        const kept = branchBefore.slice(0, branchBefore.indexOf(second.messageId))
        crashing.on = true
        const exit = yield* Effect.exit(
          editUserQuery({ sessionId, messageId: second.messageId, text: "second, again", mode: "rewind" }),
        )
        crashing.on = false
        expect(exit._tag).toBe("Failure")
        expect(env.files()).toEqual({ "a.txt": "a1\n", "b.txt": "b0\n", "c.txt": "c1\n" })
        expect(activeBranch(yield* loadSession(sessionId))).toEqual(branchBefore)

        const [op] = yield* recover()
        expect(op!.record.intent.kind).toBe("file_rewind_apply")
        expect(op!.record.intent.cursorTarget).toBe(second.messageId)
        yield* resolveOperation(op!.record.intent.operationId as OperationId, "continue")
        const state = yield* loadSession(sessionId)
        expect(activeBranch(state).slice(0, kept.length)).toEqual(kept)
        expect(activeBranch(state)).not.toContain(second.messageId)
        const events = (yield* (yield* SessionStore).read(sessionId)).map((e) => e.event)
        const rewound = events.findIndex((e) => e._tag === "ConversationRewound")
        expect(events[rewound + 1]).toMatchObject({
          _tag: "FileRewindApplied",
          operationId: op!.record.intent.operationId,
        })
        // The edit's second half (the new turn) is the host's to resend; the files are undone.
        expect(state.spentCheckpointIds.size).toBe(2)
      }).pipe(Effect.provide(layer))
    },
  )

  it.effect("an edit in rewind mode records files and cursor in one append", () => {
    const env = makeEnv()
    const { appends, layer } = crashingAppends(env)
    return Effect.gen(function* () {
      const { sessionId, second } = yield* twoTurns(env)
      appends.length = 0
      yield* editUserQuery({ sessionId, messageId: second.messageId, text: "again", mode: "rewind" })
      const withCursor = appends.filter((tags) => tags.includes("ConversationRewound"))
      expect(withCursor).toHaveLength(1)
      expect(withCursor[0]!.slice(0, 2)).toEqual(["ConversationRewound", "FileRewindApplied"])
      expect(appends.filter((tags) => tags.includes("FileRewindApplied"))).toHaveLength(1)
    }).pipe(Effect.provide(layer))
  })
})
