import { describe, expect, it } from "@effect/vitest"
import type { CommandId, SessionId } from "@rewind/contracts"
import {
  appendReply,
  appendUserMessage,
  branchView,
  completeTurnWithBoundary,
  createSession,
  createSideChat,
  forkAtMessage,
  loadSession,
  recordModelSelection,
  recordVerification,
  SessionStore,
  SIDE_CHAT_REMINDER,
  SIDE_CHAT_TITLE,
  updateGoal,
  validateForkBundle,
} from "@rewind/core"
import { completedTurn, expectRefusal, storedLines } from "@rewind/testkit"
import { Effect } from "effect"
import { runFork } from "../support/forkTestLayer.js"

const cmd = (s: string) => s as CommandId
const newSession = createSession({ title: "main task", cwd: "/work" }).pipe(Effect.map((s) => s.id))

describe("createSideChat", () => {
  it.effect("inherits the whole active branch as hidden context, without goals, plus a hidden reminder", () =>
    runFork(
      Effect.gen(function* () {
        const id = yield* newSession
        const goal = yield* updateGoal(id, { text: "goal" })
        const t1 = yield* completedTurn(id, "one", { intermediateReplies: 1 })
        yield* recordVerification(id, {
          messageId: t1.last!,
          outcome: "passed",
          summary: "v",
          goalId: goal.goalId,
        })
        yield* recordModelSelection(id, t1.last!, { provider: "p", model: "m" })
        const u2 = yield* appendUserMessage(id, { text: "two" })
        yield* appendReply(id, {
          turnId: u2.turnId,
          parts: [{ kind: "divider", text: "ui" }],
          visibility: "ui_only",
        })
        yield* appendReply(id, { turnId: u2.turnId, parts: [{ kind: "text", text: "answer" }] })
        yield* completeTurnWithBoundary(id, u2.turnId)
        const parentBefore = yield* storedLines(id)

        const result = yield* createSideChat({ sessionId: id, commandId: cmd("side") })
        expect(yield* storedLines(id)).toEqual(parentBefore)
        const events = (yield* Effect.flatMap(SessionStore, (s) => s.read(result.childSessionId))).map(
          (e) => e.event,
        )
        expect(validateForkBundle(events)).toEqual([])
        const chat = yield* loadSession(result.childSessionId)
        expect(chat.session).toMatchObject({
          kind: "selection_side_chat",
          title: SIDE_CHAT_TITLE,
          parentId: id,
          cwd: "/work",
        })
        const ids = branchView(chat).messageIds
        const messages = ids.map((m) => chat.messages.get(m)!)
        // The UI-only reply is left out; everything copied is model-only.
        expect(result.copiedMessageCount).toBe(5)
        expect(
          messages.slice(0, 5).every((m) => m.visibility === "model_only" && m.forkOrigin?.sessionId === id),
        ).toBe(true)
        const reminder = messages[5]!
        expect(reminder).toMatchObject({ role: "system", visibility: "model_only" })
        expect(chat.parts.get(reminder.id)![0]!.text).toBe(SIDE_CHAT_REMINDER)
        expect(messages).toHaveLength(6)
        expect(chat.goals.size).toBe(0)
        expect(chat.verifications.size).toBe(0)
        const anchored = messages.filter((m) => m.anchor !== undefined)
        expect(anchored).toHaveLength(2)
        for (const m of anchored) expect(m.anchor!.goalBoundary).toBeUndefined()
        expect(chat.modelSelections.size).toBe(1)
        // The side chat can itself be forked at its (copied) boundaries.
        const fork = yield* forkAtMessage({
          sessionId: result.childSessionId,
          messageId: anchored[1]!.id,
          commandId: cmd("f"),
        })
        expect((yield* loadSession(fork.childSessionId)).session?.title).toBe(`Fork of ${SIDE_CHAT_TITLE}`)
      }),
    ),
  )

  it.effect("mid-turn, stops at the running turn's user input", () =>
    runFork(
      Effect.gen(function* () {
        const id = yield* newSession
        const t1 = yield* completedTurn(id, "one")
        const running = yield* completedTurn(id, "two", { running: true, intermediateReplies: 2 })
        const result = yield* createSideChat({ sessionId: id, commandId: cmd("side") })
        const chat = yield* loadSession(result.childSessionId)
        const origins = branchView(chat).messageIds.map((m) => chat.messages.get(m)!.forkOrigin?.messageId)
        expect(origins).toEqual([t1.user, t1.last, running.user, undefined])
        // The copied running turn is closed in the side chat: it will never continue there.
        expect([...chat.turns.values()].map((t) => t.status)).toEqual(["completed", "aborted"])
      }),
    ),
  )

  it.effect("replays by command id and refuses an empty or unknown session", () =>
    runFork(
      Effect.gen(function* () {
        const id = yield* newSession
        yield* expectRefusal(createSideChat({ sessionId: id, commandId: cmd("s") }), "unavailable")
        yield* completedTurn(id, "one")
        const first = yield* createSideChat({ sessionId: id, commandId: cmd("s") })
        const again = yield* createSideChat({ sessionId: id, commandId: cmd("s") })
        expect(again).toEqual({ ...first, replayed: true })
        yield* expectRefusal(
          createSideChat({ sessionId: "no" as SessionId, commandId: cmd("s") }),
          "session_not_found",
        )
      }),
    ),
  )
})
