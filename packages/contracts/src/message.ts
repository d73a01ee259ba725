/** Messages, their parts and turns: the conversation content a session's stream carries. */
import { Schema } from "effect"
import { GoalId, MessageId, PartId, SessionId, Timestamp, TurnId, VerificationId } from "./ids.js"

export const Role = Schema.Literal("user", "assistant", "system", "summary")
export type Role = typeof Role.Type

export const MessageStatus = Schema.Literal("ok", "error")
export type MessageStatus = typeof MessageStatus.Type

/** Who sees a message: everyone, only the model (hidden in the UI), or only the UI. */
export const Visibility = Schema.Literal("all", "model_only", "ui_only")
export type Visibility = typeof Visibility.Type

/** Where a copied message came from, kept on every message a fork copies. */
export const ForkOrigin = Schema.Struct({
  sessionId: SessionId,
  messageId: MessageId,
})
export type ForkOrigin = typeof ForkOrigin.Type

export const GoalStatus = Schema.Literal("active", "paused", "done", "abandoned")
export type GoalStatus = typeof GoalStatus.Type

/** A goal as a fork sees it: the live-run fields of the parent are never part of a snapshot. */
export const GoalSnapshot = Schema.Struct({
  goalId: GoalId,
  text: Schema.String,
  status: GoalStatus,
  tokensUsed: Schema.Number,
})
export type GoalSnapshot = typeof GoalSnapshot.Type

/** The stable fork boundary pinned on a turn's final assistant message before TurnCompleted. */
export const StableBoundary = Schema.Struct({
  turnId: TurnId,
  historyRoundCount: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
  orderedMessageIds: Schema.Array(MessageId),
  boundaryMessageId: MessageId,
  goal: Schema.optional(GoalSnapshot),
  verificationIds: Schema.Array(VerificationId),
})
export type StableBoundary = typeof StableBoundary.Type

export class Message extends Schema.Class<Message>("Message")({
  id: MessageId,
  sessionId: SessionId,
  turnId: TurnId,
  role: Role,
  status: MessageStatus,
  visibility: Visibility,
  createdAt: Timestamp,
  forkOrigin: Schema.optional(ForkOrigin),
  anchor: Schema.optional(StableBoundary),
}) {}

export const PartKind = Schema.Literal("text", "reasoning", "tool_call", "tool_result", "notice", "divider")
export type PartKind = typeof PartKind.Type

export class Part extends Schema.Class<Part>("Part")({
  id: PartId,
  messageId: MessageId,
  kind: PartKind,
  text: Schema.optional(Schema.String),
  toolName: Schema.optional(Schema.String),
  /** Tool input/output or other structured content, as JSON. */
  data: Schema.optional(Schema.Unknown),
}) {}

export const TurnStatus = Schema.Literal("running", "completed", "aborted")
export type TurnStatus = typeof TurnStatus.Type

export class Turn extends Schema.Class<Turn>("Turn")({
  id: TurnId,
  sessionId: SessionId,
  userMessageId: MessageId,
  startedAt: Timestamp,
  status: TurnStatus,
  completedAt: Schema.optional(Timestamp),
}) {}
