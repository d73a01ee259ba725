/**
 * The declared `Rewind` service: every operation a host needs, with written signatures. This is
 * the one API of the engine; the Promise facade, the CLI, the server and the MCP tools are
 * projections of it (see docs/architecture.md), and `RewindOperations` (operations.ts) describes
 * each operation's arguments and answer as Schemas so the projections are mechanical.
 *
 * Every operation answers one shape, `Effect<Outcome<A>, RewindError>`: an expected "no" is the
 * value `{ ok: false, refusal }` (input its Schemas refuse is `invalid_input`; a version conflict
 * the engine's retries did not resolve is `conflict`), and the error channel holds only the
 * typed infrastructure errors, each a `Schema.TaggedError` with its `_tag`. Arguments are decoded
 * by the service itself, so a host that skips a surface's checks still cannot hand the engine a
 * malformed value. Interrupting the call's fiber cancels it. Options objects come last and may be
 * omitted; an operation that reports progress takes `onProgress` there.
 */
import type {
  ArtifactCorrupt,
  ArtifactNotFound,
  ArtifactStoreError,
  CheckpointId,
  CommandAlreadyRecorded,
  CommandId,
  EventDecodeError,
  FileRewindPreview,
  ForkBundleInvalid,
  ForkWorkspace,
  MessageId,
  OperationId,
  Outcome,
  PathRefused,
  PointCaptured,
  PointId,
  RewindScope,
  SessionId,
  StoreError,
  TaskId,
  TaskStopFailed,
  TurnId,
  UnrecoverableRewindError,
  WorkspaceIoError,
  WriteIntentDeclared,
} from "@rewind/contracts"
import { Context, type Effect, type Schema } from "effect"
import type { FileMutationInput } from "../files/recordFileMutation.js"
import type { CaptureProgress } from "../snapshot/capturePoint.js"
import type { GcRootUnreadable } from "../snapshot/pointGc.js"
import type * as A from "./arguments.js"
import type * as R from "./results.js"
import type * as T from "./treeResults.js"

/** The typed infrastructure errors an operation may fail with (refusals are values, not errors). */
export type RewindError =
  | StoreError
  | EventDecodeError
  | ArtifactStoreError
  | ArtifactNotFound
  | ArtifactCorrupt
  | WorkspaceIoError
  | PathRefused
  | UnrecoverableRewindError
  | ForkBundleInvalid
  | CommandAlreadyRecorded
  | TaskStopFailed
  | GcRootUnreadable

/** What an operation answers: `{ ok: true, value }` typed by its success Schema, or a refusal. */
export type Answer<S extends Schema.Schema.Any> = Effect.Effect<Outcome<Schema.Schema.Type<S>>, RewindError>

type In<S extends Schema.Schema.Any> = Schema.Schema.Type<S>

/** Capture options; `onProgress` reports the scan and hash phases. */
export type CaptureOptions = Omit<
  NonNullable<In<typeof A.CaptureOptions>>,
  "onProgress" | "declaredPaths"
> & {
  /** Host paths (`./a.txt` is read as `a.txt`); always tracked. */
  readonly declaredPaths?: ReadonlyArray<string>
  readonly onProgress?: (progress: CaptureProgress) => void
}
export type CleanupOptions = NonNullable<In<typeof A.CleanupOptions>>
export type PointDiffOptions = NonNullable<In<typeof A.PointDiffOptions>>
export type DoctorOptions = Omit<NonNullable<In<typeof A.DoctorOptions>>, "onProgress"> & {
  readonly onProgress?: (checked: number) => void
}

