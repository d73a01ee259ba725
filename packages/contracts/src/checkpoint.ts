/** Checkpoint records: one successful file mutation by a tool, with before and after content. */
import { Schema } from "effect"
import { CheckpointId, ContentHash, MessageId, TurnId } from "./ids.js"
import { WorkspacePath } from "./workspacePath.js"

/** A file's content at one moment: stored in the artifact store, or known not to exist. */
export const FileVersion = Schema.Union(
  Schema.TaggedStruct("present", {
    hash: ContentHash,
    /** POSIX permission bits, when the writer knew them. */
    mode: Schema.optional(Schema.Number),
  }),
  Schema.TaggedStruct("absent", {}),
)
export type FileVersion = typeof FileVersion.Type

export const Checkpoint = Schema.Struct({
  checkpointId: CheckpointId,
  turnId: TurnId,
  /** The user message of the turn: what `rewindToMessageCheckpoint(messageId)` and evaluation look for. */
  anchorMessageId: MessageId,
  toolMessageId: Schema.optional(MessageId),
  toolName: Schema.String,
  path: WorkspacePath,
  before: FileVersion,
  /** Absent only on records written before after-content was kept; the patch rebuilds it. */
  after: Schema.optional(FileVersion),
  /** A structured patch (JSON, as the `diff` package makes it) stored in the artifact store. */
  patchHash: Schema.optional(ContentHash),
  linesAdded: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
  linesRemoved: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
})
export type Checkpoint = typeof Checkpoint.Type
