/**
 * Preview, then apply (DESIGN §5, path 2): the safe undo behind a UI's "undo" button.
 *
 * The preview simulates the rewind in memory, newest checkpoint first. A file is safe only if what
 * it holds now (or, for an older checkpoint of the same file, what the simulation put back) hashes
 * to the after-content of the checkpoint being undone; anything else was changed by someone other
 * than the agent and is `external_modified`. Checkpoints made by shell-like tools are listed as
 * `ignored`. One unsafe file makes `canApply` false, and a preview never writes.
 *
 * The simulation is `fileRewindSimulation.ts`; applying a preview is `applyFileRewind.ts`, which
 * runs the same simulation again and refuses unless it matches the preview hash for hash.
 */
import type { FileRewindPreview, FileRewindSelection, MessageId, SessionId, TurnId } from "@rewind/contracts"
import { refuse } from "@rewind/contracts"
import { Effect } from "effect"
import { evaluateRewindTarget } from "../conversation/evaluateRewindTarget.js"
import { issuePreviewToken } from "../restore/previewTokens.js"
import { loadSession } from "../session/loadSession.js"
import type { SessionState } from "../session/sessionState.js"
import { planDigest, selectionTarget, simulate, toPreview } from "./fileRewindSimulation.js"

export type FileRewindTarget =
  | { readonly sessionId: SessionId; readonly messageId: MessageId }
  | { readonly sessionId: SessionId; readonly turnId: TurnId }

const selectCheckpoints = (state: SessionState, target: FileRewindTarget) =>
  Effect.gen(function* () {
    if ("messageId" in target) {
      const evaluation = evaluateRewindTarget(state, target.messageId, "workspace")
      if (evaluation.refusal !== undefined) {
        return yield* refuse(evaluation.refusal.kind, evaluation.refusal.message)
      }
      const ids = new Set(evaluation.checkpointIds)
      return {
        selection: { _tag: "message", messageId: evaluation.targetMessageId! } as FileRewindSelection,
        checkpoints: state.checkpoints.filter((c) => ids.has(c.checkpointId)),
      }
    }
    if (!state.turns.has(target.turnId)) {
      return yield* refuse("not_found", `turn ${target.turnId} is not in session ${target.sessionId}`)
    }
    const checkpoints = state.checkpoints.filter(
      (c) => c.turnId === target.turnId && !state.spentCheckpointIds.has(c.checkpointId),
    )
    if (checkpoints.length === 0) {
      return yield* refuse("nothing_to_undo", `turn ${target.turnId} has no file change left to undo`)
    }
    return { selection: { _tag: "turn", turnId: target.turnId } as FileRewindSelection, checkpoints }
  })

/**
 * What undoing the changes of a turn (or of everything from a user message onward) would do.
 * Writes nothing.
 */
export const previewFileRewind = (target: FileRewindTarget) =>
  Effect.gen(function* () {
    const state = yield* loadSession(target.sessionId)
    const { selection, checkpoints } = yield* selectCheckpoints(state, target)
    const simulation = yield* simulate([...checkpoints].reverse())
    const preview = toPreview(target.sessionId, selection, simulation)
    const { token, expiresAt } = yield* issuePreviewToken(
      target.sessionId,
      selectionTarget(selection),
      planDigest(preview),
    )
    return { ...preview, token, tokenExpiresAt: expiresAt } satisfies FileRewindPreview
  })
