/**
 * Which program answers each operation of `RewindApi`, grouped by capability: sessions and the
 * conversation, files and checkpoints, forks and merges, points, restores and the store. Each entry
 * goes through the door (`answer`, `door.ts`), so a program runs only on decoded arguments and in
 * the tree of its session. The conversation commands only load, decide and append, so they run
 * under `retryOnVersionConflict`; the programs that write files retry their own appends. The API
 * answers a conversation rewind with the cursor and the ids, never the folded state.
 */
import { refuse, type WorkspacePath } from "@rewind/contracts"
import { Effect, Option } from "effect"
import { evaluateRewindTarget } from "../conversation/evaluateRewindTarget.js"
import { rewindConversation } from "../conversation/rewindConversation.js"
import { applyFileRewind } from "../files/applyFileRewind.js"
import { recordCheckpointFromIntent } from "../files/checkpointFromIntent.js"
import { previewFileRewind } from "../files/fileRewindPreview.js"
import { recordFileMutation } from "../files/recordFileMutation.js"
import { rewindCascade, rewindToCheckpoint, rewindToMessageCheckpoint } from "../files/restoreCheckpoints.js"
import { getTurnFileChanges } from "../files/turnFileChanges.js"
import { forkAtMessage } from "../fork/forkAtMessage.js"
import { completeTurnWithBoundary } from "../fork/forkBoundary.js"
import { forkFromCheckpoint } from "../fork/forkFromCheckpoint.js"
import { applyMerge, previewMerge } from "../fork/mergeSessions.js"
import { cancelRewindByFork, previewRewindByFork, rewindByFork } from "../fork/rewindByFork.js"
import { listRewindPoints } from "../fork/rewindByForkPlan.js"
import { diffSessions } from "../fork/sessionTrees.js"
import { createSideChat } from "../fork/sideChat.js"
import { IdGenerator } from "../ports/IdGenerator.js"
import { StoreDoctor } from "../ports/StoreDoctor.js"
import { recover, resolveOperation } from "../restore/recover.js"
import { redo } from "../restore/redo.js"
import { runningTurn } from "../session/branchView.js"
import { loadSession, retryOnVersionConflict } from "../session/loadSession.js"
import {
  appendReply,
  appendUserMessage,
  applyCompaction,
  completeTurn,
  createSession,
  finishBackgroundTask,
  listSessions,
  startBackgroundTask,
} from "../session/sessionCommands.js"
import { sessionHistory } from "../session/sessionHistory.js"
import { recordVerification, updateGoal } from "../session/sessionRecords.js"
import { transcript } from "../session/transcript.js"
import { applyPointRestore } from "../snapshot/applyPointRestore.js"
import { capturePoint } from "../snapshot/capturePoint.js"
import { diffPoint } from "../snapshot/pointDiff.js"
import { cleanup, previewCleanup, snapshotStatus } from "../snapshot/pointGc.js"
import { readPointIndex } from "../snapshot/pointIndex.js"
import { previewPointRestore } from "../snapshot/restoreToPoint.js"
import { turnRestoreTarget } from "../snapshot/sessionTurns.js"
import { declareWriteIntent } from "../snapshot/writeIntents.js"
import type { Door } from "./door.js"

const newCommandId = Effect.flatMap(IdGenerator, (ids) => ids.next("cmd"))

/** The host's command id (so a retried call replays), or a fresh one. */
const withCommandId = <A, E, R>(
  commandId: string | undefined,
  body: (commandId: never) => Effect.Effect<A, E, R>,
) =>
  Effect.flatMap(commandId === undefined ? newCommandId : Effect.succeed(commandId), (id) =>
    body(id as never),
  )

/** A conversation rewind as the API answers it: the cursor and the ids, not the folded state. */
const wireConversation = <C extends { readonly cursor: unknown }>(c: C) => {
  const { cursor, targetMessageId, removedMessageIds, stoppedTaskIds } = c as C & {
    readonly targetMessageId: never
    readonly removedMessageIds: never
    readonly stoppedTaskIds: never
  }
  return { cursor, targetMessageId, removedMessageIds, stoppedTaskIds } as never
}

