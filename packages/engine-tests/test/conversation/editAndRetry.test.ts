// Edit & resend (preserve / rewind) and retry, on the memory adapters.
import { describe, expect, it } from "@effect/vitest"
import { activeBranch, editUserQuery, loadSession, messageText, retryTurn } from "@rewind/core"
import { expectRefusal } from "@rewind/testkit"
import { Effect } from "effect"
import { agentWrite, type Env, makeEnv, newSession, reply, userTurn } from "../support/fileRewindEnv.js"

const setup = (env: Env, secondTool = "Write") =>
  Effect.gen(function* () {
    env.fs.writeFile("/home/dev/project/a.txt", "a0\n")
    const sessionId = yield* newSession
    const t1 = yield* userTurn(sessionId, "first question")
    yield* agentWrite(env, sessionId, t1.turnId, "a.txt", "a1\n")
    yield* reply(sessionId, t1.turnId)
    const t2 = yield* userTurn(sessionId, "second question")
    yield* agentWrite(env, sessionId, t2.turnId, "b.txt", "b1\n", secondTool)
    yield* reply(sessionId, t2.turnId)
    return { sessionId, t1, t2 }
  })

/** The texts of the active branch's user messages. */
const userTexts = (sessionId: Parameters<typeof loadSession>[0]) =>
  Effect.map(loadSession(sessionId), (state) =>
    activeBranch(state)
      .map((id) => state.messages.get(id)!)
      .filter((m) => m.role === "user")
      .map((m) => messageText(state, m)),
  )

describe("editUserQuery", () => {
  it.effect("preserve (the default) moves the conversation only and starts the new turn", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, t2 } = yield* setup(env)
      const result = yield* editUserQuery({ sessionId, messageId: t2.messageId, text: "second, edited" })
      expect(result.mode).toBe("preserve")
      expect(yield* userTexts(sessionId)).toEqual(["first question", "second, edited"])
      expect(env.files()).toEqual({ "a.txt": "a1\n", "b.txt": "b1\n" })
      const state = yield* loadSession(sessionId)
      expect(activeBranch(state).at(-1)).toBe(result.messageId)
      expect(activeBranch(state)).not.toContain(t2.messageId)
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("rewind undoes the turn's files first, then moves the conversation", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, t2 } = yield* setup(env)
      const result = yield* editUserQuery({
        sessionId,
        messageId: t2.messageId,
        text: "second, edited",
        mode: "rewind",
      })
      expect(result.undoneCheckpointIds).toHaveLength(1)
      expect(env.files()).toEqual({ "a.txt": "a1\n" })
      expect(yield* userTexts(sessionId)).toEqual(["first question", "second, edited"])
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("only the last turn can be edited", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, t1 } = yield* setup(env)
      const before = yield* userTexts(sessionId)
      yield* expectRefusal(editUserQuery({ sessionId, messageId: t1.messageId, text: "x" }), "not_last_turn")
      yield* expectRefusal(
        editUserQuery({ sessionId, messageId: t1.messageId, text: "x", mode: "rewind" }),
        "not_last_turn",
      )
      expect(yield* userTexts(sessionId)).toEqual(before)
      expect(env.files()).toEqual({ "a.txt": "a1\n", "b.txt": "b1\n" })
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("rewind refuses with the preview when a file is unsafe; nothing moves", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, t2 } = yield* setup(env)
      env.fs.writeFile("/home/dev/project/b.txt", "a person's edit\n")
      const branch = activeBranch(yield* loadSession(sessionId))
      const refusal = yield* expectRefusal(
        editUserQuery({ sessionId, messageId: t2.messageId, text: "x", mode: "rewind" }),
        "unsafe_files",
      )
      expect(refusal.details).toMatchObject({ preview: { canApply: false, unsafe: [{ path: "b.txt" }] } })
      expect(activeBranch(yield* loadSession(sessionId))).toEqual(branch)
      expect(env.files()).toEqual({ "a.txt": "a1\n", "b.txt": "a person's edit\n" })
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("rewind refuses with the preview when a shell-like tool changed a file", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, t2 } = yield* setup(env, "Bash")
      const refusal = yield* expectRefusal(
        editUserQuery({ sessionId, messageId: t2.messageId, text: "x", mode: "rewind" }),
        "unsafe_files",
      )
      expect(refusal.details).toMatchObject({ preview: { ignored: [{ path: "b.txt", toolName: "Bash" }] } })
      expect(env.files()).toEqual({ "a.txt": "a1\n", "b.txt": "b1\n" })
      expect(yield* userTexts(sessionId)).toEqual(["first question", "second question"])
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("rewind refuses when the turn changed no file", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId } = yield* setup(env)
      const t3 = yield* userTurn(sessionId, "just talk")
      yield* reply(sessionId, t3.turnId)
      yield* expectRefusal(
        editUserQuery({ sessionId, messageId: t3.messageId, text: "x", mode: "rewind" }),
        "nothing_to_undo",
      )
      expect(yield* userTexts(sessionId)).toEqual(["first question", "second question", "just talk"])
    }).pipe(Effect.provide(env.layer()))
  })
})

describe("retryTurn", () => {
  it.effect("resends the last reply's question, read before the cut", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, t2 } = yield* setup(env)
      const result = yield* retryTurn({ sessionId })
      expect(result.text).toBe("second question")
      expect(result.turnId).not.toBe(t2.turnId)
      expect(yield* userTexts(sessionId)).toEqual(["first question", "second question"])
      const state = yield* loadSession(sessionId)
      expect(activeBranch(state)).not.toContain(t2.messageId)
      expect(activeBranch(state).at(-1)).toBe(result.messageId)
      // Files are untouched by a retry.
      expect(env.files()).toEqual({ "a.txt": "a1\n", "b.txt": "b1\n" })
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("only the last reply can be retried", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, t1 } = yield* setup(env)
      const state = yield* loadSession(sessionId)
      const firstReply = activeBranch(state).find(
        (id) => state.messages.get(id)!.role === "assistant" && state.messages.get(id)!.turnId === t1.turnId,
      )!
      yield* expectRefusal(retryTurn({ sessionId, messageId: firstReply }), "not_last_turn")
      expect(yield* userTexts(sessionId)).toEqual(["first question", "second question"])
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect(
    "refuses while the last question still awaits its reply, cutting nothing (issue 21 item 16)",
    () => {
      const env = makeEnv()
      return Effect.gen(function* () {
        const { sessionId } = yield* setup(env)
        const t3 = yield* userTurn(sessionId, "third question, no reply yet")
        const before = activeBranch(yield* loadSession(sessionId))
        yield* expectRefusal(retryTurn({ sessionId }), "not_last_turn")
        const after = activeBranch(yield* loadSession(sessionId))
        expect(after).toEqual(before)
        expect(after.at(-1)).toBe(t3.messageId)
        expect(yield* userTexts(sessionId)).toEqual([
          "first question",
          "second question",
          "third question, no reply yet",
        ])
      }).pipe(Effect.provide(env.layer()))
    },
  )
})
