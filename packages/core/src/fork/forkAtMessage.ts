/**
 * The stable fork (DESIGN §6.1): copy the parent's active branch up to a reply whose boundary was
 * pinned at turn end into a new child session, built whole in memory and committed in one
 * transaction together with a command fact in the parent. The parent's stream is never written,
 * so the parent may keep running its next turn meanwhile; replaying the command id returns the
 * same child.
 */
import { type CommandId, type ForkWorkspace, type MessageId, refuse, type SessionId } from "@rewind/contracts"
import { Effect, Option } from "effect"
import { checkForkBoundary } from "./forkBoundary.js"
import { readSessionStream, replayedFork, requireCommandId } from "./forkCommit.js"
import { commitForkedChild } from "./forkedChild.js"
import { isolatedKey } from "./isolatedFork.js"

export interface ForkAtMessageInput {
  readonly sessionId: SessionId
  /** The final reply of a completed turn, carrying its pinned boundary. */
  readonly messageId: MessageId
  readonly commandId: CommandId
  /** `shared` (the default) or `isolated`: the child gets its own tree, as it stood at the boundary. */
  readonly workspace?: ForkWorkspace | undefined
}

/**
 * Forks the session at a reply with a pinned boundary. Refuses `fork_boundary_invalid` when the
 * message has no boundary, its run is no longer contiguous on the active branch, or it does not
 * end in a good assistant reply; `not_on_active_branch` when a rewind cut it.
 */
export const forkAtMessage = (input: ForkAtMessageInput) =>
  Effect.gen(function* () {
    yield* requireCommandId(input.commandId)
    const requestKey = `fork_at_message:${input.messageId}${isolatedKey(input.workspace)}`
    const replay = yield* replayedFork(input.sessionId, input.commandId, "fork_at_message", requestKey)
    if (Option.isSome(replay)) return replay.value
    const { state } = yield* readSessionStream(input.sessionId)
    const check = checkForkBoundary(state, input.messageId)
    if (!check.ok) return yield* refuse(check.kind, check.message)
    return yield* commitForkedChild({
      parent: state,
      parentId: input.sessionId,
      prefix: check.prefix,
      commandId: input.commandId,
      command: "fork_at_message",
      requestKey,
      forkKind: "message",
      // The goals as they stood at the boundary, not as they are now.
      goals: check.boundary.goalBoundary ?? { goals: [], verificationIds: [] },
      ...(input.workspace?.mode === "isolated"
        ? {
            isolated: {
              workspace: input.workspace,
              boundary: { after: "turn_end", messageId: input.messageId } as const,
            },
          }
        : {}),
    })
  })