const withWireConversation = <V extends { readonly conversation?: { readonly cursor: unknown } }>(
  value: V,
) =>
  value.conversation === undefined ? value : { ...value, conversation: wireConversation(value.conversation) }

/** Sessions and the conversation: create and list, append, complete, compact, read, records, tasks. */
export const sessionOperations = (answer: Door) => ({
  createSession: answer("createSession", createSession),
  listSessions: answer("listSessions", listSessions),
  runningTurn: answer("runningTurn", (sessionId) => Effect.map(loadSession(sessionId), runningTurn)),
  appendUserMessage: answer("appendUserMessage", (sessionId, input) =>
    retryOnVersionConflict(appendUserMessage(sessionId, input)),
  ),
  appendReply: answer("appendReply", (sessionId, input) =>
    retryOnVersionConflict(appendReply(sessionId, input)),
  ),
  completeTurn: answer("completeTurn", (sessionId, turnId, status) =>
    retryOnVersionConflict(completeTurn(sessionId, turnId, status)),
  ),
  completeTurnWithBoundary: answer("completeTurnWithBoundary", (sessionId, turnId, status) =>
    retryOnVersionConflict(completeTurnWithBoundary(sessionId, turnId, status)),
  ),
  applyCompaction: answer("applyCompaction", (sessionId, input) =>
    retryOnVersionConflict(applyCompaction(sessionId, input)),
  ),
  transcript: answer("transcript", (sessionId) => Effect.map(loadSession(sessionId), transcript)),
  sessionHistory: answer("sessionHistory", (sessionId, window) =>
    Effect.map(loadSession(sessionId), (state) => sessionHistory(state, window)),
  ),
  updateGoal: answer("updateGoal", (sessionId, input) =>
    retryOnVersionConflict(updateGoal(sessionId, input)),
  ),
  recordVerification: answer("recordVerification", (sessionId, input) =>
    retryOnVersionConflict(recordVerification(sessionId, input)),
  ),
  startBackgroundTask: answer("startBackgroundTask", (sessionId, turnId, description, taskId) =>
    retryOnVersionConflict(startBackgroundTask(sessionId, turnId, description, taskId)),
  ),
  finishBackgroundTask: answer("finishBackgroundTask", (sessionId, taskId, outcome) =>
    retryOnVersionConflict(finishBackgroundTask(sessionId, taskId, outcome)),
  ),
})

/** Files and checkpoints: record a mutation or an intent, list, rewind (conversation, files, both). */
export const fileOperations = (answer: Door) => ({
  recordFileMutation: answer("recordFileMutation", recordFileMutation),
  declareWriteIntent: answer("declareWriteIntent", declareWriteIntent),
  recordCheckpointFromIntent: answer("recordCheckpointFromIntent", (input) =>
    // The door decoded it with `WorkspacePathFromHost`: the path is a normalised workspace path.
    recordCheckpointFromIntent({ ...input, path: input.path as WorkspacePath }),
  ),
  listCheckpoints: answer("listCheckpoints", (sessionId) =>
    Effect.map(loadSession(sessionId), (state) => state.checkpoints),
  ),
  turnFileChanges: answer("turnFileChanges", getTurnFileChanges),
  evaluateRewindTarget: answer("evaluateRewindTarget", (sessionId, messageId, scope) =>
    Effect.map(loadSession(sessionId), (state) => evaluateRewindTarget(state, messageId, scope)),
  ),
  rewindConversation: answer("rewindConversation", (sessionId, messageId) =>
    Effect.map(rewindConversation({ sessionId, messageId }), wireConversation),
  ),
  rewindToCheckpoint: answer("rewindToCheckpoint", (sessionId, checkpointId) =>
    Effect.map(rewindToCheckpoint({ sessionId, checkpointId }), withWireConversation),
  ),
  rewindToMessageCheckpoint: answer("rewindToMessageCheckpoint", (sessionId, messageId) =>
    Effect.map(rewindToMessageCheckpoint({ sessionId, messageId }), withWireConversation),
  ),
  rewindCascade: answer("rewindCascade", (sessionId, messageId, scope) =>
    Effect.map(rewindCascade({ sessionId, messageId, scope }), withWireConversation),
  ),
  previewFileRewind: answer("previewFileRewind", previewFileRewind),
  applyFileRewind: answer("applyFileRewind", (preview) =>
    Effect.map(applyFileRewind(preview), withWireConversation),
  ),
})

