/**
 * What fork commands answer, and what their command fact in the parent records so that a replayed
 * command returns the same child: the child's id, what was carried and what could not be.
 */
import { Schema } from "effect"
import { FileVersion } from "./checkpoint.js"
import { CheckpointId, MessageId, SessionId } from "./ids.js"
import { IsolatedTreeReport } from "./isolatedWorkspace.js"
import { WorkspacePath } from "./workspacePath.js"

/** The carry id scheme: `carry-v1.<sha256 hex of the lineage's original id>.<fresh id>`. */
export const CARRY_ID_PREFIX = "carry-v1"

export const ForkCommand = Schema.Literal(
  "fork_at_message",
  "fork_from_checkpoint",
  "side_chat",
  "carry_subagents",
  "rewind_by_fork",
)
export type ForkCommand = typeof ForkCommand.Type

export const CarriedSubagent = Schema.Struct({
  originalSessionId: SessionId,
  cloneSessionId: SessionId,
  /** The session the clone now hangs under (the fork child, or a clone one level up). */
  parentSessionId: SessionId,
})
export type CarriedSubagent = typeof CarriedSubagent.Type

/** A subagent that was not carried: reported, never a reason to fail the fork. */
export const CarryWarning = Schema.Struct({
  sessionId: SessionId,
  reason: Schema.Literal("unreadable", "refused", "invalid_bundle"),
  message: Schema.String,
})
export type CarryWarning = typeof CarryWarning.Type

/** One file a fork from a checkpoint writes back, and the checkpoint its content comes from. */
export const PlannedFileRestore = Schema.Struct({
  path: WorkspacePath,
  version: FileVersion,
  checkpointId: CheckpointId,
})
export type PlannedFileRestore = typeof PlannedFileRestore.Type

export const ForkCommandResult = Schema.Struct({
  command: ForkCommand,
  /** The command and its target, so a command id reused for a different request is refused. */
  requestKey: Schema.String,
  parentSessionId: SessionId,
  /** The new session; for `carry_subagents` the session the clones were attached to. */
  childSessionId: SessionId,
  originMessageId: Schema.optional(MessageId),
  copiedMessageCount: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
  carried: Schema.Array(CarriedSubagent),
  warnings: Schema.Array(CarryWarning),
  restoredFiles: Schema.optional(Schema.Array(PlannedFileRestore)),
  /** For an isolated fork: how the child's own tree was made. */
  isolated: Schema.optional(IsolatedTreeReport),
})
export type ForkCommandResult = typeof ForkCommandResult.Type
