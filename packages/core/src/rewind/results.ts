/**
 * The success Schemas of the `Rewind` operations: what `{ ok: true, value }` carries, declared as
 * Schemas so a host surface (the server, MCP, a schema dump) can encode and document every answer.
 * Where a program's result is only a TypeScript interface, its Schema is here; the layer
 * (`layer.ts`) hands the program's value to a signature typed by these Schemas, so the compiler
 * checks that every value a program produces fits the Schema declared for it.
 *
 * Invariants: nothing is `Schema.Unknown` except a message part's `data` and a refusal's `details`,
 * which are the host's own JSON; ids, hashes and paths use the branded Schemas of
 * `@rewind/contracts`; the encoded side of each is plain JSON (no Maps, no class instances needed).
 * A conversation rewind answers its cursor and the ids it cut, not the folded session state the
 * program works with (a host reads the conversation through `transcript`).
 */
import {
  Checkpoint,
  CheckpointId,
  ContentHash,
  FileRestoreAction,
  FileRewindPreview,
  ForkCommandResult,
  Goal,
  Message,
  MessageId,
  OperationId,
  OperationRecord,
  Part,
  PointCaptured,
  PointId,
  PointRestored,
  ProtectedPath,
  RefusalKind,
  RevertCursor,
  RewindScope,
  RewindStrategy,
  Session,
  SessionId,
  SessionKind,
  SkippedPath,
  StableBoundary,
  TaskId,
  TurnId,
  VerificationRecord,
  WorkspacePath,
} from "@rewind/contracts"
import { Schema } from "effect"

const Count = Schema.Number.pipe(Schema.int(), Schema.nonNegative())
const HashOrNull = Schema.NullOr(ContentHash)

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

export const FileMutationResult = Schema.Union(
  Schema.Struct({ recorded: Schema.Literal(true), checkpoint: Checkpoint }),
  Schema.Struct({
    recorded: Schema.Literal(false),
    warning: Schema.Struct({
      reason: Schema.Literal(
        "invalid_input",
        "protected",
        "path_refused",
        "unchanged",
        "session_unavailable",
        "turn_not_found",
        "content_not_stored",
        "checkpoint_not_stored",
        "internal_error",
        "intent_not_found",
      ),
      message: Schema.String,
    }),
  }),
)

export const TurnFileChanges = Schema.Struct({
  turnId: TurnId,
  files: Schema.Array(
    Schema.Struct({
      path: WorkspacePath,
      linesAdded: Count,
      linesRemoved: Count,
      checkpointIds: Schema.Array(CheckpointId),
      toolNames: Schema.Array(Schema.String),
      created: Schema.Boolean,
      deleted: Schema.Boolean,
      shellOnly: Schema.Boolean,
    }),
  ),
  linesAdded: Count,
  linesRemoved: Count,
})

export const RewindEvaluation = Schema.Struct({
  strategy: RewindStrategy.pipe(Schema.pickLiteral("active_chain", "file_only", "unavailable")),
  allowedScopes: Schema.Array(RewindScope),
  requestedMessageId: MessageId,
  targetMessageId: Schema.UndefinedOr(MessageId),
  coveredByCompaction: Schema.Boolean,
  checkpointIds: Schema.Array(CheckpointId),
  refusal: Schema.optional(Schema.Struct({ kind: RefusalKind, message: Schema.String })),
})

/** A conversation rewind as a host sees it: the new cursor and what it cut and stopped. */
export const ConversationRewound = Schema.Struct({
  cursor: RevertCursor,
  targetMessageId: MessageId,
  removedMessageIds: Schema.Array(MessageId),
  stoppedTaskIds: Schema.Array(TaskId),
})

export const FileOutcome = Schema.Struct({ path: WorkspacePath, action: FileRestoreAction })

export const FileRestoreResult = Schema.Struct({
  operationId: Schema.UndefinedOr(OperationId),
  checkpointIds: Schema.Array(CheckpointId),
  files: Schema.Array(FileOutcome),
  conversation: Schema.optional(ConversationRewound),
})

export { FileRewindPreview }

