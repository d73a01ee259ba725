import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import {
  decodeEvent,
  EVENT_VERSIONS,
  encodeEvent,
  Message,
  MessageAppended,
  type MessageId,
  type SessionId,
  type TurnId,
  WorkspacePath,
  workspacePathProblem,
} from "../src/index.js"

const appended = new MessageAppended({
  message: new Message({
    id: "m1" as MessageId,
    sessionId: "s1" as SessionId,
    turnId: "t1" as TurnId,
    role: "user",
    status: "ok",
    visibility: "all",
    createdAt: 5,
  }),
})

describe("event codec", () => {
  it.effect("round-trips an event through its JSON form", () =>
    Effect.gen(function* () {
      const encoded = JSON.parse(JSON.stringify(encodeEvent(appended)))
      expect(encoded.type).toBe("MessageAppended")
      expect(encoded.version).toBe(EVENT_VERSIONS.MessageAppended.version)
      const decoded = yield* decodeEvent(encoded)
      expect(decoded).toEqual(appended)
    }),
  )

  it.effect("refuses a version newer than this build instead of misreading it", () =>
    Effect.gen(function* () {
      const encoded = { ...encodeEvent(appended), version: 99 }
      const error = yield* Effect.flip(decodeEvent(encoded))
      expect(error._tag).toBe("EventDecodeError")
      expect(error.reason).toBe("unsupported_version")
      expect(error.message).toMatch(/version 99.*upgrade Rewind/)
    }),
  )

  it.effect("refuses unknown types, bad versions and malformed payloads", () =>
    Effect.gen(function* () {
      const unknown = yield* Effect.flip(decodeEvent({ type: "Nope", version: 1, payload: {} }))
      expect(unknown.reason).toBe("unknown_type")
      const badVersion = yield* Effect.flip(decodeEvent({ ...encodeEvent(appended), version: 0 }))
      expect(badVersion.reason).toBe("malformed")
      const malformed = yield* Effect.flip(
        decodeEvent({ type: "MessageAppended", version: 1, payload: { message: 1 } }),
      )
      expect(malformed.reason).toBe("malformed")
      const notObject = yield* Effect.flip(decodeEvent({ type: "MessageAppended", version: 1, payload: "x" }))
      expect(notObject.reason).toBe("malformed")
      const proto = yield* Effect.flip(decodeEvent({ type: "__proto__", version: 1, payload: {} }))
      expect(proto.reason).toBe("unknown_type")
    }),
  )

  it("rejects malformed ids at decode time", () => {
    const bad = JSON.parse(JSON.stringify(encodeEvent(appended)))
    bad.payload.message.id = "../../etc/passwd"
    expect(Either.isLeft(Effect.runSync(Effect.either(decodeEvent(bad))))).toBe(true)
  })
})

describe("WorkspacePath", () => {
  it.each(["a.txt", "src/deep/file.ts", "dir with space/ünïcode.md", ".hidden/x"])("accepts %s", (p) => {
    expect(workspacePathProblem(p)).toBeUndefined()
    expect(Schema.is(WorkspacePath)(p)).toBe(true)
  })
  it.each([
    "",
    "/etc/passwd",
    "../x",
    "a/../../b",
    "a//b",
    "./a",
    "a/./b",
    "a\u0000b",
    "C:/x",
    "a\\b",
    "x\ud800",
  ])("refuses %j", (p) => {
    expect(workspacePathProblem(p)).toBeTypeOf("string")
    expect(Schema.is(WorkspacePath)(p)).toBe(false)
  })
})
