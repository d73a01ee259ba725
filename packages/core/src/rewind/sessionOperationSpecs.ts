/**
 * The `RewindOperations` entries of the session and conversation operations: create and list,
 * append, complete, compact, read, records, background tasks.
 */
import { TaskId, TurnId } from "@rewind/contracts"
import { Schema } from "effect"
import * as A from "./arguments.js"
import { arg, op, optional, sessionId } from "./operationSpec.js"
import * as R from "./results.js"

export const sessionSpecs = {
  createSession: op(
    "createSession",
    "write",
    "Create a session (its id is generated unless given).",
    [arg("input", A.CreateSessionInput)],
    R.Session,
  ),
  listSessions: op(
    "listSessions",
    "read",
    "List the sessions in the store, newest first.",
    [],
    Schema.Array(R.SessionSummary),
  ),
  runningTurn: op(
    "runningTurn",
    "read",
    "Say which turn of a session is running on the active branch (none: undefined).",
    [sessionId],
    Schema.UndefinedOr(TurnId),
  ),
  appendUserMessage: op(
    "appendUserMessage",
    "write",
    "Append a user message to a session and start its turn.",
    [sessionId, arg("input", A.UserMessageInput)],
    R.AppendedUserMessage,
  ),
  appendReply: op(
    "appendReply",
    "write",
    "Append an assistant or system reply to a turn on the active branch.",
    [sessionId, arg("input", A.ReplyInput)],
    R.AppendedReply,
  ),
  completeTurn: op(
    "completeTurn",
    "write",
    "Complete (or abort) a turn without pinning a fork boundary.",
    [sessionId, arg("turnId", TurnId), { ...arg("status", A.TurnEnd), optional: true }],
    Schema.Void,
  ),
  completeTurnWithBoundary: op(
    "completeTurnWithBoundary",
    "write",
    "Complete a turn and pin its fork boundary, so a fork at its reply is possible.",
    [sessionId, arg("turnId", TurnId), { ...arg("status", A.TurnEnd), optional: true }],
    R.TurnBoundary,
  ),
  applyCompaction: op(
    "applyCompaction",
    "write",
    "Replace a contiguous range of the active branch by a summary the model sees instead.",
    [sessionId, arg("input", A.CompactionInput)],
    R.AppliedCompaction,
  ),
  transcript: op(
    "transcript",
    "read",
    "Read the active branch of a session as a person reads it.",
    [sessionId],
    Schema.Array(R.TranscriptEntry),
  ),
  sessionHistory: op(
    "sessionHistory",
    "read",
    "Read every message of a session (or a window of them), the branches rewinds cut included, with the totals, the cut segments, compactions and background tasks.",
    [sessionId, optional("window", A.HistoryWindow)],
    R.SessionHistory,
  ),
  updateGoal: op(
    "updateGoal",
    "write",
    "Create or update a goal of a session.",
    [sessionId, arg("input", A.GoalInput)],
    R.Goal,
  ),
  recordVerification: op(
    "recordVerification",
    "write",
    "Record a completed verification tied to a message on the active branch.",
    [sessionId, arg("input", A.VerificationInput)],
    R.VerificationRecord,
  ),
  startBackgroundTask: op(
    "startBackgroundTask",
    "write",
    "Record a background task a turn started; a rewind that cuts the turn stops it.",
    [sessionId, arg("turnId", TurnId), arg("description", Schema.String), optional("taskId", TaskId)],
    R.BackgroundTaskStarted,
  ),
  finishBackgroundTask: op(
    "finishBackgroundTask",
    "write",
    "Record a background task's result; a late result of a cut branch is discarded.",
    [sessionId, arg("taskId", TaskId), arg("outcome", A.TaskOutcome)],
    R.BackgroundTaskFinished,
  ),
}
