/**
 * Applies a file rewind preview (DESIGN §5, path 2): re-checks every hash, writes with the journal,
 * records `FileRewindApplied`.
 *
 * The steps run in this order, and each refuses before anything is written: the token (without a
 * valid one for this very plan nothing else is looked at), the checkpoints (still in the session,
 * none already undone), the workspace (the simulation run again must match the preview hash for
 * hash), the conversation cursor when the rewind also moves it. Only then is the token spent —
 * before the first write, so of two concurrent applies of one preview only one writes — and the
 * writes run through the durable restore engine, which puts back every file already written if
 * one fails. The undo offer stays spent after a reopen because `FileRewindApplied` is committed
 * with the operation.
 */
import {
  type Checkpoint,
  type CheckpointId,
  FileRewindApplied,
  FileRewindPreview,
  type MessageId,
  type OperationId,
  refuse,
  UnrecoverableRewindError,
} from "@rewind/contracts"
import { Effect, Either, Schema } from "effect"
import { evaluateRewindTarget } from "../conversation/evaluateRewindTarget.js"
import { type ConversationRewindResult, rewindConversation } from "../conversation/rewindConversation.js"
import { IdGenerator } from "../ports/IdGenerator.js"
import { runDurableRestore } from "../restore/durableRestore.js"
import type { FileOutcome, PlannedWrite } from "../restore/journaledWrites.js"
import { checkPreviewToken, redeemPreviewToken } from "../restore/previewTokens.js"
import {
  appendFresh,
  lastBranchTurn,
  noticeTurnBefore,
  type RewoundRecord,
  recordUnavailable,
  restoreNoticeEvents,
} from "../restore/restoreRecords.js"
import { loadSession } from "../session/loadSession.js"
import type { SessionState } from "../session/sessionState.js"
import {
  hashOrNull,
  planDigest,
  type Simulation,
  samePlan,
  selectionTarget,
  simulate,
  toPreview,
} from "./fileRewindSimulation.js"

export interface FileRewindApplyResult {
  readonly operationId: OperationId
  readonly checkpointIds: ReadonlyArray<CheckpointId>
  readonly files: ReadonlyArray<FileOutcome>
  /** Present when the conversation was rewound in the same commit (`rewindConversationTo`). */
  readonly conversation?: ConversationRewindResult
}

export interface ApplyFileRewindOptions {
  /**
   * Also rewind the conversation to this user message, in the same append as the files' record
   * (and journaled with the operation, so a recovery that continues it moves the cursor too):
   * the files-and-conversation form an edit in `rewind` mode uses.
   */
  readonly rewindConversationTo?: MessageId
}

/** The preview as given, its token, and the scope the token was issued for, all checked. */
const checkedPreview = (input: FileRewindPreview) =>
  Effect.gen(function* () {
    const decoded = Schema.decodeUnknownEither(FileRewindPreview)(input)
    if (Either.isLeft(decoded)) return yield* refuse("invalid_input", "this is not a file rewind preview")
    const preview = decoded.right
    if (preview.token === undefined) {
      return yield* refuse("token_invalid", "apply needs the token of a preview; run the preview again")
    }
    const token = preview.token
    const target = selectionTarget(preview.selection)
    const issued = yield* checkPreviewToken(preview.sessionId, target, token)
    if (issued.planDigest !== planDigest(preview)) {
      return yield* refuse(
        "token_invalid",
        "this token was issued for a different plan than the one given; run the preview again",
      )
    }
    if (preview.checkpointIds.length === 0) {
      return yield* refuse("nothing_to_undo", "the preview has no checkpoint to undo")
    }
    if (!preview.canApply) {
      return yield* refuse(
        "unsafe_files",
        `the preview has ${preview.unsafe.length} unsafe file(s): ${preview.unsafe.map((u) => `${u.path} (${u.reason})`).join(", ")}; nothing was written`,
        { preview },
      )
    }
    return { preview, token, target }
  })

/** The preview's checkpoints as the session holds them now, newest first; none may be spent. */
const checkedCheckpoints = (preview: FileRewindPreview, state: SessionState) =>
  Effect.gen(function* () {
    const byId = new Map(state.checkpoints.map((c) => [c.checkpointId as string, c]))
    for (const id of preview.checkpointIds) {
      if (!byId.has(id))
        return yield* refuse("not_found", `checkpoint ${id} is not in session ${preview.sessionId}`)
      if (state.spentCheckpointIds.has(id)) {
        return yield* refuse("conflict", `checkpoint ${id} was already undone; preview again`)
      }
    }
    const wanted = new Set<string>(preview.checkpointIds)
    return state.checkpoints.filter((c) => wanted.has(c.checkpointId)).reverse()
  })

/** The simulation run again on the workspace as it is now; it must be the preview's plan. */
const unchangedSince = (preview: FileRewindPreview, newestFirst: ReadonlyArray<Checkpoint>) =>
  Effect.gen(function* () {
    const simulation = yield* simulate(newestFirst)
    const fresh = toPreview(preview.sessionId, preview.selection, simulation)
    if (!fresh.canApply) {
      return yield* refuse(
        "unsafe_files",
        `files changed since the preview: ${fresh.unsafe.map((u) => `${u.path} (${u.reason})`).join(", ")}; nothing was written`,
        { preview: fresh },
      )
    }
    if (!samePlan(fresh.files, preview.files)) {
      return yield* refuse(
        "conflict",
        "the workspace changed since the preview; preview again. Nothing was written",
        {
          preview: fresh,
        },
      )
    }
    return { simulation, fresh }
  })

