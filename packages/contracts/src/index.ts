/**
 * @rewind/contracts: the schemas every Rewind package shares. Data only; no I/O.
 */
export * from "./checkpoint.js"
export * from "./errors.js"
export * from "./events.js"
export * from "./executionContext.js"
export * from "./fileRewind.js"
export * from "./fork.js"
export * from "./forkEvents.js"
export * from "./goal.js"
export * from "./ids.js"
export * from "./message.js"
export * from "./points.js"
export * from "./refusal.js"
export * from "./rewind.js"
export * from "./session.js"
export * from "./workspace.js"
export * from "./workspacePath.js"
