/**
 * The `RewindOperations` entries of the file and checkpoint operations: record a mutation or an
 * intent, list checkpoints and a turn's changes, evaluate and apply a rewind of the conversation,
 * the files or both.
 */
import {
  CheckpointId,
  FileRewindPreview,
  RewindScope,
  TurnId,
  WorkspacePathFromHost,
  WriteIntentDeclared,
} from "@rewind/contracts"
import { Schema } from "effect"
import * as A from "./arguments.js"
import { arg, messageId, op, optional, sessionId } from "./operationSpec.js"
import * as R from "./results.js"

export const fileSpecs = {
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
}
