/**
 * Decides what a rewind to a message can do (DESIGN §4): `active_chain`, `file_only` or
 * `unavailable`, which scopes are allowed, and which user message the rewind really targets.
 * Pure; it never returns `fork_required`, which only marks fork events.
 */
import type { CheckpointId, MessageId, RefusalKind, RewindScope, RewindStrategy } from "@rewind/contracts"
import { branchView } from "../session/branchView.js"
import type { SessionState } from "../session/sessionState.js"

export interface RewindEvaluation {
  readonly strategy: Exclude<RewindStrategy, "fork_required">
  readonly allowedScopes: ReadonlyArray<RewindScope>
  readonly requestedMessageId: MessageId
  /** The user message the rewind cuts before (an assistant id resolved for conversation scope). */
  readonly targetMessageId: MessageId | undefined
  readonly coveredByCompaction: boolean
  /** Live checkpoints at or after the target on the active branch, oldest first. */
  readonly checkpointIds: ReadonlyArray<CheckpointId>
  readonly refusal?: { readonly kind: RefusalKind; readonly message: string }
}

const ALL_SCOPES: ReadonlyArray<RewindScope> = ["conversation", "workspace", "both"]

const unavailable = (
  requestedMessageId: MessageId,
  kind: RefusalKind,
  message: string,
  extra: Partial<RewindEvaluation> = {},
): RewindEvaluation => ({
  strategy: "unavailable",
  allowedScopes: [],
  requestedMessageId,
  targetMessageId: undefined,
  coveredByCompaction: false,
  checkpointIds: [],
  ...extra,
  refusal: { kind, message },
})

export const evaluateRewindTarget = (
  state: SessionState,
  messageId: MessageId,
  scope: RewindScope,
): RewindEvaluation => {
  const message = state.messages.get(messageId)
  if (message === undefined)
    return unavailable(messageId, "not_found", `message ${messageId} is not in this session`)
  const view = branchView(state)
  if (!view.positions.has(messageId)) {
    return unavailable(
      messageId,
      "not_on_active_branch",
      `message ${messageId} is on a branch that an earlier rewind cut; it can no longer be a rewind target`,
    )
  }
  if (message.role === "summary") {
    return unavailable(
      messageId,
      "summary_target",
      "a compaction summary cannot be a rewind target; pick a user message",
    )
  }

  let targetMessageId: MessageId = messageId
  if (message.role !== "user") {
    // A retry names the assistant reply; only a conversation rewind may map it to its turn's question.
    const turn = state.turns.get(message.turnId)
    if (scope !== "conversation" || message.role !== "assistant" || turn === undefined) {
      return unavailable(
        messageId,
        "not_a_user_message",
        `message ${messageId} is a${message.role === "assistant" ? "n" : ""} ${message.role} message; ${scope} rewinds target a user message`,
      )
    }
    if (!view.positions.has(turn.userMessageId)) {
      return unavailable(
        messageId,
        "not_on_active_branch",
        `the user message of turn ${turn.id} is not on the active branch`,
      )
    }
    targetMessageId = turn.userMessageId
  }

  const targetPosition = view.positions.get(targetMessageId)!
  const checkpointIds: Array<CheckpointId> = []
  for (const c of state.checkpoints) {
    const anchorPosition = view.positions.get(c.anchorMessageId)
    if (
      anchorPosition !== undefined &&
      anchorPosition >= targetPosition &&
      !state.spentCheckpointIds.has(c.checkpointId)
    ) {
      checkpointIds.push(c.checkpointId)
    }
  }
  const hasCheckpoint = checkpointIds.length > 0
  const coveredByCompaction = view.coveredBy.has(targetMessageId)
  const base = { requestedMessageId: messageId, targetMessageId, coveredByCompaction, checkpointIds }

  if (scope !== "conversation" && !hasCheckpoint) {
    return unavailable(
      messageId,
      "no_checkpoint",
      "no file checkpoint was recorded at or after this message",
      base,
    )
  }
  if (coveredByCompaction && scope === "workspace") {
    return { strategy: "file_only", allowedScopes: ["workspace"], ...base }
  }
  return { strategy: "active_chain", allowedScopes: hasCheckpoint ? ALL_SCOPES : ["conversation"], ...base }
}
