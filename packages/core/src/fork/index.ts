/**
 * The fork capability: the fork boundary, forks at a message and from a checkpoint (with its restore
 * plan), side chats, subagent carry, rewind by fork, the fork bundle with its validation and commit,
 * and the fork workspace restore.
 */

export { carryLineageOf, currentSubagents, isCarryId } from "./carryLineage.js"
export {
  type ForkAtMessageInput,
  forkAtMessage,
} from "./forkAtMessage.js"
export { type ForkBoundaryAt, planForkBase } from "./forkBase.js"
export {
  completeTurnWithBoundary,
  type NoBoundaryReason,
} from "./forkBoundary.js"
export type { ForkOutcome } from "./forkCommit.js"
export { forkNotices } from "./forkedChild.js"
export {
  type ForkFromCheckpointInput,
  forkFromCheckpoint,
} from "./forkFromCheckpoint.js"
export {
  type ForkRestoreApplyInput,
  type ForkRestoreUnsafeReason,
  layerForkWorkspaceRestore,
} from "./forkWorkspaceRestore.js"
export {
  type ForkRestoreError,
  type ForkRestoreRequest,
  ForkWorkspaceRestore,
  type ForkWorkspaceRestoreService,
} from "./forkWorkspaceRestoreService.js"
export { applyMerge, type MergeConflict, type MergeOptions, previewMerge } from "./mergeSessions.js"
export {
  type ForkRestorePlan,
  NO_CHECKPOINT_MESSAGE,
} from "./planForkRestore.js"
export {
  type ConfirmRewindByForkInput,
  cancelRewindByFork,
  previewRewindByFork,
  type RewindByForkInput,
  type RewindByForkPreview,
  type RewindByForkResult,
  rewindByFork,
} from "./rewindByFork.js"
export { listRewindPoints, type RewindByForkPlan } from "./rewindByForkPlan.js"
export { commonBase, currentTree, diffSessions } from "./sessionTrees.js"
export {
  type CreateSideChatInput,
  createSideChat,
  SIDE_CHAT_REMINDER,
  SIDE_CHAT_TITLE,
  sideChatPrefix,
} from "./sideChat.js"
export {
  type CarryAfterRewindInput,
  type CarryInput,
  type CarryPlan,
  carrySubagentsAfterRewind,
} from "./subagentCarry.js"
export { validateForkBundle } from "./validateForkBundle.js"
