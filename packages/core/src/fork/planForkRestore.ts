/**
 * What a fork from a checkpoint copies and which file versions it writes back (DESIGN §6.2). Pure,
 * over the session's checkpoints and active branch.
 *
 * - An explicit checkpoint (or the latest one) works like a rewind of that checkpoint: its file
 *   gets its before-content back, in the workspace the parent shares.
 * - A message target keeps the workspace as it was at the fork point: only checkpoints made after
 *   it are undone, each file getting the content it had before its first change after that point.
 *   With no change after the point it is a plain conversation fork.
 * - The conversation copied runs up to the end of the target turn (up to the next user message).
 * - With no checkpoint at all, there is nothing to fork from.
 */
import type {
  Checkpoint,
  CheckpointId,
  FileVersion,
  MessageId,
  PlannedFileRestore,
  RefusalKind,
  WorkspacePath,
} from "@rewind/contracts"
import { type BranchView, branchView } from "../session/branchView.js"
import type { SessionState } from "../session/sessionState.js"

export type ForkRestoreTarget =
  | { readonly checkpointId: CheckpointId }
  | { readonly latest: true }
  | { readonly messageId: MessageId }

export type ForkRestorePlan =
  | {
      readonly ok: true
      /** The active branch up to the end of the target turn: what the fork copies. */
      readonly prefix: ReadonlyArray<MessageId>
      readonly checkpointId: CheckpointId | undefined
      /** The file versions to write back, in first-change order; empty for a plain fork. */
      readonly files: ReadonlyArray<PlannedFileRestore>
    }
  | { readonly ok: false; readonly kind: RefusalKind; readonly message: string }

export const NO_CHECKPOINT_MESSAGE = "no workspace checkpoint is available yet"

const refusal = (kind: RefusalKind, message: string): ForkRestorePlan => ({ ok: false, kind, message })

/** The branch up to the end of the turn at `position`: up to, not including, the next user message. */
const throughTurnEnd = (state: SessionState, view: BranchView, position: number) => {
  let end = position
  while (end + 1 < view.messageIds.length && state.messages.get(view.messageIds[end + 1]!)?.role !== "user")
    end++
  return view.messageIds.slice(0, end + 1)
}

/** What the agent last wrote to each path: the after-version of its newest checkpoint. */
export const lastWrittenVersions = (
  state: SessionState,
): ReadonlyMap<WorkspacePath, FileVersion | undefined> => {
  const out = new Map<WorkspacePath, FileVersion | undefined>()
  for (const c of state.checkpoints) out.set(c.path, c.after)
  return out
}

export const planForkRestore = (state: SessionState, target: ForkRestoreTarget): ForkRestorePlan => {
  if (state.checkpoints.length === 0) return refusal("no_checkpoint", NO_CHECKPOINT_MESSAGE)
  const view = branchView(state)

  if ("messageId" in target) {
    const position = view.positions.get(target.messageId)
    if (!state.messages.has(target.messageId)) {
      return refusal("not_found", `message ${target.messageId} is not in this session`)
    }
    if (position === undefined) {
      return refusal(
        "not_on_active_branch",
        `message ${target.messageId} was cut by a rewind; it cannot be a fork point`,
      )
    }
    const prefix = throughTurnEnd(state, view, position)
    // "After the fork point" is stream time: a later turn's user message, on any branch, was
    // appended after the fork point's last message (cut branches may still have changed files).
    const pointIndex = state.messageIndex.get(prefix.at(-1)!)!
    const first = new Map<WorkspacePath, Checkpoint>()
    for (const c of state.checkpoints) {
      const anchorIndex = state.messageIndex.get(c.anchorMessageId)
      if (anchorIndex === undefined || anchorIndex <= pointIndex || first.has(c.path)) continue
      first.set(c.path, c)
    }
    return {
      ok: true,
      prefix,
      checkpointId: undefined,
      files: [...first.values()].map((c) => ({
        path: c.path,
        version: c.before,
        checkpointId: c.checkpointId,
      })),
    }
  }

  let checkpoint: Checkpoint | undefined
  if ("checkpointId" in target) {
    checkpoint = state.checkpoints.find((c) => c.checkpointId === target.checkpointId)
    if (checkpoint === undefined)
      return refusal("not_found", `checkpoint ${target.checkpointId} is not in this session`)
    if (!view.positions.has(checkpoint.anchorMessageId)) {
      return refusal(
        "not_on_active_branch",
        `checkpoint ${target.checkpointId} belongs to a turn that a rewind cut; it cannot be a fork point`,
      )
    }
  } else {
    checkpoint = state.checkpoints.findLast((c) => view.positions.has(c.anchorMessageId))
    if (checkpoint === undefined) return refusal("no_checkpoint", NO_CHECKPOINT_MESSAGE)
  }
  return {
    ok: true,
    prefix: throughTurnEnd(state, view, view.positions.get(checkpoint.anchorMessageId)!),
    checkpointId: checkpoint.checkpointId,
    files: [{ path: checkpoint.path, version: checkpoint.before, checkpointId: checkpoint.checkpointId }],
  }
}