export const AppliedFileRewind = Schema.Struct({
  operationId: OperationId,
  checkpointIds: Schema.Array(CheckpointId),
  files: Schema.Array(FileOutcome),
  conversation: Schema.optional(ConversationRewound),
})

export const ForkOutcome = Schema.Struct({ ...ForkCommandResult.fields, replayed: Schema.Boolean })

export const RewindPoint = Schema.Struct({
  messageId: MessageId,
  turnId: TurnId,
  prompt: Schema.String,
  createdAt: Schema.Number,
  paths: Schema.Array(WorkspacePath),
})

export const RewindByForkPreview = Schema.Struct({
  sessionId: SessionId,
  messageId: MessageId,
  prompt: Schema.String,
  keptMessageCount: Count,
  files: Schema.Array(
    Schema.Struct({
      path: WorkspacePath,
      action: FileRestoreAction,
      currentHash: HashOrNull,
      targetHash: HashOrNull,
    }),
  ),
  unsafe: Schema.Array(
    Schema.Struct({
      path: Schema.String,
      reason: Schema.Literal(
        "external_modified",
        "checkpoint_unreadable",
        "file_read_failed",
        "ignored",
        "protected",
        "symlink_in_path",
      ),
      message: Schema.String,
      currentHash: Schema.optional(HashOrNull),
      expectedHash: Schema.optional(HashOrNull),
    }),
  ),
  canApply: Schema.Boolean,
  token: Schema.optional(Schema.String),
  tokenExpiresAt: Schema.optional(Schema.Number),
})

export const RewindByForkResult = Schema.Struct({
  childSessionId: SessionId,
  prompt: Schema.String,
  fork: ForkOutcome,
  operationId: Schema.UndefinedOr(OperationId),
  files: Schema.Array(FileOutcome),
})

export const RewindByForkCancelled = Schema.Struct({ cancelled: Schema.Literal(true) })

export const CaptureOutcome = Schema.Union(
  Schema.Struct({ _tag: Schema.Literal("Captured"), point: PointCaptured, existing: Schema.Boolean }),
  Schema.Struct({ _tag: Schema.Literal("NotCaptured"), reason: Schema.String }),
)

const ManifestEntry = Schema.Union(
  Schema.Struct({ kind: Schema.Literal("file"), hash: ContentHash, mode: Count, size: Count }),
  Schema.Struct({ kind: Schema.Literal("link"), target: Schema.String }),
  Schema.Struct({ kind: Schema.Literal("tombstone") }),
)

export const DiffSide = Schema.Union(
  Schema.Struct({ kind: Schema.Literal("file"), hash: ContentHash, mode: Count, size: Count }),
  Schema.Struct({ kind: Schema.Literal("link"), target: Schema.String }),
)

export const PointDiff = Schema.Struct({
  sessionId: SessionId,
  pointId: PointId,
  capturedAt: Schema.Number,
  entries: Schema.Array(
    Schema.Struct({
      path: WorkspacePath,
      change: Schema.Literal("added", "modified", "deleted"),
      point: Schema.NullOr(DiffSide),
      now: Schema.NullOr(DiffSide),
      untracked: Schema.Boolean,
      patch: Schema.optional(Schema.String),
      noPatch: Schema.optional(
        Schema.Literal("binary", "too_large", "link", "mode_only", "content_missing", "disabled"),
      ),
    }),
  ),
  unchanged: Count,
  skipped: Schema.Array(SkippedPath),
})

export const PointRestorePreview = Schema.Struct({
  pointId: PointId,
  protected: Schema.Array(ProtectedPath),
  changes: Schema.Array(
    Schema.Struct({
      path: WorkspacePath,
      action: Schema.Literal("write", "link", "delete"),
      current: Schema.Union(
        Schema.Struct({ kind: Schema.Literal("file"), hash: ContentHash, mode: Count }),
        Schema.Struct({ kind: Schema.Literal("link"), target: Schema.String }),
        Schema.Struct({ kind: Schema.Literal("absent") }),
      ),
      wanted: ManifestEntry,
    }),
  ),
  unchanged: Count,
  conflicts: Schema.Array(
    Schema.Struct({
      path: WorkspacePath,
      reason: Schema.Literal(
        "not_a_regular_file",
        "unreadable",
        "content_missing",
        "symlink_in_path",
        "escaping_link",
        "content_corrupt",
      ),
      detail: Schema.String,
    }),
  ),
  canApply: Schema.Boolean,
  planDigest: Schema.String,
  token: Schema.optional(Schema.String),
  tokenExpiresAt: Schema.optional(Schema.Number),
})

