/**
 * Goals a session works towards and the verification records that check them. A goal may carry
 * the parent's live-run fields (the run currently spending on it); those belong to one running
 * session only, so a goal snapshot, the form a fork copies, has no room for them.
 */
import { Schema } from "effect"
import { GoalId, ID_PATTERN, MessageId, SessionId, Timestamp, TurnId, VerificationId } from "./ids.js"

/** The id of one live run working on a goal (a host-side agent run). */
export const RunId = Schema.String.pipe(
  Schema.pattern(ID_PATTERN, {
    message: () =>
      "a RunId is 1-200 characters of letters, digits and . _ : - (starting with a letter or digit)",
  }),
  Schema.brand("RunId"),
)
export type RunId = typeof RunId.Type

export const GoalStatus = Schema.Literal("active", "paused", "done", "abandoned")
export type GoalStatus = typeof GoalStatus.Type

/** What only the session running a goal right now knows: never copied into another session. */
export const GoalLiveRun = Schema.Struct({
  runId: RunId,
  turnId: TurnId,
  startedAt: Timestamp,
})
export type GoalLiveRun = typeof GoalLiveRun.Type

/** Where a copied goal or verification record came from. */
export const CopiedFrom = Schema.Struct({
  sessionId: SessionId,
  id: Schema.String,
})
export type CopiedFrom = typeof CopiedFrom.Type

export const Goal = Schema.Struct({
  goalId: GoalId,
  text: Schema.String,
  status: GoalStatus,
  tokensUsed: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
  liveRun: Schema.optional(GoalLiveRun),
  forkOrigin: Schema.optional(CopiedFrom),
})
export type Goal = typeof Goal.Type

/** A goal as a fork sees it: the live-run fields of the parent are never part of a snapshot. */
export const GoalSnapshot = Schema.Struct({
  goalId: GoalId,
  text: Schema.String,
  status: GoalStatus,
  tokensUsed: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
})
export type GoalSnapshot = typeof GoalSnapshot.Type

/** The goals as they stood at a fork boundary, and the verification records made before it. */
export const GoalBoundary = Schema.Struct({
  goals: Schema.Array(GoalSnapshot),
  verificationIds: Schema.Array(VerificationId),
})
export type GoalBoundary = typeof GoalBoundary.Type

export const VerificationOutcome = Schema.Literal("passed", "failed")
export type VerificationOutcome = typeof VerificationOutcome.Type

/** A completed check of the work (tests run, a goal verified), tied to the message that did it. */
export const VerificationRecord = Schema.Struct({
  verificationId: VerificationId,
  goalId: Schema.optional(GoalId),
  messageId: MessageId,
  turnId: TurnId,
  outcome: VerificationOutcome,
  summary: Schema.String,
  forkOrigin: Schema.optional(CopiedFrom),
})
export type VerificationRecord = typeof VerificationRecord.Type

/** Strips what belongs to a live run; what remains is safe to carry into another session. */
export const goalSnapshotOf = (goal: Goal): GoalSnapshot => ({
  goalId: goal.goalId,
  text: goal.text,
  status: goal.status,
  tokensUsed: goal.tokensUsed,
})
