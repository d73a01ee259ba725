/**
 * The durable record of a multi-file restore: what each file held before (its rescue version) and
 * what the restore means it to hold (its planned version), written before the first file is
 * touched, so that after a crash the operation can be finished or undone file by file. A completed
 * restore leaves a redo entry: everything needed to bring back the state it replaced.
 */
import { Schema } from "effect"
import { FileVersion } from "./checkpoint.js"
import { CheckpointId, MessageId, OperationId, SessionId } from "./ids.js"
import { compilePlain, INVALID } from "./internal/plainCodec.js"
import { WorkspacePath } from "./workspacePath.js"

/** Which program wrote the operation; recovery treats them all alike. */
export const OperationKind = Schema.Literal(
  "file_rewind_apply",
  "cascade",
  "direct_restore",
  "fork_restore",
  "redo",
  "point_restore",
  "fork_materialise",
)
export type OperationKind = typeof OperationKind.Type

/** One file of an operation: its content before (kept as the rescue point) and after. */
export const JournaledFile = Schema.Struct({
  path: WorkspacePath,
  rescue: FileVersion,
  planned: FileVersion,
})
export type JournaledFile = typeof JournaledFile.Type

/**
 * One symlink an operation removes, creates or retargets: its target before (`rescue`) and after
 * (`planned`), null where no link is. File versions cannot say "a link was here", so without this a
 * redo or a recovery would leave a link the restore made, or lose one it removed.
 */
export const JournaledLink = Schema.Struct({
  path: WorkspacePath,
  rescue: Schema.NullOr(Schema.String),
  planned: Schema.NullOr(Schema.String),
})
export type JournaledLink = typeof JournaledLink.Type

/**
 * The tree an isolated fork is materialising (`fork_materialise`, which journals no files): the
 * private directory it is written into and the target it is renamed onto, and the child session
 * that records it once committed. After a crash, `recover()` removes the private directory, and
 * reports a tree renamed into place whose child was never committed.
 */
export const JournaledTree = Schema.Struct({
  root: Schema.String,
  staging: Schema.String,
  childSessionId: SessionId,
})
export type JournaledTree = typeof JournaledTree.Type

/**
 * What a redo needs besides the files: the conversation as it was before the restore. An entry
 * with neither `branchAtVersion` nor `activeBranch` (a point restore's: it never moves the
 * conversation) brings back no branch: the redo leaves the conversation as it is.
 */
export const RedoConversation = Schema.Struct({
  /**
   * The session's version before the restore: the active branch a redo brings back is the one its
   * events up to this version give. A version instead of the branch itself keeps every intent
   * small, however long the session (the branch is computed only when a redo needs it).
   */
  branchAtVersion: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
  /** The active branch before the restore, exactly, as intents written before `branchAtVersion` hold it. */
  activeBranch: Schema.optional(Schema.Array(MessageId)),
  /** Checkpoints the restore marked spent; a redo makes them undoable again. */
  spentCheckpointIds: Schema.Array(CheckpointId),
})
export type RedoConversation = typeof RedoConversation.Type

export const OperationIntent = Schema.Struct({
  operationId: OperationId,
  sessionId: SessionId,
  kind: OperationKind,
  files: Schema.Array(JournaledFile),
  /** The symlinks the operation changes (absent on intents that change none). */
  links: Schema.optional(Schema.Array(JournaledLink)),
  /** For `fork_materialise`: the tree being made. */
  tree: Schema.optional(JournaledTree),
  startedAt: Schema.Number,
  /** Present when the operation, once complete, can be redone (undone back to the rescue state). */
  redo: Schema.optional(RedoConversation),
  /** For a redo: the operation whose redo entry it consumes. */
  redoes: Schema.optional(OperationId),
  /**
   * For a files-and-conversation rewind: the user message the conversation cursor goes back to,
   * committed together with the files' record, so that `recover()` continuing the operation moves
   * the cursor too and files and conversation agree again.
   */
  cursorTarget: Schema.optional(MessageId),
})
export type OperationIntent = typeof OperationIntent.Type

// An intent written before `branchAtVersion` carries the whole active branch of its session (for
// redo): on a long session that is tens of thousands of ids, which Effect's schema interpreter
// decodes one by one. The compiled checker (the one the event codec uses) accepts exactly what the
// schema accepts; a value it rejects goes through the schema codec, so the error is the schema's own.
const plainIntent = compilePlain(OperationIntent.ast)
const encodeIntentSlowly = Schema.encodeSync(Schema.parseJson(OperationIntent))
const decodeIntentSlowly = Schema.decodeUnknownSync(Schema.parseJson(OperationIntent))

/** An intent as JSON text, checked against its schema (a schema error is thrown). */
export const encodeOperationIntentJson = (intent: OperationIntent): string => {
  const checked = plainIntent === undefined ? INVALID : plainIntent(intent)
  return checked === INVALID ? encodeIntentSlowly(intent) : JSON.stringify(checked)
}

/** An intent from JSON text, checked against its schema (a damaged row throws, never misreads). */
export const decodeOperationIntentJson = (json: string): OperationIntent => {
  if (plainIntent !== undefined) {
    let parsed: unknown
    try {
      parsed = JSON.parse(json)
    } catch {
      return decodeIntentSlowly(json)
    }
    const checked = plainIntent(parsed)
    if (checked !== INVALID) return checked as OperationIntent
  }
  return decodeIntentSlowly(json)
}

export const OperationStatus = Schema.Literal("pending", "committed", "rolled_back")
export type OperationStatus = typeof OperationStatus.Type

export const OperationStep = Schema.Struct({
  step: Schema.Number,
  path: WorkspacePath,
  state: Schema.Literal("writing", "written"),
  at: Schema.Number,
})
export type OperationStep = typeof OperationStep.Type

export const OperationRecord = Schema.Struct({
  intent: OperationIntent,
  status: OperationStatus,
  steps: Schema.Array(OperationStep),
  finishedAt: Schema.optional(Schema.Number),
  /** For a committed operation with a redo entry: whether the redo was used (or invalidated). */
  redoConsumed: Schema.Boolean,
})
export type OperationRecord = typeof OperationRecord.Type
