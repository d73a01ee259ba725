import { describe, expect, it } from "@effect/vitest"
import { layerBackgroundTasks, MemorySessionStore } from "@rewind/adapter-memory"
import type { SessionId } from "@rewind/contracts"
import {
  appendReply,
  appendUserMessage,
  applyCompaction,
  createSession,
  IdGenerators,
  loadSession,
  RewindOperations,
  rewindConversation,
  sessionHistory,
  startBackgroundTask,
  transcript,
} from "@rewind/core"
import { Effect, Layer, Schema } from "effect"

const TestLayer = Layer.mergeAll(
  MemorySessionStore.layer,
  layerBackgroundTasks,
  IdGenerators.layerSequential("h"),
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

describe("sessionHistory", () => {
  it.layer(TestLayer)((it) => {
    it.effect("keeps every message, numbers each cut run, and agrees with the transcript", () =>
      Effect.gen(function* () {
        const id = (yield* createSession({ title: "h", cwd: "/w" })).id
        const t1 = yield* turn(id, "one")
        const t2 = yield* turn(id, "two")
        yield* startBackgroundTask(id, t2.turnId, "watch tests")
        yield* rewindConversation({ sessionId: id, messageId: t2.user })
        const t3 = yield* turn(id, "three")
        yield* turn(id, "four")
        yield* rewindConversation({ sessionId: id, messageId: t3.user })
        yield* turn(id, "five")
        yield* applyCompaction(id, {
          fromMessageId: t1.user,
          toMessageId: t1.assistant,
          summaryText: "sum",
        })

        const state = yield* loadSession(id)
        const history = sessionHistory(state)
        expect(history.entries.map((e) => e.message.id)).toEqual(state.messageOrder)
        const active = history.entries.filter((e) => e.active).map((e) => e.message.id)
        expect(active).toEqual(transcript(state).map((e) => e.message.id))
        // Two rewinds: turn two's pair, then turns three and four, each one cut run.
        const segments = history.entries.map((e) => e.segment)
        expect(segments).toEqual([0, 0, 1, 1, 2, 2, 2, 2, 0, 0, 0])
        expect(history.entries.filter((e) => e.compactedBy !== undefined).map((e) => e.message.id)).toEqual([
          t1.user,
          t1.assistant,
        ])
        expect(history.compactions).toHaveLength(1)
        expect(history.compactions[0]!.active).toBe(true)
        expect(history.branchGeneration).toBe(2)
        expect(history.backgroundTasks.map((t) => [t.description, t.status])).toEqual([
          ["watch tests", "stopped"],
        ])
        expect([history.total, history.activeCount, history.offset]).toEqual([11, 5, 0])
        expect(history.segments).toEqual([
          { segment: 1, start: 2, count: 2 },
          { segment: 2, start: 4, count: 4 },
        ])
        // What the operation answers fits its declared Schema.
        const encoded = Schema.encodeUnknownEither(RewindOperations.sessionHistory.success)(history)
        expect(encoded._tag).toBe("Right")

        // Windows of every size tile the whole history, each with the whole history's structure.
        for (const limit of [1, 3, 4, 11, 50]) {
          const tiled = []
          for (let offset = 0; offset < history.total; offset += limit) {
            const page = sessionHistory(state, { offset, limit })
            expect([page.total, page.activeCount, page.offset]).toEqual([11, 5, offset])
            expect(page.segments).toEqual(history.segments)
            expect(page.entries.length).toBe(Math.min(limit, history.total - offset))
            tiled.push(...page.entries)
          }
          expect(tiled).toEqual(history.entries)
        }
        const past = sessionHistory(state, { offset: 40, limit: 5 })
        expect([past.offset, past.entries.length, past.total]).toEqual([11, 0, 11])
      }),
    )
  })
})
