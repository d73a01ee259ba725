/** Messages, their parts and turns: the conversation content a session's stream carries. */
import { Schema } from "effect"
import { GoalBoundary } from "./goal.js"
import { MessageId, PartId, SessionId, Timestamp, TurnId } from "./ids.js"

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

/**
 * The stable fork boundary pinned on a turn's final assistant message before TurnCompleted: the
 * turn's messages in active-branch order (from its user message to this one), how many rounds the
 * history had, and the goals and verification records as they stood. A side chat strips
 * `goalBoundary` from the anchors it copies.
 */
export const StableBoundary = Schema.Struct({
  turnId: TurnId,
  historyRoundCount: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
  orderedMessageIds: Schema.NonEmptyArray(MessageId),
  boundaryMessageId: MessageId,
  goalBoundary: Schema.optional(GoalBoundary),
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
