import { describe, expect, it } from "@effect/vitest"
import {
  type CheckpointId,
  type CommandId,
  type ContentHash,
  type FileVersion,
  type MessageId,
  WorkspaceIoError,
} from "@rewind/contracts"
import {
  branchView,
  createSession,
  forkFromCheckpoint,
  loadSession,
  NO_CHECKPOINT_MESSAGE,
  rewindConversation,
  SessionStore,
} from "@rewind/core"
import {
  completedTurn,
  expectRefusal,
  ForkRestoreRecorder,
  recordCheckpointEvent,
  type TurnRecord,
} from "@rewind/testkit"
import { Effect } from "effect"
import { runFork } from "../support/forkTestLayer.js"

const cmd = (s: string) => s as CommandId
const present = (n: number): FileVersion => ({
  _tag: "present",
  hash: String(n).repeat(64).slice(0, 64) as ContentHash,
})
const absent: FileVersion = { _tag: "absent" }

const newSession = createSession({ title: "demo", cwd: "/work" }).pipe(Effect.map((s) => s.id))

const edit = (
  sessionId: Parameters<typeof recordCheckpointEvent>[0],
  turn: TurnRecord,
  id: string,
  path: string,
  before: FileVersion,
  after: FileVersion,
) =>
  recordCheckpointEvent(sessionId, {
    checkpointId: id,
    turnId: turn.turnId,
    anchorMessageId: turn.user,
    path,
    before,
    after,
  })

const originsOf = (sessionId: Parameters<typeof loadSession>[0]) =>
  Effect.map(loadSession(sessionId), (s) =>
    branchView(s).messageIds.map((m) => s.messages.get(m)!.forkOrigin?.messageId),
  )