/** The files half was checked by the preview; this is the cursor's own check. */
const checkedCursorTarget = (state: SessionState, cursorTarget: MessageId) =>
  Effect.gen(function* () {
    const evaluation = evaluateRewindTarget(state, cursorTarget, "conversation")
    if (evaluation.refusal !== undefined) {
      return yield* refuse(evaluation.refusal.kind, evaluation.refusal.message)
    }
    if (evaluation.targetMessageId !== cursorTarget) {
      return yield* refuse(
        "not_a_user_message",
        `a files-and-conversation rewind targets a user message, not ${cursorTarget}`,
      )
    }
  })

/** One write per file whose content the undo changes, each guarded by the hash it has now. */
const plannedWrites = (simulation: Simulation): Array<PlannedWrite> =>
  simulation.files
    .filter((f) => hashOrNull(f.simulated) !== f.currentHash)
    .map((f) => ({
      path: f.path,
      content: f.simulated,
      expectedCurrentHash: f.currentHash,
      ...(f.mode === undefined ? {} : { mode: f.mode }),
    }))

interface Commit {
  readonly preview: FileRewindPreview
  readonly state: SessionState
  readonly newestFirst: ReadonlyArray<Checkpoint>
  readonly operationId: OperationId
  readonly files: ReadonlyArray<FileOutcome>
  readonly cursorTarget: MessageId | undefined
}

/**
 * The events the durable restore commits once every write landed: `FileRewindApplied` and the
 * restore notice, and with a cursor target the conversation rewind in the same append (the
 * notice follows the cursor, so it is filed under the last turn kept).
 */
const commitEvents = ({ preview, state, newestFirst, operationId, files, cursorTarget }: Commit) => {
  const applied = new FileRewindApplied({
    operationId,
    checkpointIds: [...preview.checkpointIds],
    files: files.map((f) => ({ path: f.path, action: f.action })),
  })
  const noticeInput = { operationId, checkpointIds: preview.checkpointIds, files }
  if (cursorTarget !== undefined) {
    const turn = noticeTurnBefore(state, cursorTarget, newestFirst[0]!.turnId)
    return Effect.flatMap(restoreNoticeEvents(preview.sessionId, turn, noticeInput), (notice) =>
      rewindConversation({
        sessionId: preview.sessionId,
        messageId: cursorTarget,
        scope: "both",
        alsoAppend: [applied, ...notice],
      }),
    )
  }
  return Effect.as(
    appendFresh(
      preview.sessionId,
      (latest) =>
        Effect.map(
          restoreNoticeEvents(preview.sessionId, lastBranchTurn(latest, newestFirst[0]!.turnId), noticeInput),
          (notice) => [applied, ...notice],
        ),
      state,
    ),
    undefined,
  )
}

/**
 * Applies a preview: re-checks every hash, writes with the journal, records `FileRewindApplied`.
 * Refuses (writing nothing) when the preview cannot be applied or the workspace moved on since.
 */
export const applyFileRewind = (input: FileRewindPreview, options: ApplyFileRewindOptions = {}) =>
  Effect.gen(function* () {
    const { preview, token, target } = yield* checkedPreview(input)
    const state = yield* loadSession(preview.sessionId)
    const newestFirst = yield* checkedCheckpoints(preview, state)
    const { simulation, fresh } = yield* unchangedSince(preview, newestFirst)
    const cursorTarget = options.rewindConversationTo
    if (cursorTarget !== undefined) yield* checkedCursorTarget(state, cursorTarget)

    yield* redeemPreviewToken(preview.sessionId, target, token)
    const operationId = (yield* (yield* IdGenerator).next("op")) as OperationId
    const record = (files: ReadonlyArray<FileOutcome>): RewoundRecord => ({
      operationId,
      scope: "workspace",
      targetMessageId: preview.selection._tag === "message" ? preview.selection.messageId : undefined,
      checkpointIds: preview.checkpointIds,
      files,
    })
    const files: ReadonlyArray<FileOutcome> = fresh.files.map((f) => ({ path: f.path, action: f.action }))
    const applied = yield* runDurableRestore(
      {
        sessionId: preview.sessionId,
        operationId,
        kind: "file_rewind_apply",
        writes: plannedWrites(simulation),
        redo: { branchAtVersion: state.version, spentCheckpointIds: [...preview.checkpointIds] },
        ...(cursorTarget === undefined ? {} : { cursorTarget }),
      },
      () => commitEvents({ preview, state, newestFirst, operationId, files, cursorTarget }),
    ).pipe(
      Effect.tapError((e) =>
        recordUnavailable(
          preview.sessionId,
          record([]),
          e instanceof UnrecoverableRewindError
            ? `unrecoverable: ${e.message}`
            : `the undo failed: ${e.message}`,
        ),
      ),
    )
    if (applied._tag === "RolledBack") {
      yield* recordUnavailable(preview.sessionId, record([]), `write_failed: ${applied.message}`)
      return yield* refuse(
        "unavailable",
        `the undo failed: ${applied.message}; every file already written was put back, nothing changed`,
        { operationId, step: applied.step, path: applied.path },
      )
    }
    return {
      operationId,
      checkpointIds: preview.checkpointIds,
      files,
      ...(applied.committed === undefined ? {} : { conversation: applied.committed }),
    } satisfies FileRewindApplyResult
  })