export interface RewindApi {
  // --- sessions and conversation ---------------------------------------------------------
  /** Creates a session (id generated unless given); `conflict` if the id is taken. */
  readonly createSession: (input: In<typeof A.CreateSessionInput>) => Answer<typeof R.Session>
  /** Sessions in the store, newest first. */
  readonly listSessions: () => Answer<Schema.Array$<typeof R.SessionSummary>>
  /** The running turn on the active branch (the newest started), or undefined when none runs. */
  readonly runningTurn: (sessionId: SessionId) => Answer<Schema.UndefinedOr<typeof TurnId>>
  /** Appends a user message and starts its turn. */
  readonly appendUserMessage: (
    sessionId: SessionId,
    input: In<typeof A.UserMessageInput>,
  ) => Answer<typeof R.AppendedUserMessage>
  /** Appends an assistant (or system) reply to a turn on the active branch. */
  readonly appendReply: (
    sessionId: SessionId,
    input: In<typeof A.ReplyInput>,
  ) => Answer<typeof R.AppendedReply>
  /** Completes a turn without pinning a fork boundary. */
  readonly completeTurn: (
    sessionId: SessionId,
    turnId: TurnId,
    status?: "completed" | "aborted",
  ) => Answer<typeof Schema.Void>
  /** Completes a turn and pins its fork boundary (so `forkAtMessage` can fork at its reply). */
  readonly completeTurnWithBoundary: (
    sessionId: SessionId,
    turnId: TurnId,
    status?: "completed" | "aborted",
  ) => Answer<typeof R.TurnBoundary>
  /** Replaces a contiguous range of the active branch by a summary for the model. */
  readonly applyCompaction: (
    sessionId: SessionId,
    input: In<typeof A.CompactionInput>,
  ) => Answer<typeof R.AppliedCompaction>
  /** The active branch as a person reads it. */
  readonly transcript: (sessionId: SessionId) => Answer<Schema.Array$<typeof R.TranscriptEntry>>
  /**
   * Every message of the stream, cut branches included, with compactions and background tasks; a
   * window answers `limit` entries from `offset`, with the whole history's totals and cut segments.
   */
  readonly sessionHistory: (
    sessionId: SessionId,
    window?: In<typeof A.HistoryWindow>,
  ) => Answer<typeof R.SessionHistory>
  /** Creates or updates a goal of the session. */
  readonly updateGoal: (sessionId: SessionId, input: In<typeof A.GoalInput>) => Answer<typeof R.Goal>
  /** Records a completed verification tied to a message on the active branch. */
  readonly recordVerification: (
    sessionId: SessionId,
    input: In<typeof A.VerificationInput>,
  ) => Answer<typeof R.VerificationRecord>
  /** Records a background task a turn started (a rewind that cuts the turn stops it). */
  readonly startBackgroundTask: (
    sessionId: SessionId,
    turnId: TurnId,
    description: string,
    taskId?: TaskId,
  ) => Answer<typeof R.BackgroundTaskStarted>
  /** Records a task's result; a late result of a branch a rewind cut is discarded, and said so. */
  readonly finishBackgroundTask: (
    sessionId: SessionId,
    taskId: TaskId,
    outcome: "completed" | "failed",
  ) => Answer<typeof R.BackgroundTaskFinished>

