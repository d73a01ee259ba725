/**
 * What a workspace error says about a path's absence, in one place for the capture, the live
 * tree, the restore plan, the diff and the journaled writes: a regular file standing where the
 * path needs a directory (`ENOTDIR`) means no entry can be at the path; so does a symlink on the
 * way for a scan (links are recorded as links, never followed, so nothing of this tree lies
 * beneath one). Either is an answer ("not there"), not a failure.
 */
import type { WorkspaceError } from "../ports/Workspace.js"

/** A regular file stands where the path needs a directory: nothing can be at the path. */
export const fileOnTheWay = (error: WorkspaceError) =>
  error._tag === "WorkspaceIoError" && error.code === "ENOTDIR"

/** A file or a symlink stands on the way: no entry of this tree can be at the path. */
export const nothingCanBeThere = (error: WorkspaceError) =>
  fileOnTheWay(error) || (error._tag === "PathRefused" && error.reason === "symlink_in_path")
