/**
 * The success Schemas of the fork operations (part of `RewindResults`): a fork's outcome (with
 * whether a retried command replayed), the rewind points of a session, and rewind by fork's preview,
 * result and cancellation.
 */
import {
  FileRestoreAction,
  ForkCommandResult,
  MessageId,
  OperationId,
  SessionId,
  TurnId,
  WorkspacePath,
} from "@rewind/contracts"
import { Schema } from "effect"
import { FileOutcome } from "./fileResults.js"
import { Count, HashOrNull } from "./resultFields.js"

export const ForkOutcome = Schema.Struct({ ...ForkCommandResult.fields, replayed: Schema.Boolean })

export const RewindPoint = Schema.Struct({
  messageId: MessageId,
  turnId: TurnId,
  prompt: Schema.String,
  createdAt: Schema.Number,
  paths: Schema.Array(WorkspacePath),
})

export const RewindByForkPreview = Schema.Struct({
  sessionId: SessionId,
  messageId: MessageId,
  prompt: Schema.String,
  keptMessageCount: Count,
  files: Schema.Array(
    Schema.Struct({
      path: WorkspacePath,
      action: FileRestoreAction,
      currentHash: HashOrNull,
      targetHash: HashOrNull,
    }),
  ),
  unsafe: Schema.Array(
    Schema.Struct({
      path: Schema.String,
      reason: Schema.Literal(
        "external_modified",
        "checkpoint_unreadable",
        "file_read_failed",
        "ignored",
        "protected",
        "symlink_in_path",
      ),
      message: Schema.String,
      currentHash: Schema.optional(HashOrNull),
      expectedHash: Schema.optional(HashOrNull),
    }),
  ),
  canApply: Schema.Boolean,
  token: Schema.optional(Schema.String),
  tokenExpiresAt: Schema.optional(Schema.Number),
})

export const RewindByForkResult = Schema.Struct({
  childSessionId: SessionId,
  prompt: Schema.String,
  fork: ForkOutcome,
  operationId: Schema.UndefinedOr(OperationId),
  files: Schema.Array(FileOutcome),
})

export const RewindByForkCancelled = Schema.Struct({ cancelled: Schema.Literal(true) })
