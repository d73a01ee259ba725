/**
 * The session capability: the folded state of a session stream, its active branch and branch view,
 * loading, the commands that append to a stream, the records a session keeps, transcripts, subagents,
 * and the optional state cache.
 */
export * from "./activeBranch.js"
export * from "./branchView.js"
export * from "./loadSession.js"
export * from "./SessionStateCache.js"
export * from "./sessionCommands.js"
export * from "./sessionHistory.js"
export * from "./sessionRecords.js"
export * from "./sessionState.js"
export * from "./sessionWorkspace.js"
export * from "./subagents.js"
export * from "./transcript.js"
