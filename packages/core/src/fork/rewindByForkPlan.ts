/**
 * What a rewind by fork (rewindByFork.ts) would do, decided over a session's state alone: the
 * branch the child keeps and, per file changed at or after the message (cut branches included:
 * their writes are in the workspace too), the version it had before its first such change; and
 * the list of user messages a rewind by fork can go back to (a `/rewind` picker's rows). Reads
 * only; refusals are values (`RewindByForkPlan`).
 */
import type {
  CheckpointId,
  MessageId,
  PlannedFileRestore,
  RefusalKind,
  SessionId,
  TurnId,
  WorkspacePath,
} from "@rewind/contracts"
import { Effect } from "effect"
import { branchView } from "../session/branchView.js"
import { loadSession } from "../session/loadSession.js"
import type { SessionState } from "../session/sessionState.js"
import { messageText } from "../session/transcript.js"

export interface RewindPoint {
  readonly messageId: MessageId
  readonly turnId: TurnId
  /** The message's original prompt text. */
  readonly prompt: string
  readonly createdAt: number
  /** Files a rewind to this point would put back (their content before the turn changed them). */
  readonly paths: ReadonlyArray<WorkspacePath>
}

export type RewindByForkPlan =
  | {
      readonly ok: true
      readonly messageId: MessageId
      readonly prompt: string
      /** The active branch before the message: what the child keeps. */
      readonly prefix: ReadonlyArray<MessageId>
      /** Per file, its version before its first change at or after the message. */
      readonly files: ReadonlyArray<PlannedFileRestore>
      /** Every live checkpoint at or after the message: what the restore undoes. */
      readonly checkpointIds: ReadonlyArray<CheckpointId>
    }
  | { readonly ok: false; readonly kind: RefusalKind; readonly message: string }

const failed = (kind: RefusalKind, message: string): RewindByForkPlan => ({ ok: false, kind, message })

/**
 * What rewinding to `messageId` by a fork means, over the session's state: the branch before the
 * message, and the files changed from it onward (in stream time, cut branches included: their
 * writes are in the workspace too) with the version each had before its first such change.
 */
export const planRewindByFork = (state: SessionState, messageId: MessageId): RewindByForkPlan => {
  const message = state.messages.get(messageId)
  if (message === undefined) return failed("not_found", `message ${messageId} is not in this session`)
  const view = branchView(state)
  const position = view.positions.get(messageId)
  if (position === undefined) {
    return failed("not_on_active_branch", `message ${messageId} was cut by a rewind; it cannot be rewound to`)
  }
  if (message.role !== "user" || state.turns.get(message.turnId)?.userMessageId !== messageId) {
    return failed("not_a_user_message", `message ${messageId} is not the user message that starts a turn`)
  }
  if (position === 0) {
    return failed(
      "invalid_input",
      `message ${messageId} is the first of the session: there is no conversation before it to fork; start a new session instead`,
    )
  }
  const pointIndex = state.messageIndex.get(messageId)!
  const first = new Map<WorkspacePath, PlannedFileRestore>()
  const checkpointIds: Array<CheckpointId> = []
  for (const c of state.checkpoints) {
    const anchorIndex = state.messageIndex.get(c.anchorMessageId)
    if (anchorIndex === undefined || anchorIndex < pointIndex) continue
    if (!state.spentCheckpointIds.has(c.checkpointId)) checkpointIds.push(c.checkpointId)
    if (!first.has(c.path))
      first.set(c.path, { path: c.path, version: c.before, checkpointId: c.checkpointId })
  }
  return {
    ok: true,
    messageId,
    prompt: messageText(state, message),
    prefix: view.messageIds.slice(0, position),
    files: [...first.values()],
    checkpointIds,
  }
}

/** The user messages of the active branch a rewind by fork can go back to, oldest first. */
export const listRewindPoints = (sessionId: SessionId) =>
  Effect.map(loadSession(sessionId), (state) => {
    const points: Array<RewindPoint> = []
    for (const id of branchView(state).messageIds) {
      const message = state.messages.get(id)!
      if (message.role !== "user") continue
      const plan = planRewindByFork(state, id)
      if (!plan.ok) continue
      points.push({
        messageId: id,
        turnId: message.turnId,
        prompt: plan.prompt,
        createdAt: message.createdAt,
        paths: plan.files.map((f) => f.path),
      })
    }
    return points
  })
