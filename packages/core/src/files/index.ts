/**
 * The files capability: recording a file mutation and its checkpoint content, the changes of a turn,
 * checkpoints from write intents, file-rewind preview and apply, and direct and cascade checkpoint restores.
 */
export * from "./applyFileRewind.js"
export * from "./checkpointContent.js"
export * from "./checkpointFromIntent.js"
export * from "./fileRewindPreview.js"
export * from "./fileRewindSettings.js"
export * from "./recordFileMutation.js"
export * from "./restoreCheckpoints.js"
export * from "./turnFileChanges.js"
