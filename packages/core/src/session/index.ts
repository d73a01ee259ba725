/**
 * The session capability: the folded state of a session stream, its active branch and branch view,
 * loading, the commands that append to a stream, the records a session keeps, transcripts, subagents,
 * and the optional state cache.
 */
export { activeBranch } from "./activeBranch.js"
export { branchView } from "./branchView.js"
export {
  appendDecided,
  loadSession,
  retryOnVersionConflict,
} from "./loadSession.js"
export {
  layerSessionStateCache,
  SessionStateCache,
  type SessionStateCacheService,
} from "./SessionStateCache.js"
export {
  appendReply,
  appendUserMessage,
  applyCompaction,
  type CompactionInput,
  type CreateSessionInput,
  completeTurn,
  createSession,
  finishBackgroundTask,
  type PartInput,
  type ReplyInput,
  startBackgroundTask,
  type UserMessageInput,
} from "./sessionCommands.js"
export {
  type SessionHistory,
  type SessionHistoryEntry,
  sessionHistory,
} from "./sessionHistory.js"
export {
  type GoalInput,
  recordExecutionState,
  recordModelSelection,
  recordVerification,
  updateGoal,
  type VerificationInput,
} from "./sessionRecords.js"
export {
  projectSession,
  type SessionState,
} from "./sessionState.js"
export {
  type SpawnSubagentInput,
  spawnSubagent,
} from "./subagents.js"
export {
  messageText,
  type TranscriptEntry,
  transcript,
} from "./transcript.js"
