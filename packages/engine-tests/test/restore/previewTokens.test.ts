import { describe, expect, it } from "@effect/vitest"
import { MemorySessionStore } from "@rewind/adapter-memory"
import type { SessionId } from "@rewind/contracts"
import {
  createSession,
  IdGenerators,
  issuePreviewToken,
  PREVIEW_TOKEN_TTL_MS,
  redeemPreviewToken,
  SessionStore,
} from "@rewind/core"
import { expectRefusal } from "@rewind/testkit"
import { Effect, Layer, TestClock } from "effect"

const layer = Layer.mergeAll(MemorySessionStore.layer, IdGenerators.layerRandom)

const session = (title: string) => createSession({ title, cwd: "/w" }).pipe(Effect.map((s) => s.id))

describe("preview tokens", () => {
  it.layer(layer)((it) => {
    it.effect("a token is redeemed once, for its own session and target", () =>
      Effect.gen(function* () {
        const a = yield* session("a")
        const { token, expiresAt } = yield* issuePreviewToken(a, "point_1", "plan-digest")
        expect(token).toMatch(/^rwt1\.[0-9a-f]{64}$/)
        expect(expiresAt).toBe(PREVIEW_TOKEN_TTL_MS)
        const record = yield* redeemPreviewToken(a, "point_1", token)
        expect(record.planDigest).toBe("plan-digest")
        yield* expectRefusal(redeemPreviewToken(a, "point_1", token), "token_used")
      }),
    )

    it.effect("refuses a token of another session, another target, a forged or malformed one", () =>
      Effect.gen(function* () {
        const a = yield* session("a")
        const b = yield* session("b")
        const { token } = yield* issuePreviewToken(a, "point_1", "d")
        yield* expectRefusal(redeemPreviewToken(b, "point_1", token), "token_invalid")
        yield* expectRefusal(redeemPreviewToken(a, "point_2", token), "token_invalid")
        yield* expectRefusal(redeemPreviewToken(a, "point_1", `rwt1.${"0".repeat(64)}`), "token_invalid")
        yield* expectRefusal(redeemPreviewToken(a, "point_1", "../../etc/passwd"), "token_invalid")
        // The refusals above did not spend it.
        yield* redeemPreviewToken(a, "point_1", token)
      }),
    )

    it.effect("expires after five minutes by the Clock", () =>
      Effect.gen(function* () {
        const a = yield* session("a")
        const { token } = yield* issuePreviewToken(a, "m1", "d")
        yield* TestClock.adjust(PREVIEW_TOKEN_TTL_MS)
        yield* expectRefusal(redeemPreviewToken(a, "m1", token), "token_expired")
      }),
    )

    it.effect("the store keeps only the token's digest", () =>
      Effect.gen(function* () {
        const a = yield* session("a")
        const { token } = yield* issuePreviewToken(a, "m1", "d")
        const store = yield* SessionStore
        const raw = yield* store.getCommandFact(a as SessionId, `preview-token:${token}`)
        expect(raw._tag).toBe("None")
      }),
    )
  })
})
