/**
 * `HookEngine`: the handful of engine calls the hook adapters make, and nothing else. Each is
 * one or two operations of the declared `Rewind` service (`RewindOperations`: `createSession`,
 * `runningTurn`, `appendUserMessage`, `appendReply`, `completeTurn(WithBoundary)`, `capturePoint`,
 * `declareWriteIntent`, `recordCheckpointFromIntent`), called through the facade of an open
 * Rewind — in the hook's own process, or in the `rewind serve` the hook client reached (the
 * server runs the translation next to the engine, so a hook costs one round trip).
 *
 * Invariants:
 * - the pending before-content of a file tool is kept in the store, never in a temp file: the
 *   before-event declares a write intent (the engine stores the pre-image in the artifact store
 *   and the record in the session stream) under an intent id derived from the tool call
 *   (`intentTurnId`); the after-event finds that intent, so the two hook processes share nothing
 *   but the store;
 * - every call either resolves or rejects with an error whose message says what went wrong; none
 *   of them is retried here (the engine retries its own version conflicts).
 */
import { createHash } from "node:crypto"
import { ID_PATTERN, type SessionId, type TurnId, type WorkspacePath } from "@rewind/contracts"
import type { CaptureOutcome, ExpectedAfter, FileMutationResult } from "@rewind/core"
import type { Rewind } from "../openRewind.js"
import type { HookAgent } from "./hookEvent.js"

export interface HookEngine {
  /** Creates the session the first time a host session is seen; a no-op afterwards. */
  readonly ensureSession: (sessionId: SessionId, title: string, cwd: string) => Promise<void>
  /** The session's running turn on the active branch, if there is one. */
  readonly openTurn: (sessionId: SessionId) => Promise<TurnId | undefined>
  /** Appends the user's prompt and starts its turn (`turnId` when the caller needs a known id). */
  readonly startTurn: (sessionId: SessionId, text: string, turnId?: TurnId) => Promise<TurnId>
  /** Appends the agent's reply (when the host gave one) and completes the turn. */
  readonly endTurn: (
    sessionId: SessionId,
    turnId: TurnId,
    reply: string | undefined,
    status: "completed" | "aborted",
  ) => Promise<void>
  /** Captures a point of the workspace for (session, point turn id). Never rejects for a capture problem. */
  readonly capture: (sessionId: SessionId, pointTurnId: TurnId) => Promise<CaptureOutcome>
  /** Stores what the paths hold now, as a write intent named `intentId`. */
  readonly declareBefore: (
    sessionId: SessionId,
    intentId: TurnId,
    paths: ReadonlyArray<WorkspacePath>,
  ) => Promise<void>
  /**
   * Records a checkpoint of `path` in `turnId`: before = the pre-image of intent `intentId` (or,
   * when that intent is missing, the newest intent of the turn naming the path), after = what the
   * file holds now (`recordCheckpointFromIntent`).
   */
  readonly recordAfter: (input: {
    readonly sessionId: SessionId
    readonly turnId: TurnId
    readonly intentId: TurnId
    readonly path: WorkspacePath
    readonly toolName: string
    /** What the tool says the file now holds (lets the read skip the settle wait on a match). */
    readonly expected?: ExpectedAfter
  }) => Promise<FileMutationResult>
}

const digest = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 32)

/**
 * The Rewind session mirroring one host session: the same id every time the host names that
 * session (a resumed session keeps its id, so it finds its own; a forked one has a new id, so it
 * gets its own). A host id the id alphabet cannot hold is hashed.
 */
export const hookSessionId = (agent: HookAgent, hostSessionId: string): SessionId => {
  const plain = `${agent}.${hostSessionId}`
  return (ID_PATTERN.test(plain) ? plain : `${agent}.h${digest(hostSessionId)}`) as SessionId
}

/** The write intent of one tool call of a turn. */
export const intentTurnId = (turnId: TurnId, pairKey: string): TurnId =>
  `${turnId}.pre.${digest(pairKey)}` as TurnId

/** The point captured after one shell call of a turn (a turn's own point is its start). */
export const shellPointTurnId = (turnId: TurnId, pairKey: string): TurnId =>
  `${turnId}.shell.${digest(pairKey)}` as TurnId

class HookEngineError extends Error {}

const must = async <A>(
  what: string,
  outcome: Promise<{ ok: true; value: A } | { ok: false; refusal: { kind: string; message: string } }>,
): Promise<A> => {
  const o = await outcome
  if (!o.ok) throw new HookEngineError(`${what} refused (${o.refusal.kind}): ${o.refusal.message}`)
  return o.value
}

/** The engine in this process: the facade of an open Rewind. */
export const facadeHookEngine = (rewind: Rewind): HookEngine => ({
  ensureSession: async (sessionId, title, cwd) => {
    const created = await rewind.createSession({ sessionId, title, cwd })
    // `conflict`: it exists already (or another hook process created it a moment ago).
    if (!created.ok && created.refusal.kind !== "conflict") {
      throw new HookEngineError(`the session could not be created: ${created.refusal.message}`)
    }
  },
  openTurn: (sessionId) => must("reading the session", rewind.runningTurn(sessionId)),
  startTurn: async (sessionId, text, turnId) =>
    (
      await must(
        "recording the prompt",
        rewind.appendUserMessage(sessionId, { text, ...(turnId === undefined ? {} : { turnId }) }),
      )
    ).turnId,
  endTurn: async (sessionId, turnId, reply, status) => {
    if (reply !== undefined && reply.length > 0) {
      await must(
        "recording the reply",
        rewind.appendReply(sessionId, { turnId, parts: [{ kind: "text", text: reply }] }),
      )
      // With a reply the turn can be forked at it later; the plain completion is the fallback.
      const pinned = await rewind.completeTurnWithBoundary(sessionId, turnId, status)
      if (pinned.ok) return
    }
    await must("completing the turn", rewind.completeTurn(sessionId, turnId, status))
  },
  capture: async (sessionId, pointTurnId) => {
    const outcome = await rewind.capturePoint(sessionId, pointTurnId)
    if (!outcome.ok) return { _tag: "NotCaptured", reason: outcome.refusal.message }
    return outcome.value._tag === "NotCaptured"
      ? { _tag: "NotCaptured", reason: outcome.value.reason }
      : outcome.value
  },
  declareBefore: async (sessionId, intentId, paths) => {
    await must("storing the before-content", rewind.declareWriteIntent(sessionId, intentId, paths))
  },
  recordAfter: (input) => must("recording the checkpoint", rewind.recordCheckpointFromIntent(input)),
})
