/**
 * The event a redo writes: the state before the last rewind came back. It carries the cursor that
 * makes the active branch exactly what it was before that rewind, and the checkpoints the rewind
 * had spent, which can be undone again now that their after-content is back.
 */
import { Schema } from "effect"
import { CheckpointId, OperationId } from "./ids.js"
import { RevertCursor } from "./rewind.js"
import { WorkspacePath } from "./workspacePath.js"

export class RedoApplied extends Schema.TaggedClass<RedoApplied>()("RedoApplied", {
  /** The redo's own operation. */
  operationId: OperationId,
  /** The rewind it reverses. */
  redoneOperationId: OperationId,
  /** Absent when the rewind did not change the active branch. */
  cursor: Schema.optional(RevertCursor),
  unspentCheckpointIds: Schema.Array(CheckpointId),
  files: Schema.Array(WorkspacePath),
}) {}
