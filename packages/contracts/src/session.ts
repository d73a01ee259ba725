/** The session record: one agent conversation and its lineage. */
import { Schema } from "effect"
import { SessionId, Timestamp, TraceId } from "./ids.js"

export const SessionKind = Schema.Literal("main", "fork", "selection_side_chat", "subagent")
export type SessionKind = typeof SessionKind.Type

export class Session extends Schema.Class<Session>("Session")({
  id: SessionId,
  parentId: Schema.optional(SessionId),
  rootTraceId: TraceId,
  kind: SessionKind,
  title: Schema.String,
  cwd: Schema.String,
  createdAt: Timestamp,
}) {}
