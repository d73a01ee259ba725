/**
 * Direct restore from checkpoints (DESIGN §5, path 1): put back a checkpoint's before-content
 * (deleting a file that did not exist before), by checkpoint id, by message (`rewindToMessageCheckpoint`: the
 * latest live checkpoint tied to that user message), or as a cascade over everything from a
 * message onward. A direct restore does not check what the file holds now; that is what
 * preview/apply is for.
 *
 * Order of a restore: refuse it whole if the protection policy keeps any of its paths (the store,
 * `.git`, ignored paths); validate every path and read every snapshot first (anything missing or
 * corrupt refuses the whole, nothing written); peel newest first, so a file edited several times
 * ends with the before-content of its oldest checkpoint, and write each file once with a journal,
 * so a failed write undoes the earlier ones (and a crash leaves every file in its before- or its
 * after-version, never one in between); then commit the record
 * (and for `both` the conversation cursor in the same append). If the commit fails, the files are
 * put back from the journal: a restore that is not recorded did not happen.
 */
import {
  type Checkpoint,
  type CheckpointId,
  describeError,
  type MessageId,
  type OperationId,
  type RewindScope,
  refuse,
  type SessionId,
  type TurnId,
  UnrecoverableRewindError,
  WorkspacePath,
} from "@rewind/contracts"
import { Effect, Either, Schema } from "effect"
import { evaluateRewindTarget } from "../conversation/evaluateRewindTarget.js"
import { type ConversationRewindResult, rewindConversation } from "../conversation/rewindConversation.js"
import { IdGenerator } from "../ports/IdGenerator.js"
import { refuseProtected, runDurableRestore } from "../restore/durableRestore.js"
import type { FileOutcome, PlannedWrite } from "../restore/journaledWrites.js"
import {
  appendFresh,
  lastBranchTurn,
  noticeTurnBefore,
  type RewoundRecord,
  recordUnavailable,
  restoreNoticeEvents,
  workspaceRewound,
} from "../restore/restoreRecords.js"
import { loadSession } from "../session/loadSession.js"
import type { SessionState } from "../session/sessionState.js"
import { loadVersion } from "./checkpointContent.js"

export interface FileRestoreResult {
  /** Absent when nothing was restored (a conversation-only cascade). */
  readonly operationId: OperationId | undefined
  /** The checkpoints undone, newest first. */
  readonly checkpointIds: ReadonlyArray<CheckpointId>
  /** One entry per file, with what the restore did to it. */
  readonly files: ReadonlyArray<FileOutcome>
  /** Present when the conversation was rewound too (scope `conversation` or `both`). */
  readonly conversation?: ConversationRewindResult
}

const isWorkspacePath = Schema.is(WorkspacePath)

interface RestoreOptions {
  readonly kind: "cascade" | "direct_restore"
  readonly scope: RewindScope
  /** The user message the restore is about (recorded; and the cursor target for `both`). */
  readonly targetMessageId: MessageId
}

/** What the files half did, handed to the commit that records it. */
interface RestoredFiles {
  readonly operationId: OperationId
  readonly checkpointIds: ReadonlyArray<CheckpointId>
  readonly files: ReadonlyArray<FileOutcome>
  readonly record: RewoundRecord
}

