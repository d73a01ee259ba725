/**
 * `RewindOperations`: one entry per operation of `RewindApi`, describing it as data — its
 * arguments in call order with their Schemas, its answer's Schema, whether it reads, writes or may
 * change files on disk, which argument names its session, and whether it reports progress. Host
 * surfaces are derived from this table by one loop (the Promise facade, the server's methods and
 * `--schema`, the MCP tool list); the type below makes forgetting an operation a compile error.
 */
import {
  CheckpointId,
  CommandId,
  FileRewindPreview,
  ForkWorkspace,
  MessageId,
  OperationId,
  type Outcome,
  PointCaptured,
  PointId,
  RewindScope,
  SessionId,
  TaskId,
  TurnId,
  WorkspacePathFromHost,
  WriteIntentDeclared,
} from "@rewind/contracts"
import { type Effect, Schema } from "effect"
import type { RewindApi } from "./api.js"
import type { OperationArgument } from "./arguments.js"
import * as A from "./arguments.js"
import * as R from "./results.js"
import * as T from "./treeResults.js"

export type { OperationArgument }

export interface OperationSpec {
  /** The method name, e.g. "appendUserMessage". */
  readonly name: string
  /** One sentence a model or a human can act on (server `--schema`, MCP, docs). */
  readonly summary: string
  readonly args: ReadonlyArray<OperationArgument>
  /** The `value` of `{ ok: true, value }`. */
  readonly success: Schema.Schema.AnyNoContext
  /** `destructive`: may change files on disk or cut a branch. */
  readonly access: "read" | "write" | "destructive"
  /** The argument naming the session the call works on (an object argument: its `sessionId`). */
  readonly session?: string
  /** The call reports progress through `onProgress` in its options (its last argument). */
  readonly progress?: boolean
}

const arg = (name: string, schema: Schema.Schema.AnyNoContext): OperationArgument => ({ name, schema })
const optional = (name: string, schema: Schema.Schema.AnyNoContext): OperationArgument => ({
  name,
  schema: Schema.UndefinedOr(schema),
  optional: true,
})
const sessionId = arg("sessionId", SessionId)
const messageId = arg("messageId", MessageId)
const token = arg("token", A.Token)
const commandId = optional("commandId", CommandId)
/** `shared` (default) or `isolated` with a root: where a fork's child works. */
const forkWorkspace = optional("workspace", ForkWorkspace)

/** The value an operation of `RewindApi` answers when it succeeds. */
export type SuccessOf<F> = F extends (...args: never) => Effect.Effect<Outcome<infer A>, unknown> ? A : never

/** A spec whose success Schema decodes to exactly what the operation's signature answers. */
type Spec<K extends keyof RewindApi> = OperationSpec & {
  readonly name: K
  readonly success: { readonly Type: SuccessOf<RewindApi[K]> }
}

const op = <const K extends keyof RewindApi>(
  name: K,
  access: OperationSpec["access"],
  summary: string,
  args: ReadonlyArray<OperationArgument>,
  success: Schema.Schema.AnyNoContext & { readonly Type: SuccessOf<RewindApi[K]> },
  extra: { readonly session?: string; readonly progress?: boolean } = {},
): Spec<K> => ({
  name,
  summary,
  args,
  success,
  access,
  ...(args.some((a) => a.name === "sessionId") ? { session: "sessionId" } : {}),
  ...extra,
})

