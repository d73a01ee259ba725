/**
 * The success Schemas of the file and checkpoint operations (part of `RewindResults`): a recorded
 * mutation, a turn's file changes, a rewind's evaluation, a conversation rewind as a host sees it
 * (the cursor and the ids it cut, never the folded state), file restores and the file-rewind
 * preview and apply.
 */
import {
  Checkpoint,
  CheckpointId,
  FileRestoreAction,
  FileRewindPreview,
  MessageId,
  OperationId,
  RefusalKind,
  RevertCursor,
  RewindScope,
  RewindStrategy,
  TaskId,
  TurnId,
  WorkspacePath,
} from "@rewind/contracts"
import { Schema } from "effect"
import { Count } from "./resultFields.js"

export const FileMutationResult = Schema.Union(
  Schema.Struct({ recorded: Schema.Literal(true), checkpoint: Checkpoint }),
  Schema.Struct({
    recorded: Schema.Literal(false),
    warning: Schema.Struct({
      reason: Schema.Literal(
        "invalid_input",
        "protected",
        "path_refused",
        "unchanged",
        "session_unavailable",
        "turn_not_found",
        "content_not_stored",
        "checkpoint_not_stored",
        "internal_error",
        "intent_not_found",
      ),
      message: Schema.String,
    }),
  }),
)

export const TurnFileChanges = Schema.Struct({
  turnId: TurnId,
  files: Schema.Array(
    Schema.Struct({
      path: WorkspacePath,
      linesAdded: Count,
      linesRemoved: Count,
      checkpointIds: Schema.Array(CheckpointId),
      toolNames: Schema.Array(Schema.String),
      created: Schema.Boolean,
      deleted: Schema.Boolean,
      shellOnly: Schema.Boolean,
    }),
  ),
  linesAdded: Count,
  linesRemoved: Count,
})

export const RewindEvaluation = Schema.Struct({
  strategy: RewindStrategy.pipe(Schema.pickLiteral("active_chain", "file_only", "unavailable")),
  allowedScopes: Schema.Array(RewindScope),
  requestedMessageId: MessageId,
  targetMessageId: Schema.UndefinedOr(MessageId),
  coveredByCompaction: Schema.Boolean,
  checkpointIds: Schema.Array(CheckpointId),
  refusal: Schema.optional(Schema.Struct({ kind: RefusalKind, message: Schema.String })),
})

/** A conversation rewind as a host sees it: the new cursor and what it cut and stopped. */
export const ConversationRewound = Schema.Struct({
  cursor: RevertCursor,
  targetMessageId: MessageId,
  removedMessageIds: Schema.Array(MessageId),
  stoppedTaskIds: Schema.Array(TaskId),
})

export const FileOutcome = Schema.Struct({ path: WorkspacePath, action: FileRestoreAction })

export const FileRestoreResult = Schema.Struct({
  operationId: Schema.UndefinedOr(OperationId),
  checkpointIds: Schema.Array(CheckpointId),
  files: Schema.Array(FileOutcome),
  conversation: Schema.optional(ConversationRewound),
})

export { FileRewindPreview }

export const AppliedFileRewind = Schema.Struct({
  operationId: OperationId,
  checkpointIds: Schema.Array(CheckpointId),
  files: Schema.Array(FileOutcome),
  conversation: Schema.optional(ConversationRewound),
})
