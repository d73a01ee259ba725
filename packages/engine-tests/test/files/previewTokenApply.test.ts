// Preview tokens on the file rewind path: every preview issues one, apply takes it and refuses
// (writing nothing) a missing, forged, foreign, re-targeted, expired, used or re-planned token.
import { describe, expect, it } from "@effect/vitest"
import { applyFileRewind, loadSession, PREVIEW_TOKEN_TTL_MS, previewFileRewind } from "@rewind/core"
import { expectRefusal } from "@rewind/testkit"
import { Duration, Effect, TestClock } from "effect"
import { agentWrite, type Env, makeEnv, newSession, reply, userTurn } from "../support/fileRewindEnv.js"

/** A session with two turns, each editing a file the agent owns. */
const setup = (env: Env) =>
  Effect.gen(function* () {
    env.fs.writeFile("/home/dev/project/a.txt", "a0\n")
    env.fs.writeFile("/home/dev/project/b.txt", "b0\n")
    const sessionId = yield* newSession
    const t1 = yield* userTurn(sessionId, "one")
    yield* agentWrite(env, sessionId, t1.turnId, "a.txt", "a1\n")
    yield* reply(sessionId, t1.turnId)
    const t2 = yield* userTurn(sessionId, "two")
    yield* agentWrite(env, sessionId, t2.turnId, "b.txt", "b1\n")
    yield* reply(sessionId, t2.turnId)
    return { sessionId, t1, t2 }
  })

/** Asserts that nothing was written and nothing was undone. */
const untouched = (env: Env, sessionId: Parameters<typeof loadSession>[0], files: Record<string, string>) =>
  Effect.gen(function* () {
    expect(env.files()).toEqual(files)
    expect((yield* loadSession(sessionId)).spentCheckpointIds.size).toBe(0)
  })

describe("preview tokens on preview/apply", () => {
  it.effect("every preview carries a fresh token that expires in five minutes", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, t2 } = yield* setup(env)
      const p1 = yield* previewFileRewind({ sessionId, turnId: t2.turnId })
      const p2 = yield* previewFileRewind({ sessionId, turnId: t2.turnId })
      expect(p1.token).toMatch(/^rwt1\./)
      expect(p2.token).not.toBe(p1.token)
      expect(p1.tokenExpiresAt).toBe(PREVIEW_TOKEN_TTL_MS)
      // Either token works once; the other stays valid until used.
      yield* applyFileRewind(p2)
      expect(env.files()).toEqual({ "a.txt": "a1\n", "b.txt": "b0\n" })
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("missing, malformed or forged tokens are token_invalid", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, t2 } = yield* setup(env)
      const before = env.files()
      const { token: _, ...preview } = yield* previewFileRewind({ sessionId, turnId: t2.turnId })
      yield* expectRefusal(applyFileRewind(preview), "token_invalid")
      yield* expectRefusal(applyFileRewind({ ...preview, token: "not a token" }), "token_invalid")
      yield* expectRefusal(applyFileRewind({ ...preview, token: `rwt1.${"f".repeat(64)}` }), "token_invalid")
      yield* untouched(env, sessionId, before)
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("a token of another session or another target is token_invalid", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, t1, t2 } = yield* setup(env)
      const other = yield* setup(env)
      const before = env.files()
      const mine = yield* previewFileRewind({ sessionId, turnId: t2.turnId })
      const theirs = yield* previewFileRewind({ sessionId: other.sessionId, turnId: other.t2.turnId })
      const elsewhere = yield* previewFileRewind({ sessionId, turnId: t1.turnId })
      // Foreign session: the other session's token on my preview.
      yield* expectRefusal(applyFileRewind({ ...mine, token: theirs.token! }), "token_invalid")
      // Another target in the same session.
      yield* expectRefusal(applyFileRewind({ ...mine, token: elsewhere.token! }), "token_invalid")
      yield* untouched(env, sessionId, before)
      yield* untouched(env, other.sessionId, before)
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("a token with a plan it was not issued for is token_invalid", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, t2 } = yield* setup(env)
      const before = env.files()
      const preview = yield* previewFileRewind({ sessionId, turnId: t2.turnId })
      const doctored = {
        ...preview,
        files: preview.files.map((f) => ({ ...f, targetHash: f.currentHash })),
      }
      yield* expectRefusal(applyFileRewind(doctored), "token_invalid")
      yield* untouched(env, sessionId, before)
      // The genuine preview still applies: a refused attempt does not spend the token.
      yield* applyFileRewind(preview)
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("an expired token is token_expired", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, t2 } = yield* setup(env)
      const before = env.files()
      const preview = yield* previewFileRewind({ sessionId, turnId: t2.turnId })
      yield* TestClock.adjust(Duration.millis(PREVIEW_TOKEN_TTL_MS))
      yield* expectRefusal(applyFileRewind(preview), "token_expired")
      yield* untouched(env, sessionId, before)
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("a used token is token_used, and so is the loser of two concurrent applies", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, t2 } = yield* setup(env)
      const preview = yield* previewFileRewind({ sessionId, turnId: t2.turnId })
      const results = yield* Effect.all(
        [Effect.either(applyFileRewind(preview)), Effect.either(applyFileRewind(preview))],
        { concurrency: 2 },
      )
      const refused = results.filter((r) => r._tag === "Left")
      expect(results.filter((r) => r._tag === "Right")).toHaveLength(1)
      expect(refused).toHaveLength(1)
      expect(refused[0]!.left).toMatchObject({ _tag: "Refused", kind: "token_used" })
      expect(env.files()).toEqual({ "a.txt": "a1\n", "b.txt": "b0\n" })
      yield* expectRefusal(applyFileRewind(preview), "token_used")
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("a file changed between preview and apply is refused with nothing written, token kept", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const { sessionId, t2 } = yield* setup(env)
      const preview = yield* previewFileRewind({ sessionId, turnId: t2.turnId })
      env.fs.writeFile("/home/dev/project/b.txt", "edited by a person\n")
      const before = env.files()
      const refusal = yield* expectRefusal(applyFileRewind(preview), "unsafe_files")
      expect(refusal.message).toContain("b.txt")
      yield* untouched(env, sessionId, before)
      // The refusal did not spend the token: with the file as the preview saw it, it applies.
      env.fs.writeFile("/home/dev/project/b.txt", "b1\n")
      yield* applyFileRewind(preview)
      expect(env.files()).toEqual({ "a.txt": "a1\n", "b.txt": "b0\n" })
    }).pipe(Effect.provide(env.layer()))
  })
})
