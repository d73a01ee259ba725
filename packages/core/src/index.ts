/**
 * @rewind/core: the domain. Pure projections (evolve, active branch, evaluation) and Effect
 * programs over ports; no filesystem, SQL or adapter imports.
 */
export * from "./activeBranch.js"
export * from "./branchView.js"
export * from "./evaluateRewindTarget.js"
export * from "./loadSession.js"
export * from "./ports/BackgroundTasks.js"
export * as IdGenerators from "./ports/IdGenerator.js"
export { IdGenerator, type IdGeneratorService } from "./ports/IdGenerator.js"
export * from "./ports/SessionStore.js"
export * from "./previewTokens.js"
export * from "./rewindConversation.js"
export * from "./sessionCommands.js"
export * from "./sessionState.js"
export * from "./transcript.js"
