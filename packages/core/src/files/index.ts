/**
 * The files capability: recording a file mutation and its checkpoint content, the changes of a turn,
 * checkpoints from write intents, file-rewind preview and apply, and direct and cascade checkpoint restores.
 */
export {
  type ApplyFileRewindOptions,
  applyFileRewind,
  type FileRewindApplyResult,
} from "./applyFileRewind.js"
export { StoredPatch } from "./checkpointContent.js"
export type { CheckpointFromIntentInput } from "./checkpointFromIntent.js"
export { ExpectedAfter, ExpectedEdit, expectedAfterContent } from "./expectedAfter.js"
export { previewFileRewind } from "./fileRewindPreview.js"
export {
  DEFAULT_SHELL_LIKE_TOOLS,
  defaultFileRewindSettings,
  FileRewindSettings,
} from "./fileRewindSettings.js"
export {
  type FileMutationInput,
  type FileMutationResult,
  type FileMutationWarning,
  type FileMutationWarningReason,
  recordFileMutation,
} from "./recordFileMutation.js"
export {
  type FileRestoreResult,
  type RewindCascadeInput,
  type RewindToCheckpointInput,
  type RewindToMessageCheckpointInput,
  rewindCascade,
  rewindToCheckpoint,
  rewindToMessageCheckpoint,
} from "./restoreCheckpoints.js"
export {
  getTurnFileChanges,
  type TurnFileChanges,
  turnFileChanges,
} from "./turnFileChanges.js"
