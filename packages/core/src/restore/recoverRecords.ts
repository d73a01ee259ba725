/**
 * The session records recovery writes: what `continue` commits for an operation the session never
 * recorded (what the interrupted program's own commit would have recorded: the files' record, a
 * files-and-conversation rewind's cursor, a redo's record), and the check, made before any file
 * is written, that such a cursor can still be written.
 */
import {
  FileRewindApplied,
  type MessageId,
  type OperationId,
  type OperationRecord,
  RedoApplied,
  type RedoConversation,
  type SessionEvent,
  type TurnId,
  type WorkspacePath,
} from "@rewind/contracts"
import { Effect, Option } from "effect"
import { evaluateRewindTarget } from "../conversation/evaluateRewindTarget.js"
import { rewindConversation } from "../conversation/rewindConversation.js"
import { OperationJournal } from "../ports/OperationJournal.js"
import { loadSession } from "../session/loadSession.js"
import type { SessionState } from "../session/sessionState.js"
import type { FileOutcome } from "./journaledWrites.js"
import { redoBranch, restoreBranch, versionHash } from "./redo.js"
import {
  appendFresh,
  lastBranchTurn,
  noticeTurnBefore,
  restoreNoticeEvents,
  workspaceRewound,
} from "./restoreRecords.js"

/** What a continued operation did to each file, from its journaled versions. */
const continuedOutcomes = (record: OperationRecord): ReadonlyArray<FileOutcome> =>
  record.intent.files.map((f) => ({
    path: f.path,
    action:
      versionHash(f.rescue) === versionHash(f.planned)
        ? ("unchanged" as const)
        : f.planned._tag === "absent"
          ? ("deleted" as const)
          : ("restored" as const),
  }))

/**
 * The session record `continue` writes for an operation the session never recorded: what the
 * interrupted program would have committed. A files-and-conversation rewind moves the cursor in
 * the same append as its files' record, as it would have without the crash.
 */
export const recordContinued = (record: OperationRecord) => {
  const { intent } = record
  const files = continuedOutcomes(record)
  const sessionId = intent.sessionId
  const checkpointIds = intent.redo?.spentCheckpointIds ?? []
  const reason = `recovered: continued after an interruption (${intent.kind})`
  const notice = { operationId: intent.operationId, checkpointIds, files }
  // What the interrupted program's own commit would have recorded for its files.
  const filesRecord = (target: MessageId | undefined): SessionEvent =>
    intent.kind === "file_rewind_apply"
      ? new FileRewindApplied({
          operationId: intent.operationId,
          checkpointIds: [...checkpointIds],
          files: files.map((f) => ({ path: f.path, action: f.action })),
        })
      : workspaceRewound(
          {
            operationId: intent.operationId,
            scope: target === undefined ? "workspace" : "both",
            targetMessageId: target,
            checkpointIds,
            files,
          },
          "applied",
          reason,
        )
  return Effect.gen(function* () {
    if (intent.kind === "redo" && intent.redoes !== undefined) {
      const conversation = Option.getOrUndefined(yield* (yield* OperationJournal).get(intent.redoes))?.intent
        .redo
      const branch = conversation === undefined ? undefined : yield* redoBranch(sessionId, conversation)
      yield* appendFresh(sessionId, (fresh) =>
        Effect.succeed([redoRecord(fresh, intent.operationId, intent.redoes!, conversation, branch, files)]),
      )
      return
    }
    if (intent.cursorTarget !== undefined) {
      const target = intent.cursorTarget
      const state = yield* loadSession(sessionId)
      const fallback = state.messages.get(target)?.turnId ?? fallbackTurn(state, checkpointIds)
      const noticeEvents =
        fallback === undefined
          ? []
          : yield* restoreNoticeEvents(sessionId, noticeTurnBefore(state, target, fallback), notice)
      yield* rewindConversation({
        sessionId,
        messageId: target,
        scope: "both",
        alsoAppend: [filesRecord(target), ...noticeEvents],
      })
      return
    }
    yield* appendFresh(sessionId, (fresh) => {
      const fallback = fallbackTurn(fresh, checkpointIds)
      return Effect.map(
        fallback === undefined
          ? Effect.succeed([])
          : restoreNoticeEvents(sessionId, lastBranchTurn(fresh, fallback), notice),
        (noticeEvents): ReadonlyArray<SessionEvent> => [filesRecord(undefined), ...noticeEvents],
      )
    })
  })
}

/** The turn a recovered record's notice falls back to: its newest checkpoint's, or the last one. */
const fallbackTurn = (state: SessionState, checkpointIds: ReadonlyArray<string>): TurnId | undefined => {
  const ids = new Set(checkpointIds)
  return state.checkpoints.findLast((c) => ids.has(c.checkpointId))?.turnId ?? [...state.turns.keys()].at(-1)
}

/**
 * Why continuing an unrecorded files-and-conversation rewind cannot move the cursor now (its
 * target left the active branch, say), checked before any file is written.
 */
export const cursorProblem = (record: OperationRecord) =>
  Effect.gen(function* () {
    const target = record.intent.cursorTarget
    if (target === undefined) return undefined
    const state = yield* loadSession(record.intent.sessionId)
    const evaluation = evaluateRewindTarget(state, target, "conversation")
    if (evaluation.refusal !== undefined) return evaluation.refusal.message
    if (evaluation.targetMessageId !== target) return `${target} is not a user message`
    return undefined
  })

const redoRecord = (
  state: SessionState,
  operationId: OperationId,
  redoes: OperationId,
  conversation: RedoConversation | undefined,
  branch: ReadonlyArray<MessageId> | undefined,
  files: ReadonlyArray<{ readonly path: WorkspacePath }>,
) => {
  const cursor = branch === undefined ? undefined : restoreBranch(state, branch)
  return new RedoApplied({
    operationId,
    redoneOperationId: redoes,
    ...(cursor === undefined ? {} : { cursor }),
    unspentCheckpointIds: [...(conversation?.spentCheckpointIds ?? [])],
    files: files.map((f) => f.path),
  })
}