  // --- checkpoints and file rewind -------------------------------------------------------
  /**
   * Records a checkpoint after a tool wrote a file. A problem recording it is a warning in the
   * value (`recorded: false`), never an error: the tool's write already happened.
   */
  readonly recordFileMutation: (input: FileMutationInput) => Answer<typeof R.FileMutationResult>
  /**
   * Before a tool writes: stores what `paths` hold now (the pre-images) as write intent
   * `intentId`, so the checkpoint can be recorded after the tool ran from another process.
   * A protected path refuses the whole declaration (`unsafe_files`).
   */
  readonly declareWriteIntent: (
    sessionId: SessionId,
    intentId: TurnId,
    paths: ReadonlyArray<string>,
  ) => Answer<typeof WriteIntentDeclared>
  /**
   * After the tool wrote: records the checkpoint of a path with its write intent's pre-image as
   * the before-content and the file now as the after-content. A problem is a warning, as for
   * `recordFileMutation`.
   */
  readonly recordCheckpointFromIntent: (
    // A host path (`./a.txt` is read as `a.txt`), like `recordFileMutation`'s.
    input: Omit<In<typeof A.CheckpointFromIntentInput>, "path"> & { readonly path: string },
  ) => Answer<typeof R.FileMutationResult>
  /** The session's checkpoints, oldest first: what a `/rewind` picker lists. */
  readonly listCheckpoints: (sessionId: SessionId) => Answer<Schema.Array$<typeof R.Checkpoint>>
  /** The file changes of a turn (default: the latest); `undefined` when the session has no turn. */
  readonly turnFileChanges: (
    sessionId: SessionId,
    turnId?: TurnId,
  ) => Answer<Schema.UndefinedOr<typeof R.TurnFileChanges>>
  /** Which rewinds a message allows, and what each would undo. */
  readonly evaluateRewindTarget: (
    sessionId: SessionId,
    messageId: MessageId,
    scope: RewindScope,
  ) => Answer<typeof R.RewindEvaluation>
  /** Moves the conversation back to before a message; files are untouched. */
  readonly rewindConversation: (
    sessionId: SessionId,
    messageId: MessageId,
  ) => Answer<typeof R.ConversationRewound>
  /** Puts back the before-content of one checkpoint. */
  readonly rewindToCheckpoint: (
    sessionId: SessionId,
    checkpointId: CheckpointId,
  ) => Answer<typeof R.FileRestoreResult>
  /** Restores the latest live checkpoint tied to a user message. */
  readonly rewindToMessageCheckpoint: (
    sessionId: SessionId,
    messageId: MessageId,
  ) => Answer<typeof R.FileRestoreResult>
  /** Undoes everything from a user message onward: files, conversation, or both. */
  readonly rewindCascade: (
    sessionId: SessionId,
    messageId: MessageId,
    scope: RewindScope,
  ) => Answer<typeof R.FileRestoreResult>
  /** What undoing a turn's (or a message onward's) file changes would do; writes nothing but a token. */
  readonly previewFileRewind: (target: In<typeof A.FileRewindTarget>) => Answer<typeof R.FileRewindPreview>
  /** Applies a preview after re-checking every hash (redeems its token). */
  readonly applyFileRewind: (preview: FileRewindPreview) => Answer<typeof R.AppliedFileRewind>

  // --- forks -----------------------------------------------------------------------------
  /** Forks at a completed turn's reply (a command id is generated unless given, for retries). */
  readonly forkAtMessage: (
    sessionId: SessionId,
    messageId: MessageId,
    commandId?: CommandId,
    workspace?: ForkWorkspace,
  ) => Answer<typeof R.ForkOutcome>
  /**
   * Forks and puts the shared workspace back: to before a checkpoint (or the latest), or to the
   * end of a message's turn. An unsafe file refuses with nothing written and no fork created.
   */
  readonly forkFromCheckpoint: (
    sessionId: SessionId,
    target: In<typeof A.ForkRestoreTarget>,
    commandId?: CommandId,
    workspace?: ForkWorkspace,
  ) => Answer<typeof R.ForkOutcome>
  /** Rewind by fork, step 1: the user messages that can be rewound to, with their prompts. */
  readonly listRewindPoints: (sessionId: SessionId) => Answer<Schema.Array$<typeof R.RewindPoint>>
  /** Rewind by fork, step 2: what would be restored, checked, with a token when it can be applied. */
  readonly previewRewindByFork: (
    sessionId: SessionId,
    messageId: MessageId,
  ) => Answer<typeof R.RewindByForkPreview>
  /** Rewind by fork, step 3: forks, re-checks, restores; answers the child and the prompt to refill. */
  readonly rewindByFork: (
    sessionId: SessionId,
    messageId: MessageId,
    token: string,
    commandId?: CommandId,
    workspace?: ForkWorkspace,
  ) => Answer<typeof R.RewindByForkResult>
  /** Rewind by fork, cancelled: spends the token; nothing is forked or restored. */
  readonly cancelRewindByFork: (
    sessionId: SessionId,
    messageId: MessageId,
    token: string,
  ) => Answer<typeof R.RewindByForkCancelled>
  /** Opens a side chat that inherits the conversation as background. */
  readonly createSideChat: (sessionId: SessionId, commandId?: CommandId) => Answer<typeof R.ForkOutcome>

