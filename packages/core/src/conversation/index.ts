/**
 * The conversation capability: evaluating a rewind target, rewinding the conversation cursor, and edit
 * & retry.
 */
export {
  type EditUserQueryInput,
  editUserQuery,
  type RetryTurnInput,
  retryTurn,
} from "./editAndRetry.js"
export { evaluateRewindTarget } from "./evaluateRewindTarget.js"
export {
  type ConversationRewindResult,
  type RewindConversationInput,
  rewindConversation,
} from "./rewindConversation.js"
