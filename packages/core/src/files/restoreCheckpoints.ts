/**
 * Direct restore from checkpoints (DESIGN §5, path 1): put back a checkpoint's before-content
 * (deleting a file that did not exist before), by checkpoint id, by message
 * (`rewindToMessageCheckpoint`: the latest live checkpoint tied to that user message), or as a
 * cascade over everything from a message onward. A direct restore does not check what the file
 * holds now; that is what preview/apply is for. The restore they share is `checkpointRestore.ts`.
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
  type CheckpointId,
  type MessageId,
  type RewindScope,
  refuse,
  type SessionId,
} from "@rewind/contracts"
import { Effect } from "effect"
import { evaluateRewindTarget } from "../conversation/evaluateRewindTarget.js"
import { rewindConversation } from "../conversation/rewindConversation.js"
import { noticeTurnBefore, restoreNoticeEvents, workspaceRewound } from "../restore/restoreRecords.js"
import { loadSession } from "../session/loadSession.js"
import { type FileRestoreResult, restoreCheckpoints, restoreFilesOnly } from "./checkpointRestore.js"

export type { FileRestoreResult } from "./checkpointRestore.js"

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