export const PointRestoreResult = Schema.Struct({
  operationId: OperationId,
  rescuePointId: PointId,
  event: PointRestored,
})

export const RedoResult = Schema.Struct({
  operationId: OperationId,
  redoneOperationId: OperationId,
  files: Schema.Array(FileOutcome),
  activeBranch: Schema.Array(MessageId),
})

export const IncompleteOperation = Schema.Struct({
  record: OperationRecord,
  recorded: Schema.Boolean,
  files: Schema.Array(
    Schema.Struct({
      path: WorkspacePath,
      state: Schema.Literal("rescue", "planned", "changed", "unreadable"),
      currentHash: HashOrNull,
      rescueHash: HashOrNull,
      plannedHash: HashOrNull,
    }),
  ),
  links: Schema.Array(
    Schema.Struct({
      path: WorkspacePath,
      state: Schema.Literal("rescue", "planned", "removed", "changed", "unreadable"),
      current: Schema.NullOr(Schema.String),
      rescue: Schema.NullOr(Schema.String),
      planned: Schema.NullOr(Schema.String),
    }),
  ),
  tree: Schema.optional(
    Schema.Struct({
      root: Schema.String,
      staging: Schema.String,
      childSessionId: SessionId,
      state: Schema.optional(
        Schema.Struct({
          staging: Schema.Literal("missing", "present"),
          root: Schema.Literal("missing", "empty", "occupied"),
        }),
      ),
    }),
  ),
  resolvable: Schema.Boolean,
  damaged: Schema.optional(Schema.String),
})

export const Resolution = Schema.Literal("continue", "rollback")

export const ResolvedOperation = Schema.Struct({
  operationId: OperationId,
  resolution: Resolution,
  files: Schema.Array(FileOutcome),
  /**
   * For an isolated fork's materialisation: whether its private directory was removed, and
   * whether a tree with no session to own it was left at the target (reported, never removed).
   */
  tree: Schema.optional(
    Schema.Struct({
      root: Schema.String,
      staging: Schema.String,
      childSessionId: SessionId,
      stagingRemoved: Schema.Boolean,
      treeLeft: Schema.Boolean,
    }),
  ),
})

export const SnapshotStatus = Schema.Struct({
  blobs: Count,
  storeBytes: Count,
  sharedBytes: Count,
  indexBytes: Count,
  pointsPerSession: Schema.Array(Schema.Struct({ sessionId: SessionId, points: Count })),
  unprotected: Schema.Array(Schema.Struct({ sessionId: SessionId, ...SkippedPath.fields })),
  /** The live engine's workspace watcher: running or not and why, and how the last capture went. */
  watcher: Schema.Struct({
    active: Schema.Boolean,
    reason: Schema.optional(Schema.String),
    backend: Schema.optional(Schema.String),
    watchedDirectories: Schema.optional(Count),
    lastCapture: Schema.optional(
      Schema.Struct({ mode: Schema.Literal("watched", "full"), reason: Schema.optional(Schema.String) }),
    ),
  }),
})

export const CleanupReport = Schema.Struct({
  swept: Schema.Boolean,
  reason: Schema.optional(Schema.String),
  deleted: Schema.Array(ContentHash),
  deletedBytes: Count,
  keptYoung: Count,
  releasedPoints: Schema.Array(Schema.String),
})

export { DoctorProblemKind, DoctorReport } from "../ports/StoreDoctor.js"

export { Checkpoint, Goal, VerificationRecord }

export const BackgroundTaskStarted = Schema.Struct({ taskId: TaskId, branchGeneration: Count })

export const BackgroundTaskFinished = Schema.Union(
  Schema.Struct({ accepted: Schema.Literal(true) }),
  Schema.Struct({
    accepted: Schema.Literal(false),
    reason: Schema.Literal("already_finished", "stale_generation"),
  }),
)