export const RewindOperations: { readonly [K in keyof RewindApi]: Spec<K> } = {
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
  recordFileMutation: op(
    "recordFileMutation",
    "write",
    "Record a checkpoint after a tool wrote a file (a problem is a warning, never an error).",
    [arg("input", A.FileMutationInput)],
    R.FileMutationResult,
    { session: "input" },
  ),
  declareWriteIntent: op(
    "declareWriteIntent",
    "write",
    "Before a tool writes files: store what they hold now, as a write intent a later checkpoint uses.",
    [sessionId, arg("intentId", TurnId), arg("paths", Schema.Array(WorkspacePathFromHost))],
    WriteIntentDeclared,
  ),
  recordCheckpointFromIntent: op(
    "recordCheckpointFromIntent",
    "write",
    "After a tool wrote a file: record its checkpoint from the write intent declared before (a problem is a warning).",
    [arg("input", A.CheckpointFromIntentInput)],
    R.FileMutationResult,
    { session: "input" },
  ),
  listCheckpoints: op(
    "listCheckpoints",
    "read",
    "List the checkpoints of a session, oldest first (what a /rewind picker shows).",
    [sessionId],
    Schema.Array(R.Checkpoint),
  ),
  turnFileChanges: op(
    "turnFileChanges",
    "read",
    "List the file changes of a turn (default: the latest turn).",
    [sessionId, optional("turnId", TurnId)],
    Schema.UndefinedOr(R.TurnFileChanges),
  ),
  evaluateRewindTarget: op(
    "evaluateRewindTarget",
    "read",
    "Say which rewinds a message allows and what each would undo.",
    [sessionId, messageId, arg("scope", RewindScope)],
    R.RewindEvaluation,
  ),
  rewindConversation: op(
    "rewindConversation",
    "destructive",
    "Move the conversation back to before a message; files are untouched.",
    [sessionId, messageId],
    R.ConversationRewound,
  ),
  rewindToCheckpoint: op(
    "rewindToCheckpoint",
    "destructive",
    "Put back the content a file had before one checkpoint.",
    [sessionId, arg("checkpointId", CheckpointId)],
    R.FileRestoreResult,
  ),
  rewindToMessageCheckpoint: op(
    "rewindToMessageCheckpoint",
    "destructive",
    "Restore the files of the latest live checkpoint tied to a user message.",
    [sessionId, messageId],
    R.FileRestoreResult,
  ),
  rewindCascade: op(
    "rewindCascade",
    "destructive",
    "Undo everything from a user message onward: files, conversation, or both.",
    [sessionId, messageId, arg("scope", RewindScope)],
    R.FileRestoreResult,
  ),
  previewFileRewind: op(
    "previewFileRewind",
    "read",
    "Preview undoing a turn's (or a message onward's) file changes; answers a token to apply it.",
    [arg("target", A.FileRewindTarget)],
    R.FileRewindPreview,
    { session: "target" },
  ),
  applyFileRewind: op(
    "applyFileRewind",
    "destructive",
    "Apply a file rewind preview after re-checking every file (redeems its token).",
    [arg("preview", FileRewindPreview)],
    R.AppliedFileRewind,
    { session: "preview" },
  ),
  forkAtMessage: op(
    "forkAtMessage",
    "write",
    "Fork a session at a completed turn's reply.",
    [sessionId, messageId, commandId, forkWorkspace],
    R.ForkOutcome,
  ),
  forkFromCheckpoint: op(
    "forkFromCheckpoint",
    "destructive",
    "Fork a session and put the shared workspace back to a checkpoint or a message's turn.",
    [sessionId, arg("target", A.ForkRestoreTarget), commandId, forkWorkspace],
    R.ForkOutcome,
  ),
  listRewindPoints: op(
    "listRewindPoints",
    "read",
    "List the user messages a rewind by fork can go back to, with their prompts.",
    [sessionId],
    Schema.Array(R.RewindPoint),
  ),
  previewRewindByFork: op(
    "previewRewindByFork",
    "read",
    "Preview a rewind by fork to a user message; answers a token when it can be applied.",
    [sessionId, messageId],
    R.RewindByForkPreview,
  ),
  rewindByFork: op(
    "rewindByFork",
    "destructive",
    "Confirm a previewed rewind by fork: fork, re-check and restore the workspace.",
    [sessionId, messageId, token, commandId, forkWorkspace],
    R.RewindByForkResult,
  ),
  cancelRewindByFork: op(
    "cancelRewindByFork",
    "write",
    "Cancel a previewed rewind by fork (spends its token, changes nothing else).",
    [sessionId, messageId, token],
    R.RewindByForkCancelled,
  ),
  createSideChat: op(
    "createSideChat",
    "write",
    "Open a side chat that inherits the conversation as background.",
    [sessionId, commandId],
    R.ForkOutcome,
  ),
  capturePoint: op(
    "capturePoint",
    "write",
    "Capture a point of the workspace for a turn (idempotent per turn).",
    [sessionId, arg("turnId", TurnId), { ...arg("options", A.CaptureOptions), optional: true }],
    R.CaptureOutcome,
    { progress: true },
  ),
  listPoints: op(
    "listPoints",
    "read",
    "List the points of a session (turn and rescue), oldest first.",
    [sessionId],
    Schema.Array(PointCaptured),
  ),
  diffPoint: op(
    "diffPoint",
    "read",
    "Show what differs between a point and the workspace now.",
    [sessionId, arg("pointId", PointId), { ...arg("options", A.PointDiffOptions), optional: true }],
    R.PointDiff,
  ),
  previewPointRestore: op(
    "previewPointRestore",
    "read",
    "Preview restoring the workspace to a point; answers a token when it can be applied.",
    [sessionId, arg("pointId", PointId)],
    R.PointRestorePreview,
  ),
  restorePoint: op(
    "restorePoint",
    "destructive",
    "Restore the workspace to a point, redeeming its preview token (a rescue point is taken first).",
    [sessionId, arg("pointId", PointId), token],
    R.PointRestoreResult,
  ),
  redo: op(
    "redo",
    "destructive",
    "Undo the session's last restore: a point restore (files come back, the conversation stays) or a rewind that wrote files (files and conversation come back).",
    [sessionId],
    R.RedoResult,
  ),
  recover: op(
    "recover",
    "read",
    "List operations a crash interrupted, with each file's state.",
    [],
    Schema.Array(R.IncompleteOperation),
  ),
  resolveOperation: op(
    "resolveOperation",
    "destructive",
    "Finish an interrupted operation by continuing or rolling it back.",
    [arg("operationId", OperationId), arg("resolution", R.Resolution)],
    R.ResolvedOperation,
  ),
  snapshotStatus: op(
    "snapshotStatus",
    "read",
    "Report store usage from the snapshot engine's side.",
    [],
    R.SnapshotStatus,
  ),
  previewCleanup: op(
    "previewCleanup",
    "read",
    "Report what a cleanup would delete, deleting nothing.",
    [{ ...arg("options", A.CleanupOptions), optional: true }],
    R.CleanupReport,
  ),
  cleanup: op(
    "cleanup",
    "destructive",
    "Delete store content nothing needs any more (what redo and recover need is always kept).",
    [{ ...arg("options", A.CleanupOptions), optional: true }],
    R.CleanupReport,
  ),
  doctor: op(
    "doctor",
    "write",
    "Check the store's health; with repair, remove only what is safe to remove.",
    [{ ...arg("options", A.DoctorOptions), optional: true }],
    R.DoctorReport,
    { progress: true },
  ),
  // --- isolated forks: compare and merge trees (issue 28) --------------------------------
  diffSessions: op(
    "diffSessions",
    "read",
    "Show what differs between the trees of two sessions now (each session's own tree).",
    [sessionId, arg("otherSessionId", SessionId), optional("options", T.SessionsDiffOptions)],
    T.SessionsDiff,
  ),
  previewMerge: op(
    "previewMerge",
    "write",
    "Preview a three-way merge of another session's tree into this session's; answers a token when it can be applied.",
    [sessionId, arg("sourceSessionId", SessionId), optional("options", T.MergeOptions)],
    T.MergePreview,
  ),
  applyMerge: op(
    "applyMerge",
    "destructive",
    "Apply a previewed merge, redeeming its token (a rescue point is taken first; redo takes it away).",
    [sessionId, arg("mergePointId", PointId), token],
    R.PointRestoreResult,
  ),
}
