/**
 * The fork capability: the fork boundary, forks at a message and from a checkpoint (with its restore
 * plan), side chats, subagent carry, rewind by fork, the fork bundle with its validation and commit,
 * and the fork workspace restore.
 */
export * from "./forkAtMessage.js"
export { type ForkBoundaryAt, planForkBase } from "./forkBase.js"
export * from "./forkBoundary.js"
export type { ForkOutcome } from "./forkCommit.js"
export { forkNotices } from "./forkedChild.js"
export * from "./forkFromCheckpoint.js"
export * from "./forkWorkspaceRestore.js"
export * from "./forkWorkspaceRestoreService.js"
export { applyMerge, type MergeConflict, type MergeOptions, previewMerge } from "./mergeSessions.js"
export * from "./planForkRestore.js"
export * from "./rewindByFork.js"
export { commonBase, currentTree, diffSessions } from "./sessionTrees.js"
export * from "./sideChat.js"
export * from "./subagentCarry.js"
export * from "./validateForkBundle.js"