const restoreCheckpoints = <A, E, R>(
  state: SessionState,
  sessionId: SessionId,
  newestFirst: ReadonlyArray<Checkpoint>,
  options: RestoreOptions,
  commit: (restored: RestoredFiles) => Effect.Effect<A, E, R>,
) =>
  Effect.gen(function* () {
    const ids = yield* IdGenerator
    const operationId = (yield* ids.next("op")) as OperationId
    const checkpointIds = newestFirst.map((c) => c.checkpointId)
    const record = (files: ReadonlyArray<FileOutcome>): RewoundRecord => ({
      operationId,
      scope: options.scope,
      targetMessageId: options.targetMessageId,
      checkpointIds,
      files,
    })

    // The protection policy first: a restore that would write the store, `.git` or an ignored
    // path is refused whole, before any snapshot is read.
    yield* refuseProtected(newestFirst.map((c) => c.path).filter(isWorkspacePath))
    // Every snapshot is read before the first write: one that is missing refuses the whole.
    const problems: Array<{ checkpointId: CheckpointId; path: string; message: string }> = []
    const writes: Array<PlannedWrite> = []
    for (const c of newestFirst) {
      if (!isWorkspacePath(c.path)) {
        problems.push({ checkpointId: c.checkpointId, path: c.path, message: "not a workspace path" })
        continue
      }
      const before = yield* loadVersion(c.before, c.checkpointId, "before")
      if (Either.isLeft(before)) {
        problems.push({ checkpointId: c.checkpointId, path: c.path, message: before.left.message })
        continue
      }
      writes.push({
        path: c.path,
        content: before.right,
        ...(c.before._tag === "present" && c.before.mode !== undefined ? { mode: c.before.mode } : {}),
        // Just read (and verified) from the store: the planned version needs no second copy.
        ...(c.before._tag === "present" ? { storedHash: c.before.hash } : {}),
      })
    }
    if (problems.length > 0) {
      const reason = `checkpoint_unreadable: ${problems.map((p) => p.message).join("; ")}`
      yield* recordUnavailable(sessionId, record([]), reason)
      return yield* refuse(
        "unavailable",
        `cannot restore: ${problems.length} of ${newestFirst.length} snapshots cannot be used (${problems
          .map((p) => p.message)
          .join("; ")}); nothing was changed`,
        { operationId, problems },
      )
    }

    const applied = yield* runDurableRestore(
      {
        sessionId,
        operationId,
        kind: options.kind,
        writes,
        redo: {
          branchAtVersion: state.version,
          // Only what this restore spends: a redo must not revive a checkpoint an earlier rewind spent.
          spentCheckpointIds: checkpointIds.filter((id) => !state.spentCheckpointIds.has(id)),
        },
        ...(options.scope === "both" ? { cursorTarget: options.targetMessageId } : {}),
      },
      (files) => commit({ operationId, checkpointIds, files, record: record(files) }),
    ).pipe(
      Effect.tapError((e) =>
        e instanceof UnrecoverableRewindError
          ? recordUnavailable(sessionId, record([]), `unrecoverable: ${e.message}`)
          : recordUnavailable(sessionId, record([]), `the restore failed: ${describeError(e)}`),
      ),
    )
    if (applied._tag === "RolledBack") {
      yield* recordUnavailable(sessionId, record([]), `write_failed: ${applied.message}`)
      return yield* refuse(
        "unavailable",
        `cannot restore: ${applied.message}; every file already written was put back, nothing changed`,
        { operationId, step: applied.step, path: applied.path },
      )
    }
    const files = applied.files
    return { operationId, checkpointIds, files, committed: applied.committed }
  })

/** Commits a workspace-only restore: the record and the model's notice, on the latest state. */
const commitWorkspaceRestore =
  (sessionId: SessionId, fallbackTurn: TurnId, loaded: SessionState) => (restored: RestoredFiles) =>
    appendFresh(
      sessionId,
      (fresh) =>
        Effect.map(
          restoreNoticeEvents(sessionId, lastBranchTurn(fresh, fallbackTurn), restored),
          (notice) => [workspaceRewound(restored.record, "applied"), ...notice],
        ),
      loaded,
    )

const restoreFilesOnly = (
  state: SessionState,
  sessionId: SessionId,
  newestFirst: ReadonlyArray<Checkpoint>,
  options: RestoreOptions,
) =>
  Effect.map(
    restoreCheckpoints(
      state,
      sessionId,
      newestFirst,
      options,
      commitWorkspaceRestore(sessionId, newestFirst[0]!.turnId, state),
    ),
    ({ committed: _, ...result }): FileRestoreResult => ({ ...result }),
  )

export interface RewindToCheckpointInput {
  readonly sessionId: SessionId
  readonly checkpointId: CheckpointId
}

/** Puts back the before-content of one checkpoint (one file), whatever the file holds now. */
export const rewindToCheckpoint = (input: RewindToCheckpointInput) =>
  Effect.gen(function* () {
    const state = yield* loadSession(input.sessionId)
    const checkpoint = state.checkpoints.find((c) => c.checkpointId === input.checkpointId)
    if (checkpoint === undefined) {
      return yield* refuse(
        "not_found",
        `checkpoint ${input.checkpointId} is not in session ${input.sessionId}`,
      )
    }
    return yield* restoreFilesOnly(state, input.sessionId, [checkpoint], {
      kind: "direct_restore",
      scope: "workspace",
      targetMessageId: checkpoint.anchorMessageId,
    })
  })

