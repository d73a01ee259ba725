/**
 * The success Schemas of the session and conversation operations (part of `RewindResults`): a
 * session and its summary, what an append answers, turn boundaries, the transcript and the full
 * history, background tasks. Ids use the branded Schemas of `@rewind/contracts`; encoded, each is
 * plain JSON.
 */
import {
  Checkpoint,
  Goal,
  Message,
  MessageId,
  Part,
  Session,
  SessionId,
  SessionKind,
  StableBoundary,
  TaskId,
  TurnId,
  VerificationRecord,
} from "@rewind/contracts"
import { Schema } from "effect"
import { Count } from "./resultFields.js"

export { Session }

export const SessionSummary = Schema.Struct({
  sessionId: SessionId,
  kind: SessionKind,
  parentId: Schema.UndefinedOr(SessionId),
  title: Schema.String,
  createdAt: Schema.Number,
  version: Count,
  updatedAt: Schema.Number,
})

export const AppendedUserMessage = Schema.Struct({ messageId: MessageId, turnId: TurnId })
export const AppendedReply = Schema.Struct({ messageId: MessageId })
export const AppliedCompaction = Schema.Struct({ summaryMessageId: MessageId })

export const TurnBoundary = Schema.Union(
  Schema.Struct({ boundary: StableBoundary, noBoundary: Schema.optional(Schema.Undefined) }),
  Schema.Struct({
    boundary: Schema.Undefined,
    noBoundary: Schema.Struct({
      reason: Schema.Literal("aborted", "not_on_active_branch", "no_assistant_reply", "reply_failed"),
      message: Schema.String,
    }),
  }),
)

export const TranscriptEntry = Schema.Struct({
  message: Message,
  parts: Schema.Array(Part),
  compacted: Schema.Boolean,
})

/** Every message of the stream, cut branches included (see session/sessionHistory.ts). */
export const SessionHistory = Schema.Struct({
  version: Count,
  branchGeneration: Count,
  total: Count,
  activeCount: Count,
  offset: Count,
  segments: Schema.Array(Schema.Struct({ segment: Count, start: Count, count: Count })),
  entries: Schema.Array(
    Schema.Struct({
      message: Message,
      parts: Schema.Array(Part),
      active: Schema.Boolean,
      segment: Count,
      compactedBy: Schema.UndefinedOr(MessageId),
    }),
  ),
  compactions: Schema.Array(
    Schema.Struct({
      summaryMessageId: MessageId,
      fromMessageId: MessageId,
      toMessageId: MessageId,
      active: Schema.Boolean,
    }),
  ),
  backgroundTasks: Schema.Array(
    Schema.Struct({
      taskId: TaskId,
      turnId: TurnId,
      description: Schema.String,
      branchGeneration: Count,
      status: Schema.Literal("running", "completed", "failed", "stopped"),
    }),
  ),
})

export { Checkpoint, Goal, VerificationRecord }

export const BackgroundTaskStarted = Schema.Struct({ taskId: TaskId, branchGeneration: Count })

export const BackgroundTaskFinished = Schema.Union(
  Schema.Struct({ accepted: Schema.Literal(true) }),
  Schema.Struct({
    accepted: Schema.Literal(false),
    reason: Schema.Literal("already_finished", "stale_generation"),
  }),
)
