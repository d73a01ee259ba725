/**
 * The declared `Rewind` service: its interface (`RewindApi`), the `Rewind` tag, the operation
 * table host surfaces are derived from (`RewindOperations`), the argument and success Schemas, and
 * `layerRewind`, which builds the engine over the ports a host supplies.
 */
export {
  type Answer,
  type CaptureOptions as RewindCaptureOptions,
  type CleanupOptions as RewindCleanupOptions,
  type DoctorOptions as RewindDoctorOptions,
  type PointDiffOptions as RewindPointDiffOptions,
  Rewind,
  type RewindApi,
  type RewindError,
} from "./api.js"
export * as RewindArguments from "./arguments.js"
export { decodeArguments, type OperationArgument } from "./arguments.js"
export { layerRewind, type RewindPorts } from "./layer.js"
export { type OperationSpec, RewindOperations, type SuccessOf } from "./operations.js"
export * as RewindResults from "./results.js"
export * as RewindTreeResults from "./treeResults.js"