export interface RewindToMessageCheckpointInput {
  readonly sessionId: SessionId
  readonly messageId: MessageId
}

/** Restores the latest live checkpoint tied to a user message (one file). */
export const rewindToMessageCheckpoint = (input: RewindToMessageCheckpointInput) =>
  Effect.gen(function* () {
    const state = yield* loadSession(input.sessionId)
    const evaluation = evaluateRewindTarget(state, input.messageId, "workspace")
    if (evaluation.refusal !== undefined) {
      return yield* refuse(evaluation.refusal.kind, evaluation.refusal.message)
    }
    const target = evaluation.targetMessageId!
    const live = new Set(evaluation.checkpointIds)
    const tied = state.checkpoints.filter((c) => c.anchorMessageId === target && live.has(c.checkpointId))
    const latest = tied.at(-1)
    if (latest === undefined) {
      return yield* refuse(
        "no_checkpoint",
        `no live checkpoint is tied to message ${target}; later messages have some (use a cascade to undo them)`,
      )
    }
    return yield* restoreFilesOnly(state, input.sessionId, [latest], {
      kind: "direct_restore",
      scope: "workspace",
      targetMessageId: target,
    })
  })

export interface RewindCascadeInput {
  readonly sessionId: SessionId
  readonly messageId: MessageId
  readonly scope: RewindScope
}

/**
 * Undoes everything from a user message onward. `workspace`: every live checkpoint anchored at or
 * after the message, newest first. `conversation`: the cursor only. `both`: the files, then the
 * cursor, and the cursor only once the files succeeded (a failed cursor puts the files back).
 */
export const rewindCascade = (input: RewindCascadeInput) =>
  Effect.gen(function* () {
    const state = yield* loadSession(input.sessionId)
    const evaluation = evaluateRewindTarget(state, input.messageId, input.scope)
    if (evaluation.refusal !== undefined) {
      return yield* refuse(evaluation.refusal.kind, evaluation.refusal.message)
    }
    if (!evaluation.allowedScopes.includes(input.scope)) {
      return yield* refuse(
        "unavailable",
        `a ${input.scope} rewind is not possible for message ${input.messageId} (allowed: ${evaluation.allowedScopes.join(", ") || "none"})`,
      )
    }
    if (input.scope === "conversation") {
      const conversation = yield* rewindConversation({
        sessionId: input.sessionId,
        messageId: input.messageId,
        scope: "conversation",
      })
      return {
        operationId: undefined,
        checkpointIds: [],
        files: [],
        conversation,
      } satisfies FileRestoreResult
    }
    const byId = new Map(state.checkpoints.map((c) => [c.checkpointId, c]))
    const newestFirst = evaluation.checkpointIds.map((id) => byId.get(id)!).reverse()
    const targetMessageId = evaluation.targetMessageId!
    if (input.scope === "workspace") {
      return yield* restoreFilesOnly(state, input.sessionId, newestFirst, {
        kind: "cascade",
        scope: "workspace",
        targetMessageId,
      })
    }
    // `both`: the cursor is committed in the same append as the files' record, and only after the
    // files succeeded; the notice follows the cursor so it lands on the new branch.
    const noticeTurnId = noticeTurnBefore(
      state,
      targetMessageId,
      state.messages.get(targetMessageId)?.turnId ?? newestFirst[0]!.turnId,
    )
    const result = yield* restoreCheckpoints(
      state,
      input.sessionId,
      newestFirst,
      { kind: "cascade", scope: "both", targetMessageId },
      (restored) =>
        Effect.flatMap(restoreNoticeEvents(input.sessionId, noticeTurnId, restored), (notice) =>
          rewindConversation({
            sessionId: input.sessionId,
            messageId: targetMessageId,
            scope: "both",
            alsoAppend: [workspaceRewound(restored.record, "applied"), ...notice],
          }),
        ),
    )
    return {
      operationId: result.operationId,
      checkpointIds: result.checkpointIds,
      files: result.files,
      conversation: result.committed,
    } satisfies FileRestoreResult
  })