describe("forkFromCheckpoint", () => {
  it.effect("refuses when the session has no checkpoint at all", () =>
    runFork(
      Effect.gen(function* () {
        const id = yield* newSession
        const t1 = yield* completedTurn(id, "one")
        for (const target of [{ latest: true } as const, { messageId: t1.user }]) {
          const refusal = yield* expectRefusal(
            forkFromCheckpoint({ sessionId: id, target, commandId: cmd("f") }),
            "no_checkpoint",
          )
          expect(refusal.message).toBe(NO_CHECKPOINT_MESSAGE)
        }
        expect(yield* Effect.flatMap(SessionStore, (s) => s.listSessions())).toHaveLength(1)
      }),
    ),
  )

  it.effect("an explicit checkpoint restores its before-content and copies through its turn", () =>
    runFork(
      Effect.gen(function* () {
        const recorder = yield* ForkRestoreRecorder
        const id = yield* newSession
        const t1 = yield* completedTurn(id, "one")
        yield* edit(id, t1, "c1", "a.ts", absent, present(1))
        const t2 = yield* completedTurn(id, "two")
        yield* edit(id, t2, "c2", "a.ts", present(1), present(2))
        yield* edit(id, t2, "c3", "b.ts", present(7), present(8))
        yield* completedTurn(id, "three")

        const result = yield* forkFromCheckpoint({
          sessionId: id,
          target: { checkpointId: "c2" as CheckpointId },
          commandId: cmd("f"),
        })
        expect(result.restoredFiles).toEqual([{ path: "a.ts", version: present(1), checkpointId: "c2" }])
        expect(recorder.requests).toHaveLength(1)
        expect(recorder.requests[0]).toMatchObject({
          sessionId: id,
          childSessionId: result.childSessionId,
          files: [{ path: "a.ts", version: present(1), checkpointId: "c2", lastWritten: present(2) }],
        })
        expect((yield* originsOf(result.childSessionId)).slice(0, 4)).toEqual([
          t1.user,
          t1.last,
          t2.user,
          t2.last,
        ])
        const child = yield* loadSession(result.childSessionId)
        expect(child.forkedFrom?.forkKind).toBe("checkpoint")
        expect(child.checkpoints).toEqual([])

        const latest = yield* forkFromCheckpoint({
          sessionId: id,
          target: { latest: true },
          commandId: cmd("g"),
        })
        expect(latest.restoredFiles).toEqual([{ path: "b.ts", version: present(7), checkpointId: "c3" }])
        yield* expectRefusal(
          forkFromCheckpoint({
            sessionId: id,
            target: { checkpointId: "zz" as CheckpointId },
            commandId: cmd("h"),
          }),
          "not_found",
        )
      }),
    ),
  )

  it.effect("a message target undoes only what changed after the fork point, per file its first change", () =>
    runFork(
      Effect.gen(function* () {
        const recorder = yield* ForkRestoreRecorder
        const id = yield* newSession
        const t1 = yield* completedTurn(id, "one")
        yield* edit(id, t1, "c1", "a.ts", absent, present(1))
        const t2 = yield* completedTurn(id, "two")
        yield* edit(id, t2, "c2", "a.ts", present(1), present(2))
        const t3 = yield* completedTurn(id, "three")
        yield* edit(id, t3, "c3", "a.ts", present(2), present(3))
        yield* edit(id, t3, "c4", "new.ts", absent, present(4))

        // Fork at turn 1: its own change stays; a.ts goes back to before its first later change.
        const result = yield* forkFromCheckpoint({
          sessionId: id,
          target: { messageId: t1.user },
          commandId: cmd("f"),
        })
        expect(result.restoredFiles).toEqual([
          { path: "a.ts", version: present(1), checkpointId: "c2" },
          { path: "new.ts", version: absent, checkpointId: "c4" },
        ])
        expect(recorder.requests).toHaveLength(1)
        expect(yield* originsOf(result.childSessionId)).toEqual([t1.user, t1.last, undefined, undefined])

        // At the latest turn nothing changed afterwards: a plain conversation fork, no file written.
        const plain = yield* forkFromCheckpoint({
          sessionId: id,
          target: { messageId: t3.last! },
          commandId: cmd("g"),
        })
        expect(plain.restoredFiles).toEqual([])
        expect(recorder.requests).toHaveLength(1)
        expect(plain.copiedMessageCount).toBe(6)
      }),
    ),
  )

  it.effect("changes on a branch a conversation rewind cut still count as after the fork point", () =>
    runFork(
      Effect.gen(function* () {
        const id = yield* newSession
        const t1 = yield* completedTurn(id, "one")
        yield* edit(id, t1, "c1", "a.ts", absent, present(1))
        const t2 = yield* completedTurn(id, "two")
        yield* edit(id, t2, "c2", "a.ts", present(1), present(2))
        yield* rewindConversation({ sessionId: id, messageId: t2.user })
        yield* completedTurn(id, "two again")
        const result = yield* forkFromCheckpoint({
          sessionId: id,
          target: { messageId: t1.last! },
          commandId: cmd("f"),
        })
        expect(result.restoredFiles).toEqual([{ path: "a.ts", version: present(1), checkpointId: "c2" }])
        yield* expectRefusal(
          forkFromCheckpoint({
            sessionId: id,
            target: { checkpointId: "c2" as CheckpointId },
            commandId: cmd("g"),
          }),
          "not_on_active_branch",
        )
        yield* expectRefusal(
          forkFromCheckpoint({ sessionId: id, target: { messageId: t2.user }, commandId: cmd("h") }),
          "not_on_active_branch",
        )
      }),
    ),
  )

  it.effect(
    "a failed restore creates no child; a replay does not restore again; a running parent is busy",
    () =>
      runFork(
        Effect.gen(function* () {
          const recorder = yield* ForkRestoreRecorder
          const store = yield* SessionStore
          const id = yield* newSession
          const t1 = yield* completedTurn(id, "one")
          yield* edit(id, t1, "c1", "a.ts", absent, present(1))
          recorder.failWith = new WorkspaceIoError({ operation: "write", path: "a.ts", message: "disk full" })
          const error = yield* Effect.flip(
            forkFromCheckpoint({ sessionId: id, target: { latest: true }, commandId: cmd("f") }),
          )
          expect(error._tag).toBe("WorkspaceIoError")
          expect(yield* store.listSessions()).toHaveLength(1)
          expect(yield* store.getCommandFact(id, "f")).toMatchObject({ _tag: "None" })

          recorder.failWith = undefined
          const first = yield* forkFromCheckpoint({
            sessionId: id,
            target: { latest: true },
            commandId: cmd("f"),
          })
          const again = yield* forkFromCheckpoint({
            sessionId: id,
            target: { latest: true },
            commandId: cmd("f"),
          })
          expect(again).toEqual({ ...first, replayed: true })
          expect(recorder.requests).toHaveLength(1)

          yield* completedTurn(id, "two", { running: true })
          const busy = yield* expectRefusal(
            forkFromCheckpoint({ sessionId: id, target: { latest: true }, commandId: cmd("b") }),
            "busy",
          )
          expect(busy.message).toMatch(/running turn/)
          yield* expectRefusal(
            forkFromCheckpoint({
              sessionId: id,
              target: { messageId: "m" as MessageId },
              commandId: cmd("b"),
            }),
            "not_found",
          )
        }),
      ),
  )
})
