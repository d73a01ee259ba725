/**
 * The success Schemas of the point, restore and store operations (part of `RewindResults`): a
 * capture, a point diff, a point restore's preview and result, redo, the incomplete operations
 * recovery lists and their resolution, the store's status, a cleanup report and the doctor's.
 */
import {
  ContentHash,
  MessageId,
  OperationId,
  OperationRecord,
  PointCaptured,
  PointId,
  PointRestored,
  ProtectedPath,
  SessionId,
  SkippedPath,
  SkipReason,
  TurnId,
  WorkspacePath,
} from "@rewind/contracts"
import { Schema } from "effect"
import { FileOutcome } from "./fileResults.js"
import { Count, HashOrNull } from "./resultFields.js"

export const CaptureOutcome = Schema.Union(
  Schema.Struct({
    _tag: Schema.Literal("Captured"),
    point: PointCaptured,
    existing: Schema.Boolean,
    /** How the point was found (core `capturePoint.ts` `CaptureScan`); absent for an existing one. */
    scan: Schema.optional(
      Schema.Struct({
        by: Schema.Literal("seal", "watcher", "scan"),
        rescanned: Schema.optional(Count),
        unsealed: Schema.optional(Schema.String),
        fullScan: Schema.optional(Schema.String),
      }),
    ),
  }),
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
  /**
   * What the point's capture left out (a nested repository, a file over the size limit, a part the
   * scan's budget did not reach, an unreadable path...): the point holds nothing of it, so the
   * restore leaves it as it is. Said so that a restore is never taken for more than it is.
   */
  leftOut: Schema.Array(SkippedPath),
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

/**
 * Where "the files as before turn N" is: the point to preview and restore (N's own, or N's plus a
 * tombstone for each path created since, recorded as a rescue point), what that restore deletes
 * beyond N's own tombstones (`added`), and what it leaves alone: paths created later that N's
 * capture may have held unseen (`leftAlone`, with what it left out at or above them, or the
 * directory whose ignore rules excluded them), and what the latest capture left out since
 * (`laterLeftOut`: in no point, so it cannot be deleted).
 */
export const TurnRestoreTarget = Schema.Struct({
  /** The turn's number on the active branch, 1-based, as `rewind timeline` shows it. */
  turn: Count,
  turnId: TurnId,
  pointId: PointId,
  added: Schema.Array(WorkspacePath),
  leftAlone: Schema.Array(
    Schema.Struct({
      path: WorkspacePath,
      at: Schema.String,
      reason: Schema.Union(SkipReason, Schema.Literal("ignored")),
    }),
  ),
  laterLeftOut: Schema.Array(SkippedPath),
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
  /** Paths the redo left as the restore made them: a link leading out of the root, which no restore makes. */
  kept: Schema.Array(ProtectedPath),
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
