/**
 * The preview of a file rewind (DESIGN §5): which files would be put back and how, which are unsafe
 * and why, and which changes are ignored because a shell-like tool made them. A preview is a plain
 * value: a UI can show it, and `applyFileRewind` re-checks every hash in it before writing.
 */
import { Schema } from "effect"
import { CheckpointId, ContentHash, MessageId, SessionId, TurnId } from "./ids.js"
import { WorkspacePath } from "./workspacePath.js"

/** What a restore did (or would do) to one file. */
export const FileRestoreAction = Schema.Literal("restored", "deleted", "unchanged")
export type FileRestoreAction = typeof FileRestoreAction.Type

export const FileRewindUnsafeReason = Schema.Literal(
  /** The file's content is not what the agent last wrote: someone else changed it. */
  "external_modified",
  /** A snapshot is missing from the artifact store or does not match its hash. */
  "checkpoint_unreadable",
  /** The current file could not be read (I/O error, or a path the workspace refuses). */
  "file_read_failed",
  /** The record cannot be replayed: no after-content and its patch does not apply with zero fuzz. */
  "unsupported_checkpoint",
  /** Rewind's own store or a `.git` directory or file: the protection policy refuses it. */
  "protected",
  /** A directory on the way is a symlink now: nothing is written through a link. */
  "symlink_in_path",
)
export type FileRewindUnsafeReason = typeof FileRewindUnsafeReason.Type

export const FileRewindSelection = Schema.Union(
  /** Every live checkpoint from this user message onward. */
  Schema.TaggedStruct("message", { messageId: MessageId }),
  /** The live checkpoints of one turn (the "undo" beside a turn's change table). */
  Schema.TaggedStruct("turn", { turnId: TurnId }),
)
export type FileRewindSelection = typeof FileRewindSelection.Type

export const FileRewindPlannedFile = Schema.Struct({
  path: WorkspacePath,
  action: FileRestoreAction,
  /** The file's content hash when the preview read it; null when it did not exist. */
  currentHash: Schema.NullOr(ContentHash),
  /** The content hash it will have after the rewind; null when the rewind deletes it. */
  targetHash: Schema.NullOr(ContentHash),
  targetMode: Schema.optional(Schema.Number),
  /** The checkpoints peeled back for this file, newest first. */
  checkpointIds: Schema.Array(CheckpointId),
})
export type FileRewindPlannedFile = typeof FileRewindPlannedFile.Type

export const FileRewindUnsafeFile = Schema.Struct({
  /** As recorded; may be a path the workspace refuses (then the reason is `file_read_failed`). */
  path: Schema.String,
  reason: FileRewindUnsafeReason,
  message: Schema.String,
  checkpointId: CheckpointId,
  toolName: Schema.String,
  currentHash: Schema.optional(Schema.NullOr(ContentHash)),
  expectedHash: Schema.optional(Schema.NullOr(ContentHash)),
})
export type FileRewindUnsafeFile = typeof FileRewindUnsafeFile.Type

export const FileRewindIgnoredChange = Schema.Struct({
  checkpointId: CheckpointId,
  path: Schema.String,
  toolName: Schema.String,
  /**
   * Why it is left alone: a shell-like tool made it, or the path is excluded by the workspace's
   * ignore rules (`.gitignore`, `.rewindignore`, the built-in skip list), which a restore never
   * writes. Absent in previews made before the field existed (shell-like then).
   */
  reason: Schema.optional(Schema.Literal("shell_like_tool", "ignore_rule")),
})
export type FileRewindIgnoredChange = typeof FileRewindIgnoredChange.Type

export const FileRewindPreview = Schema.Struct({
  sessionId: SessionId,
  selection: FileRewindSelection,
  /** The checkpoints an apply would undo (shell-like ones excluded), newest first. */
  checkpointIds: Schema.Array(CheckpointId),
  files: Schema.Array(FileRewindPlannedFile),
  unsafe: Schema.Array(FileRewindUnsafeFile),
  ignored: Schema.Array(FileRewindIgnoredChange),
  /** True only when nothing is unsafe and at least one checkpoint would be undone. */
  canApply: Schema.Boolean,
  /**
   * The preview token (DESIGN §7): proof that this preview was seen, required by apply. Scoped to
   * the session and the selection, single use, valid until `tokenExpiresAt` (Clock millis).
   */
  token: Schema.optional(Schema.String),
  tokenExpiresAt: Schema.optional(Schema.Number),
})
export type FileRewindPreview = typeof FileRewindPreview.Type
