/**
 * The session and checkpoint operations of `RewindApi` (the service's declaration is `api.ts`),
 * with written signatures: each answers `Answer<S>`, S its success Schema in `RewindResults`.
 */
import type {
  CheckpointId,
  FileRewindPreview,
  MessageId,
  RewindScope,
  SessionId,
  TaskId,
  TurnId,
  WriteIntentDeclared,
} from "@rewind/contracts"
import type { Schema } from "effect"
import type { FileMutationInput } from "../files/recordFileMutation.js"
import type { Answer, In } from "./answerTypes.js"
import type * as A from "./arguments.js"
import type * as R from "./results.js"

/** Sessions and the conversation: create, list, append, complete, compact, read, records, tasks. */
export interface SessionApi {
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
}

/** Checkpoints and file rewind: record, list, evaluate, and rewind the conversation, the files or both. */
export interface CheckpointApi {
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
}
