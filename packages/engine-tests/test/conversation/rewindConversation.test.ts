import { describe, expect, it } from "@effect/vitest"
import { layerBackgroundTasks, MemorySessionStore, MemoryTaskRegistry } from "@rewind/adapter-memory"
import type { MessageId, SessionId, TaskId } from "@rewind/contracts"
import {
  appendReply,
  appendUserMessage,
  applyCompaction,
  branchView,
  createSession,
  finishBackgroundTask,
  IdGenerators,
  loadSession,
  rewindConversation,
  SessionStore,
  startBackgroundTask,
} from "@rewind/core"
import { expectRefusal } from "@rewind/testkit"
import { Effect, Layer } from "effect"

const TestLayer = Layer.mergeAll(
  MemorySessionStore.layer,
  layerBackgroundTasks,
  IdGenerators.layerSequential("x"),
)

const turn = (sessionId: SessionId, text: string) =>
  Effect.gen(function* () {
    const user = yield* appendUserMessage(sessionId, { text })
    const reply = yield* appendReply(sessionId, {
      turnId: user.turnId,
      parts: [{ kind: "text", text: `re: ${text}` }],
    })
    return { user: user.messageId, assistant: reply.messageId, turnId: user.turnId }
  })

const newSession = createSession({ title: "demo", cwd: "/work" }).pipe(Effect.map((s) => s.id))

describe("rewindConversation on the memory adapter", () => {
  it.layer(TestLayer)((it) => {
    it.effect("cuts before the target user message, keeping every event", () =>
      Effect.gen(function* () {
        const id = yield* newSession
        const t1 = yield* turn(id, "one")
        const t2 = yield* turn(id, "two")
        yield* turn(id, "three")
        const before = yield* Effect.flatMap(SessionStore, (s) => s.read(id))

        const result = yield* rewindConversation({ sessionId: id, messageId: t2.user })
        expect(result.view.messageIds).toEqual([t1.user, t1.assistant])
        expect(result.cursor.branchGeneration).toBe(1)
        expect(result.removedMessageIds).toHaveLength(4)

        const after = yield* Effect.flatMap(SessionStore, (s) => s.read(id))
        expect(after.slice(0, before.length)).toEqual(before)
        const state = yield* loadSession(id)
        expect(state.messageOrder).toHaveLength(6)
        expect(branchView(state).turnIds).toEqual([t1.turnId])
      }),
    )

    it.effect("maps an assistant target to its turn's user message", () =>
      Effect.gen(function* () {
        const id = yield* newSession
        const t1 = yield* turn(id, "one")
        const t2 = yield* turn(id, "two")
        const result = yield* rewindConversation({ sessionId: id, messageId: t2.assistant })
        expect(result.targetMessageId).toBe(t2.user)
        expect(result.view.messageIds).toEqual([t1.user, t1.assistant])
      }),
    )

    it.effect("refuses an assistant target for scope both, a summary, and an unknown message", () =>
      Effect.gen(function* () {
        const id = yield* newSession
        const t1 = yield* turn(id, "one")
        const t2 = yield* turn(id, "two")
        const { summaryMessageId } = yield* applyCompaction(id, {
          fromMessageId: t1.user,
          toMessageId: t1.assistant,
          summaryText: "sum",
        })
        yield* expectRefusal(
          rewindConversation({ sessionId: id, messageId: t2.assistant, scope: "both" }),
          "not_a_user_message",
        )
        yield* expectRefusal(
          rewindConversation({ sessionId: id, messageId: summaryMessageId }),
          "summary_target",
        )
        yield* expectRefusal(
          rewindConversation({ sessionId: id, messageId: "nope" as MessageId }),
          "not_found",
        )
        yield* expectRefusal(
          rewindConversation({ sessionId: "ghost" as SessionId, messageId: t1.user }),
          "session_not_found",
        )
      }),
    )

    it.effect("rewinding a compacted target cuts the summary and rebuilds the model history", () =>
      Effect.gen(function* () {
        const id = yield* newSession
        const t1 = yield* turn(id, "one")
        const t2 = yield* turn(id, "two")
        yield* applyCompaction(id, { fromMessageId: t1.user, toMessageId: t2.assistant, summaryText: "sum" })
        yield* turn(id, "three")
        const result = yield* rewindConversation({ sessionId: id, messageId: t2.user })
        expect(result.view.activeCompactions).toEqual([])
        expect(result.view.modelHistory).toEqual([t1.user, t1.assistant])
      }),
    )

    it.effect("stops background tasks of the cut turns first and discards their late results", () =>
      Effect.gen(function* () {
        const registry = yield* MemoryTaskRegistry
        const id = yield* newSession
        const t1 = yield* turn(id, "one")
        const t2 = yield* turn(id, "two")
        const kept = yield* startBackgroundTask(id, t1.turnId, "kept server")
        const cut = yield* startBackgroundTask(id, t2.turnId, "cut server")
        registry.register(kept.taskId)
        registry.register(cut.taskId)

        const result = yield* rewindConversation({ sessionId: id, messageId: t2.user })
        expect(result.stoppedTaskIds).toEqual([cut.taskId])
        expect(registry.isRunning(cut.taskId)).toBe(false)
        expect(registry.isRunning(kept.taskId)).toBe(true)
        expect(registry.generation(id)).toBe(1)
        expect(result.state.backgroundTasks.get(cut.taskId)?.status).toBe("stopped")

        const late = yield* finishBackgroundTask(id, cut.taskId, "completed")
        expect(late.accepted).toBe(false)
        const ok = yield* finishBackgroundTask(id, kept.taskId, "completed")
        expect(ok.accepted).toBe(true)
      }),
    )

    it.effect("a task that won't stop fails the whole rewind and writes nothing", () =>
      Effect.gen(function* () {
        const registry = yield* MemoryTaskRegistry
        const store = yield* SessionStore
        const id = yield* newSession
        yield* turn(id, "one")
        const t2 = yield* turn(id, "two")
        const stubborn = yield* startBackgroundTask(id, t2.turnId, "stubborn")
        registry.register(stubborn.taskId as TaskId, { refuseToStop: true })
        const versionBefore = yield* store.version(id)

        yield* expectRefusal(rewindConversation({ sessionId: id, messageId: t2.user }), "task_not_stopped")
        expect(yield* store.version(id)).toBe(versionBefore)
        expect(registry.generation(id)).toBe(0)
        expect((yield* loadSession(id)).cursor).toBeUndefined()
      }),
    )

    it.effect("a conflicting append fails with a typed VersionConflict", () =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        const id = yield* newSession
        const version = yield* store.version(id)
        const error = yield* Effect.flip(
          store.append({ sessionId: id, expectedVersion: version - 1, events: [], at: 0 }),
        )
        expect(error._tag).toBe("VersionConflict")
      }),
    )
  })
})
