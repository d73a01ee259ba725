/**
 * The `RewindOperations` entries of the fork operations: forks, rewind by fork, side chats, and
 * the diff and merge of isolated forks' trees (issue 28, `mergeSpecs`).
 */
import { PointId, SessionId } from "@rewind/contracts"
import { Schema } from "effect"
import * as A from "./arguments.js"
import { arg, commandId, forkWorkspace, messageId, op, optional, sessionId, token } from "./operationSpec.js"
import * as R from "./results.js"
import * as T from "./treeResults.js"

export const forkSpecs = {
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
}

/** Isolated forks: compare two sessions' trees and merge one into the other (issue 28). */
export const mergeSpecs = {
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