/** Forks, side chats and rewind by fork. */
export const forkOperations = (answer: Door) => ({
  forkAtMessage: answer("forkAtMessage", (sessionId, messageId, commandId, workspace) =>
    withCommandId(commandId, (id) => forkAtMessage({ sessionId, messageId, commandId: id, workspace })),
  ),
  forkFromCheckpoint: answer("forkFromCheckpoint", (sessionId, target, commandId, workspace) =>
    withCommandId(commandId, (id) => forkFromCheckpoint({ sessionId, target, commandId: id, workspace })),
  ),
  listRewindPoints: answer("listRewindPoints", listRewindPoints),
  previewRewindByFork: answer("previewRewindByFork", (sessionId, messageId) =>
    previewRewindByFork({ sessionId, messageId }),
  ),
  rewindByFork: answer("rewindByFork", (sessionId, messageId, token, commandId, workspace) =>
    withCommandId(commandId, (id) => rewindByFork({ sessionId, messageId, token, commandId: id, workspace })),
  ),
  cancelRewindByFork: answer("cancelRewindByFork", (sessionId, messageId, token) =>
    cancelRewindByFork({ sessionId, messageId, token }),
  ),
  createSideChat: answer("createSideChat", (sessionId, commandId) =>
    withCommandId(commandId, (id) => createSideChat({ sessionId, commandId: id })),
  ),
})

/** Isolated forks: the diff and merge of two sessions' trees (issue 28). */
export const mergeOperations = (answer: Door) => ({
  diffSessions: answer("diffSessions", (sessionId, otherSessionId, options) =>
    diffSessions(sessionId, otherSessionId, options ?? {}),
  ),
  previewMerge: answer("previewMerge", (sessionId, sourceSessionId, options) =>
    previewMerge(sessionId, sourceSessionId, options ?? {}),
  ),
  applyMerge: answer("applyMerge", applyMerge),
})

/** Points, restores (redo, recover), the store's status and GC, and the doctor. */
export const pointAndStoreOperations = (answer: Door) => ({
  capturePoint: answer("capturePoint", (sessionId, turnId, options) =>
    capturePoint(sessionId, turnId, options ?? {}),
  ),
  listPoints: answer("listPoints", (sessionId) =>
    Effect.zipRight(
      loadSession(sessionId),
      Effect.map(readPointIndex(sessionId), (index) => index.points),
    ),
  ),
  diffPoint: answer("diffPoint", (sessionId, pointId, options) => diffPoint(sessionId, pointId, options)),
  previewPointRestore: answer("previewPointRestore", previewPointRestore),
  turnRestoreTarget: answer("turnRestoreTarget", turnRestoreTarget),
  restorePoint: answer("restorePoint", applyPointRestore),
  redo: answer("redo", redo),
  recover: answer("recover", recover),
  resolveOperation: answer("resolveOperation", resolveOperation),
  snapshotStatus: answer("snapshotStatus", () => snapshotStatus),
  previewCleanup: answer("previewCleanup", (options) => previewCleanup(options ?? {})),
  cleanup: answer("cleanup", (options) => cleanup(options ?? {})),
  doctor: answer("doctor", (options) =>
    Effect.gen(function* () {
      const doctor = yield* Effect.serviceOption(StoreDoctor)
      if (Option.isNone(doctor)) {
        return yield* refuse(
          "unavailable",
          "doctor: this host supplies no StoreDoctor, so the store cannot be checked here",
        )
      }
      return yield* doctor.value.check(options ?? {})
    }),
  ),
})
