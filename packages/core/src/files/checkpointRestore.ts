/**
 * The restore of a set of checkpoints that every direct restore shares (`restoreCheckpoints`): one
 * operation id, the protection policy on every path (refused whole, before any snapshot is read),
 * every snapshot read before the first write (one missing refuses the whole, nothing written), one
 * durable, redoable write of each file's oldest before-content, then the caller's commit. A
 * refusal or failure is recorded as a `WorkspaceRewound` with outcome unavailable; a restore whose
 * commit fails is put back, so a restore that is not recorded did not happen.
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
import type { ConversationRewindResult } from "../conversation/rewindConversation.js"
import { IdGenerator } from "../ports/IdGenerator.js"
import { refuseProtected, runDurableRestore } from "../restore/durableRestore.js"
import type { FileOutcome, PlannedWrite } from "../restore/journaledWrites.js"
import {
  appendFresh,
  lastBranchTurn,
  type RewoundRecord,
  recordUnavailable,
  restoreNoticeEvents,
  workspaceRewound,
} from "../restore/restoreRecords.js"
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

export interface RestoreOptions {
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

export const restoreCheckpoints = <A, E, R>(
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

export const restoreFilesOnly = (
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
