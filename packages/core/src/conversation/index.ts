/**
 * The conversation capability: evaluating a rewind target, rewinding the conversation cursor, and edit
 * & retry.
 */
export * from "./editAndRetry.js"
export * from "./evaluateRewindTarget.js"
export * from "./rewindConversation.js"
