/**
 * What a file restore writes to the session stream: the `WorkspaceRewound` record, the hidden
 * notice that tells the model which files changed under it, and the best-effort `unavailable`
 * record of a restore that failed. Shared by direct restore, cascade and preview/apply.
 */
import {
  type CheckpointId,
  Message,
  MessageAppended,
  type MessageId,
  type OperationId,
  Part,
  PartAppended,
  type RewindScope,
  type SessionEvent,
  type SessionId,
  type TurnId,
  WorkspaceRewound,
} from "@rewind/contracts"
import { Clock, Effect } from "effect"
import { IdGenerator } from "../ports/IdGenerator.js"
import { lastActiveMessage } from "../session/activeBranch.js"
import { branchView } from "../session/branchView.js"
import { appendDecided, loadSession, retryOnVersionConflict } from "../session/loadSession.js"
import type { SessionState } from "../session/sessionState.js"
import type { FileOutcome } from "./journaledWrites.js"

/** The turn of a message, or `fallback` when there is none (or it is unknown). */
const turnOf = (state: SessionState, messageId: MessageId | undefined, fallback: TurnId): TurnId =>
  (messageId === undefined ? undefined : state.messages.get(messageId)?.turnId) ?? fallback

/**
 * The turn a notice is filed under when the cursor goes back to `target`: that of the last message
 * the branch keeps before it.
 */
export const noticeTurnBefore = (state: SessionState, target: MessageId, fallback: TurnId): TurnId => {
  const view = branchView(state)
  const position = view.positions.get(target) ?? 0
  return turnOf(state, position > 0 ? view.messageIds[position - 1] : undefined, fallback)
}

/** The turn a notice is filed under when the branch stays: that of its last message. */
export const lastBranchTurn = (state: SessionState, fallback: TurnId): TurnId =>
  turnOf(state, lastActiveMessage(state), fallback)

/** A model-only system message with a `notice` part naming the restored files. */
export const restoreNoticeEvents = (
  sessionId: SessionId,
  turnId: TurnId,
  input: {
    readonly operationId: OperationId
    readonly checkpointIds: ReadonlyArray<CheckpointId>
    readonly files: ReadonlyArray<FileOutcome>
  },
) =>
  Effect.gen(function* () {
    const ids = yield* IdGenerator
    const messageId = (yield* ids.next("msg")) as MessageId
    const partId = (yield* ids.next("part")) as Part["id"]
    const createdAt = yield* Clock.currentTimeMillis
    const changed = input.files.filter((f) => f.action !== "unchanged")
    const listed =
      changed.length === 0
        ? "no file content changed"
        : changed.map((f) => `${f.path} (${f.action})`).join(", ")
    const text = `Files in the workspace were restored from checkpoints: ${listed}. Their content on disk may differ from what earlier messages show; read a file again before editing it.`
    // Constructed unchecked: every store checks each event as it encodes it for the append, so a
    // second check of the same fields here would only double the cost of a restore's record.
    const events: Array<SessionEvent> = [
      new MessageAppended(
        {
          message: new Message(
            {
              id: messageId,
              sessionId,
              turnId,
              role: "system",
              status: "ok",
              visibility: "model_only",
              createdAt,
            },
            true,
          ),
        },
        true,
      ),
      new PartAppended(
        {
          part: new Part(
            {
              id: partId,
              messageId,
              kind: "notice",
              text,
              data: {
                kind: "files_restored",
                operationId: input.operationId,
                checkpointIds: [...input.checkpointIds],
                files: input.files.map((f) => ({ path: f.path, action: f.action })),
              },
            },
            true,
          ),
        },
        true,
      ),
    ]
    return events
  })

export interface RewoundRecord {
  readonly operationId: OperationId
  readonly scope: RewindScope
  readonly targetMessageId: MessageId | undefined
  readonly checkpointIds: ReadonlyArray<CheckpointId>
  readonly files: ReadonlyArray<FileOutcome>
}

/** Constructed unchecked, like the notice: the store checks it as it encodes it. */
export const workspaceRewound = (
  record: RewoundRecord,
  outcome: "applied" | "unavailable",
  reason?: string,
): WorkspaceRewound =>
  new WorkspaceRewound(
    {
      operationId: record.operationId,
      scope: record.scope,
      ...(record.targetMessageId === undefined ? {} : { targetMessageId: record.targetMessageId }),
      checkpointIds: [...record.checkpointIds],
      outcome,
      ...(reason === undefined ? {} : { reason }),
      files: record.files.map((f) => ({ path: f.path, action: f.action })),
    },
    true,
  )

/**
 * Appends events decided on the freshest state, retrying (`retryOnVersionConflict`) when another
 * writer got there first: another writer may append while files are being written.
 */
export const appendFresh = <E, R>(
  sessionId: SessionId,
  decide: (state: SessionState) => Effect.Effect<ReadonlyArray<SessionEvent>, E, R>,
  /** A state already loaded: tried first, and the session is reloaded only on a conflict. */
  loaded?: SessionState,
) => {
  let first = loaded
  return retryOnVersionConflict(
    Effect.gen(function* () {
      const state = first ?? (yield* loadSession(sessionId))
      first = undefined
      const events = yield* decide(state)
      return yield* appendDecided(state, sessionId, events)
    }),
  )
}

/**
 * Records that a file rewind failed (DESIGN §4: an `unavailable` outcome). Best effort: if the
 * store refuses this too, the caller's own error is what the host gets.
 */
export const recordUnavailable = (sessionId: SessionId, record: RewoundRecord, reason: string) =>
  appendFresh(sessionId, () => Effect.succeed([workspaceRewound(record, "unavailable", reason)])).pipe(
    Effect.asVoid,
    Effect.ignore,
  )
