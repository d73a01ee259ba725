/**
 * The fork, point and maintenance operations of `RewindApi` (the service's declaration is
 * `api.ts`), with written signatures: each answers `Answer<S>`, S its success Schema in
 * `RewindResults` or `RewindTreeResults`.
 */
import type {
  CommandId,
  ForkWorkspace,
  MessageId,
  OperationId,
  PointCaptured,
  PointId,
  SessionId,
  TurnId,
} from "@rewind/contracts"
import type { Schema } from "effect"
import type {
  Answer,
  CaptureOptions,
  CleanupOptions,
  DoctorOptions,
  In,
  PointDiffOptions,
} from "./answerTypes.js"
import type * as A from "./arguments.js"
import type * as R from "./results.js"
import type * as T from "./treeResults.js"

/** Forks, rewind by fork and side chats. */
export interface ForkApi {
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
}

/** Snapshot points, redo and recovery, and maintenance (status, GC, doctor). */
export interface PointApi {
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
  /**
   * Where the files were before a turn: the point to preview and restore so that what the agent
   * created since is deleted too, and what that restore leaves alone. Records that point when it
   * differs from the turn's own.
   */
  readonly turnRestoreTarget: (sessionId: SessionId, turnId: TurnId) => Answer<typeof R.TurnRestoreTarget>
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
}

/** Isolated forks: compare two sessions' trees and merge one into the other. */
export interface MergeApi {
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