  // --- snapshot points -------------------------------------------------------------------
  /**
   * Captures a point of the workspace for (session, turn), at a turn boundary. Idempotent per
   * turn. A capture problem is the value `NotCaptured` with its reason, never an error.
   */
  readonly capturePoint: (
    sessionId: SessionId,
    turnId: TurnId,
    options?: CaptureOptions,
  ) => Answer<typeof R.CaptureOutcome>
  /** The session's points (turn and rescue), oldest first. */
  readonly listPoints: (sessionId: SessionId) => Answer<Schema.Array$<typeof PointCaptured>>
  /** What differs between a point and the workspace now; writes nothing. */
  readonly diffPoint: (
    sessionId: SessionId,
    pointId: PointId,
    options?: PointDiffOptions,
  ) => Answer<typeof R.PointDiff>
  /** What restoring a point would change; a token (five minutes, single use) when it can apply. */
  readonly previewPointRestore: (
    sessionId: SessionId,
    pointId: PointId,
  ) => Answer<typeof R.PointRestorePreview>
  /** Restores the workspace to a point, redeeming the preview's token; a rescue point first. */
  readonly restorePoint: (
    sessionId: SessionId,
    pointId: PointId,
    token: string,
  ) => Answer<typeof R.PointRestoreResult>

  // --- redo and recovery -----------------------------------------------------------------
  /** Undoes the session's last rewind that wrote files; `nothing_to_undo` when there is none. */
  readonly redo: (sessionId: SessionId) => Answer<typeof R.RedoResult>
  /** Operations interrupted by a crash (begun, never completed), oldest first. */
  readonly recover: () => Answer<Schema.Array$<typeof R.IncompleteOperation>>
  /** Finishes an interrupted operation: `continue` or `rollback`. */
  readonly resolveOperation: (
    operationId: OperationId,
    resolution: "continue" | "rollback",
  ) => Answer<typeof R.ResolvedOperation>

  // --- maintenance -----------------------------------------------------------------------
  /** Store usage from the snapshot engine's side. */
  readonly snapshotStatus: () => Answer<typeof R.SnapshotStatus>
  /** What `cleanup` would delete, deleting nothing. */
  readonly previewCleanup: (options?: CleanupOptions) => Answer<typeof R.CleanupReport>
  /**
   * Garbage collection of the artifact store. It marks, itself, what the operation journal still
   * needs (interrupted operations, available redo entries), so no host can forget it.
   */
  readonly cleanup: (options?: CleanupOptions) => Answer<typeof R.CleanupReport>
  /** Checks the store through the host's StoreDoctor; `unavailable` when the host supplies none. */
  readonly doctor: (options?: DoctorOptions) => Answer<typeof R.DoctorReport>

  // --- isolated forks: compare and merge trees ------------------------------------------
  /** What differs between the trees of two sessions now (a → b); writes nothing to either tree. */
  readonly diffSessions: (
    sessionId: SessionId,
    otherSessionId: SessionId,
    options?: In<typeof T.SessionsDiffOptions>,
  ) => Answer<typeof T.SessionsDiff>
  /**
   * Plans a three-way merge of `sourceSessionId`'s tree into `sessionId`'s against their fork
   * base; records it as a merge point and answers a token when it can be applied.
   */
  readonly previewMerge: (
    sessionId: SessionId,
    sourceSessionId: SessionId,
    options?: In<typeof T.MergeOptions>,
  ) => Answer<typeof T.MergePreview>
  /** Applies a previewed merge (a point restore with rescue point and redo), redeeming its token. */
  readonly applyMerge: (
    sessionId: SessionId,
    mergePointId: PointId,
    token: string,
  ) => Answer<typeof R.PointRestoreResult>
}

export class Rewind extends Context.Tag("@rewind/core/Rewind")<Rewind, RewindApi>() {}
