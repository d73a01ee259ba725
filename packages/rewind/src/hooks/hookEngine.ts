/**
 * `HookEngine`: the handful of engine calls the hook adapters make, and nothing else, so the
 * hook can be served by an engine in this process (`inProcessHookEngine`, over the facade) or by
 * a running `rewind serve` without `runHook.ts` changing.
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
import {
  ID_PATTERN,
  type PreImage,
  type SessionId,
  type TurnId,
  type WorkspacePath,
  type WriteIntentDeclared,
} from "@rewind/contracts"
import {
  ArtifactStore,
  branchView,
  type CaptureOutcome,
  declareWriteIntent,
  type FileMutationResult,
  loadSession,
  recordFileMutation,
  Workspace,
} from "@rewind/core"
import { Effect, Option } from "effect"
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
   * file holds now.
   */
  readonly recordAfter: (input: {
    readonly sessionId: SessionId
    readonly turnId: TurnId
    readonly intentId: TurnId
    readonly path: WorkspacePath
    readonly toolName: string
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

const INTENT_MARK = ".pre."

/** The pre-image a write intent kept for `path`: the exact one, else the turn's newest naming it. */
const findPreImage = (
  intents: ReadonlyArray<WriteIntentDeclared>,
  turnId: TurnId,
  intentId: TurnId,
  path: WorkspacePath,
): PreImage | undefined => {
  const entryOf = (intent: WriteIntentDeclared) => intent.entries.find((e) => e.path === path)?.preImage
  const exact = intents.findLast((i) => i.turnId === intentId && entryOf(i) !== undefined)
  if (exact !== undefined) return entryOf(exact)
  const ofTurn = intents.findLast(
    (i) => i.turnId.startsWith(`${turnId}${INTENT_MARK}`) && entryOf(i) !== undefined,
  )
  return ofTurn === undefined ? undefined : entryOf(ofTurn)
}

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
export const inProcessHookEngine = (rewind: Rewind): HookEngine => ({
  ensureSession: async (sessionId, title, cwd) => {
    const created = await rewind.createSession({ sessionId, title, cwd })
    // `conflict`: it exists already (or another hook process created it a moment ago).
    if (!created.ok && created.refusal.kind !== "conflict") {
      throw new HookEngineError(`the session could not be created: ${created.refusal.message}`)
    }
  },
  openTurn: (sessionId) =>
    must(
      "reading the session",
      rewind.outcome(
        Effect.map(loadSession(sessionId), (state) => {
          const view = branchView(state)
          let open: TurnId | undefined
          for (const turn of state.turns.values()) {
            if (turn.status === "running" && view.positions.has(turn.userMessageId)) open = turn.id
          }
          return open
        }),
      ),
    ),
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
    await must("storing the before-content", rewind.outcome(declareWriteIntent(sessionId, intentId, paths)))
  },
  recordAfter: ({ sessionId, turnId, intentId, path, toolName }) =>
    rewind.run(
      Effect.gen(function* () {
        const state = yield* loadSession(sessionId)
        const preImage = findPreImage(state.writeIntents, turnId, intentId, path)
        if (preImage === undefined) {
          return {
            recorded: false,
            warning: {
              reason: "invalid_input",
              message: `no before-content of ${path} was stored (its before-tool hook did not run); no checkpoint, the turn's point still covers the file`,
            },
          } satisfies FileMutationResult
        }
        if (preImage.state === "link" || preImage.state === "unreadable") {
          return {
            recorded: false,
            warning: {
              reason: "invalid_input",
              message: `${path} was ${preImage.state === "link" ? "a symbolic link" : `unreadable (${preImage.detail})`} before the tool ran; no checkpoint`,
            },
          } satisfies FileMutationResult
        }
        const before =
          preImage.state === "absent"
            ? null
            : yield* Effect.flatMap(ArtifactStore, (a) => a.get(preImage.hash))
        const now = yield* Effect.flatMap(Workspace, (w) => w.read(path))
        const after = Option.match(now, { onNone: () => null, onSome: (f) => f.content })
        if (before === null && after === null) {
          return {
            recorded: false,
            warning: { reason: "unchanged", message: `${path} did not exist before the tool ran, nor after` },
          } satisfies FileMutationResult
        }
        return yield* recordFileMutation({
          sessionId,
          turnId,
          path,
          toolName,
          before,
          after,
          ...(preImage.state === "file" ? { beforeMode: preImage.mode } : {}),
          ...(Option.isSome(now) ? { afterMode: now.value.mode } : {}),
        })
      }),
    ),
})
