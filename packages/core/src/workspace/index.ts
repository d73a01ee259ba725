/**
 * The workspace capability: path confinement, the confined workspace kit, the protection policy and
 * ignore rules, and content hashing.
 */

export {
  type ConfinementOptions,
  type ProbedEntry,
  resolveConfined,
} from "./confinedPathResolution.js"
export {
  hashContent,
  toBytes,
} from "./contentHash.js"
export { compileIgnoreFile } from "./ignoreFileCompile.js"
export {
  checkProtection,
  makeProtectionCheck,
  StoreLocation,
} from "./protection.js"
export {
  type FileSystemPrimitives,
  makeConfinedWorkspace,
  type PrimitiveFailure,
} from "./workspaceFromPrimitives.js"
