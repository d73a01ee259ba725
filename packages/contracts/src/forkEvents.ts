/**
 * Events of forks and of what a fork copies: the stable boundary pinned at turn end, the fork
 * record in a child, goals, verification records, the model selection and execution state recorded
 * on assistant messages, and the link from a parent turn to a subagent session it spawned.
 */
import { Schema } from "effect"
import { ExecutionState, ModelSelection } from "./executionContext.js"
import { Goal, VerificationRecord } from "./goal.js"
import { CheckpointId, CommandId, MessageId, SessionId, Timestamp, TurnId } from "./ids.js"
import { StableBoundary } from "./message.js"

/** Pinned on a turn's final assistant message, in the same append as (and before) TurnCompleted. */
export class ForkBoundaryPinned extends Schema.TaggedClass<ForkBoundaryPinned>()("ForkBoundaryPinned", {
  messageId: MessageId,
  boundary: StableBoundary,
}) {}

/**
 * How a child session came to be: a stable fork at a message, a fork from a checkpoint, a side
 * chat, or the carried clone of a subagent.
 */
export const ForkKind = Schema.Literal("message", "checkpoint", "side_chat", "subagent_carry")
export type ForkKind = typeof ForkKind.Type

/** Written in the child, right after SessionCreated. The parent's stream is never touched. */
export class SessionForked extends Schema.TaggedClass<SessionForked>()("SessionForked", {
  /** The session the content was copied from (the parent, or the original subagent of a clone). */
  sourceSessionId: SessionId,
  /** The source message the copy ends at or was taken for; absent when nothing was copied. */
  originMessageId: Schema.optional(MessageId),
  /** The contract's marker for fork events (evaluation never returns it). */
  strategy: Schema.Literal("fork_required"),
  forkKind: ForkKind,
  commandId: Schema.optional(CommandId),
  checkpointId: Schema.optional(CheckpointId),
  /**
   * How many events at the start of this stream (SessionCreated and this one included) are the
   * copied history; everything after them happened in the child itself.
   */
  copiedEventCount: Schema.Number.pipe(Schema.int(), Schema.positive()),
}) {}

/** A goal was created or changed; the whole goal replaces the previous one with its id. */
export class GoalUpdated extends Schema.TaggedClass<GoalUpdated>()("GoalUpdated", {
  goal: Goal,
}) {}

export class VerificationRecorded extends Schema.TaggedClass<VerificationRecorded>()("VerificationRecorded", {
  verification: VerificationRecord,
}) {}

/** The model an assistant message was produced with. */
export class ModelSelectionRecorded extends Schema.TaggedClass<ModelSelectionRecorded>()(
  "ModelSelectionRecorded",
  { messageId: MessageId, selection: ModelSelection },
) {}

/** The execution state (mode, settings) an assistant message was produced under. */
export class ExecutionStateRecorded extends Schema.TaggedClass<ExecutionStateRecorded>()(
  "ExecutionStateRecorded",
  { messageId: MessageId, state: ExecutionState },
) {}

/**
 * A turn of this session spawned a subagent session (kind `subagent`, parentId = this session).
 * `carriedFrom` marks a carried clone that takes the place of the original after a rewind.
 */
export class SubagentSpawned extends Schema.TaggedClass<SubagentSpawned>()("SubagentSpawned", {
  subagentSessionId: SessionId,
  turnId: TurnId,
  messageId: Schema.optional(MessageId),
  /** When the subagent was born; kept verbatim by copies so a later carry can cut by it. */
  spawnedAt: Timestamp,
  carriedFrom: Schema.optional(SessionId),
}) {}
