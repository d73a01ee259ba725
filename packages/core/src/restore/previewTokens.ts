/**
 * Preview tokens: proof that a person saw a preview before its restore is applied.
 *
 * A token is 256 random bits from the IdGenerator, scoped to one session and one target, valid for
 * five minutes by the Clock, and good for one use. The store keeps only its SHA-256 digest (as a
 * command fact), so reading the store does not reveal a usable token. Single use is enforced by a
 * second command fact whose (session, id) key can be written once, across processes.
 */
import { createHash } from "node:crypto"
import { CommandAlreadyRecorded, refuse, type SessionId } from "@rewind/contracts"
import { Clock, Effect, Option } from "effect"
import { IdGenerator } from "../ports/IdGenerator.js"
import { SessionStore } from "../ports/SessionStore.js"

export const PREVIEW_TOKEN_TTL_MS = 5 * 60 * 1000

export interface PreviewTokenRecord {
  readonly target: string
  readonly issuedAt: number
  readonly expiresAt: number
  /** A digest of what the preview showed, so apply can tell the plan it is applying is the one seen. */
  readonly planDigest: string
}

const digest = (token: string) => createHash("sha256").update(token, "utf8").digest("hex")
const issuedKey = (token: string) => `preview-token:${digest(token)}`
const spentKey = (token: string) => `preview-token-spent:${digest(token)}`

const TOKEN_SHAPE = /^rwt1\.[A-Za-z0-9._:-]{1,200}$/

/** Issues a token for a preview of `target` (a point, message or turn id) in a session. */
export const issuePreviewToken = (sessionId: SessionId, target: string, planDigest: string) =>
  Effect.gen(function* () {
    const ids = yield* IdGenerator
    const store = yield* SessionStore
    const issuedAt = yield* Clock.currentTimeMillis
    const token = `rwt1.${yield* ids.secret()}`
    const record: PreviewTokenRecord = {
      target,
      issuedAt,
      expiresAt: issuedAt + PREVIEW_TOKEN_TTL_MS,
      planDigest,
    }
    yield* store.commit({
      appends: [],
      facts: [{ sessionId, commandId: issuedKey(token), result: record, at: issuedAt }],
    })
    return { token, expiresAt: record.expiresAt }
  })

/**
 * Checks a token for `target` without spending it. Refuses `token_invalid` (malformed, unknown, or
 * issued for another session or target), `token_expired`, or `token_used`.
 */
export const checkPreviewToken = (sessionId: SessionId, target: string, token: string) =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    if (!TOKEN_SHAPE.test(token)) return yield* refuse("token_invalid", "that is not a Rewind preview token")
    const issued = yield* store.getCommandFact(sessionId, issuedKey(token))
    if (Option.isNone(issued)) {
      return yield* refuse(
        "token_invalid",
        "this token was not issued for this session; run the preview again",
      )
    }
    const record = issued.value.result as PreviewTokenRecord
    if (record.target !== target) {
      return yield* refuse("token_invalid", `this token was issued for ${record.target}, not ${target}`)
    }
    const now = yield* Clock.currentTimeMillis
    if (now >= record.expiresAt) {
      return yield* refuse(
        "token_expired",
        "this preview token expired (tokens last 5 minutes); run the preview again",
      )
    }
    if (Option.isSome(yield* store.getCommandFact(sessionId, spentKey(token)))) {
      return yield* refuse("token_used", "this preview token was already used; run the preview again")
    }
    return record
  })

/**
 * Checks a token for `target` and spends it. Refuses like `checkPreviewToken`; on success the
 * token can never be redeemed again (the spent fact is write-once, so of two concurrent redeems
 * exactly one wins).
 */
export const redeemPreviewToken = (sessionId: SessionId, target: string, token: string) =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    const record = yield* checkPreviewToken(sessionId, target, token)
    const now = yield* Clock.currentTimeMillis
    yield* store
      .commit({
        appends: [],
        facts: [{ sessionId, commandId: spentKey(token), result: { spentAt: now }, at: now }],
      })
      .pipe(
        Effect.catchIf(
          (e): e is CommandAlreadyRecorded => e instanceof CommandAlreadyRecorded,
          () => refuse("token_used", "this preview token was already used; run the preview again"),
        ),
      )
    return record
  })
