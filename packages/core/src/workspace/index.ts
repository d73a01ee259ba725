/**
 * The workspace capability: path confinement, the confined workspace kit, the protection policy and
 * ignore rules, and content hashing.
 */
export * from "./confinedWorkspace.js"
export * from "./contentHash.js"
export * from "./ignoreRules.js"
export * from "./protection.js"
export * from "./workspaceConfinement.js"
