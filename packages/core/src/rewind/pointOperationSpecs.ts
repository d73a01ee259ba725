/**
 * The `RewindOperations` entries of the point, restore and store operations: capture, list, diff
 * and restore points, redo, recovery, the store's status and GC, the doctor.
 */
import { OperationId, PointCaptured, PointId, TurnId } from "@rewind/contracts"
import { Schema } from "effect"
import * as A from "./arguments.js"
import { arg, op, sessionId, token } from "./operationSpec.js"
import * as R from "./results.js"

export const pointSpecs = {
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
  turnRestoreTarget: op(
    "turnRestoreTarget",
    "write",
    "Where the files were before a turn: the point to preview and restore (the turn's own, or one recorded with a tombstone for each file created since), and what that restore deletes and leaves alone.",
    [sessionId, arg("turnId", TurnId)],
    R.TurnRestoreTarget,
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
}
