/**
 * Stable fork boundaries. When a turn completes, its final assistant reply gets the boundary a
 * later fork relies on: the turn's messages in active-branch order, the history's round count, and
 * the goals (without live-run fields) and verification records as they stood. The boundary and
 * TurnCompleted go out in one append, boundary first, so nobody can see a completed turn whose
 * boundary is missing. `checkForkBoundary` is the fork-time check of a pinned boundary.
 */
import {
  ForkBoundaryPinned,
  type GoalBoundary,
  goalSnapshotOf,
  type MessageId,
  type RefusalKind,
  type SessionId,
  type StableBoundary,
  TurnCompleted,
  type TurnId,
  type VerificationId,
} from "@rewind/contracts"
import { Effect } from "effect"
import { branchView } from "../session/branchView.js"
import { appendDecided } from "../session/loadSession.js"
import { loadRunningTurn } from "../session/sessionCommands.js"
import type { SessionState } from "../session/sessionState.js"

export type NoBoundaryReason = "aborted" | "not_on_active_branch" | "no_assistant_reply" | "reply_failed"

export type BoundaryDecision =
  | { readonly pinned: true; readonly boundary: StableBoundary }
  | { readonly pinned: false; readonly reason: NoBoundaryReason; readonly message: string }

/** The goals and the verification records made at or before `position` on the active branch. */
export const goalBoundaryAt = (state: SessionState, position: number): GoalBoundary | undefined => {
  const positions = branchView(state).positions
  const verificationIds: Array<VerificationId> = []
  for (const v of state.verifications.values()) {
    const p = positions.get(v.messageId)
    if (p !== undefined && p <= position) verificationIds.push(v.verificationId)
  }
  const goals = [...state.goals.values()].map(goalSnapshotOf)
  return goals.length === 0 && verificationIds.length === 0 ? undefined : { goals, verificationIds }
}

/** Pure: the boundary completing `turnId` now would pin, or why there is none. */
export const stableBoundaryFor = (state: SessionState, turnId: TurnId): BoundaryDecision => {
  const turn = state.turns.get(turnId)
  const view = branchView(state)
  const userPosition = turn === undefined ? undefined : view.positions.get(turn.userMessageId)
  if (userPosition === undefined) {
    return {
      pinned: false,
      reason: "not_on_active_branch",
      message: `turn ${turnId} is not on the active branch`,
    }
  }
  let boundaryPosition = -1
  for (let i = view.messageIds.length - 1; i > userPosition; i--) {
    const m = state.messages.get(view.messageIds[i]!)
    if (m !== undefined && m.turnId === turnId && m.role === "assistant") {
      boundaryPosition = i
      break
    }
  }
  if (boundaryPosition < 0) {
    return { pinned: false, reason: "no_assistant_reply", message: `turn ${turnId} has no assistant reply` }
  }
  const boundaryMessageId = view.messageIds[boundaryPosition]!
  if (state.messages.get(boundaryMessageId)!.status === "error") {
    return {
      pinned: false,
      reason: "reply_failed",
      message: `the final reply of turn ${turnId} ended in an error; there is no stable point to fork at`,
    }
  }
  let historyRoundCount = 0
  for (let i = 0; i <= boundaryPosition; i++) {
    if (state.messages.get(view.messageIds[i]!)?.role === "user") historyRoundCount++
  }
  const orderedMessageIds = view.messageIds.slice(userPosition, boundaryPosition + 1) as [
    MessageId,
    ...Array<MessageId>,
  ]
  const goalBoundary = goalBoundaryAt(state, boundaryPosition)
  return {
    pinned: true,
    boundary: {
      turnId,
      historyRoundCount,
      orderedMessageIds,
      boundaryMessageId,
      ...(goalBoundary === undefined ? {} : { goalBoundary }),
    },
  }
}

export interface CompletedTurn {
  readonly boundary: StableBoundary | undefined
  /** Why no boundary was pinned (the turn can then not be forked at its reply). */
  readonly noBoundary?: { readonly reason: NoBoundaryReason; readonly message: string }
}

/**
 * Completes a turn, pinning its fork boundary first when it completed with a good reply. Settle
 * goal usage (`updateGoal`) before calling this: the boundary snapshots the goals as they are.
 */
export const completeTurnWithBoundary = (
  sessionId: SessionId,
  turnId: TurnId,
  status: "completed" | "aborted" = "completed",
) =>
  Effect.gen(function* () {
    const state = yield* loadRunningTurn(sessionId, turnId)
    const decision: BoundaryDecision =
      status === "aborted"
        ? { pinned: false, reason: "aborted", message: `turn ${turnId} was aborted` }
        : stableBoundaryFor(state, turnId)
    const completed = new TurnCompleted({ turnId, status })
    // One append, boundary first: a subscriber that sees TurnCompleted has seen the boundary.
    yield* appendDecided(
      state,
      sessionId,
      decision.pinned
        ? [
            new ForkBoundaryPinned({
              messageId: decision.boundary.boundaryMessageId,
              boundary: decision.boundary,
            }),
            completed,
          ]
        : [completed],
    )
    return decision.pinned
      ? ({ boundary: decision.boundary } satisfies CompletedTurn)
      : ({
          boundary: undefined,
          noBoundary: { reason: decision.reason, message: decision.message },
        } satisfies CompletedTurn)
  })

export type ForkBoundaryCheck =
  | {
      readonly ok: true
      readonly boundary: StableBoundary
      /** The active branch up to and including the boundary message: what a fork copies. */
      readonly prefix: ReadonlyArray<MessageId>
    }
  | { readonly ok: false; readonly kind: RefusalKind; readonly message: string }

const invalid = (message: string): ForkBoundaryCheck => ({
  ok: false,
  kind: "fork_boundary_invalid",
  message,
})

/**
 * Pure: may the session be forked at `messageId`? Only at a message carrying a pinned boundary
 * whose ordered run is still one contiguous stretch of the active branch (from the turn's user
 * message) ending in that message, a non-error assistant reply.
 */
export const checkForkBoundary = (state: SessionState, messageId: MessageId): ForkBoundaryCheck => {
  const message = state.messages.get(messageId)
  if (message === undefined) {
    return { ok: false, kind: "not_found", message: `message ${messageId} is not in this session` }
  }
  const boundary = message.anchor
  if (boundary === undefined) {
    // A host that completed the turn with `completeTurn` pinned none: say so, it is fixable there.
    const completedWithout =
      message.role === "assistant" && state.turns.get(message.turnId)?.status === "completed"
    return invalid(
      completedWithout
        ? `message ${messageId} carries no pinned fork boundary: its turn ${message.turnId} was completed without one (completeTurn pins none; completeTurnWithBoundary, which the hooks use, pins it on the turn's final reply)`
        : `message ${messageId} carries no pinned fork boundary; a fork is offered on the final reply of a completed turn`,
    )
  }
  if (message.role !== "assistant" || message.status !== "ok") {
    return invalid(`a fork boundary must end in an assistant reply without error; ${messageId} is not one`)
  }
  const ordered = boundary.orderedMessageIds
  if (boundary.boundaryMessageId !== messageId || ordered[ordered.length - 1] !== messageId) {
    return invalid(`the boundary pinned on ${messageId} does not end at that message`)
  }
  const view = branchView(state)
  const position = view.positions.get(messageId)
  if (position === undefined) {
    return {
      ok: false,
      kind: "not_on_active_branch",
      message: `message ${messageId} is on a branch that a rewind cut; it can no longer be forked`,
    }
  }
  const start = position - (ordered.length - 1)
  for (let i = 0; i < ordered.length; i++) {
    if (view.positions.get(ordered[i]!) !== start + i) {
      return invalid(
        `the messages of the turn ending at ${messageId} are no longer one contiguous run on the active branch`,
      )
    }
  }
  if (state.turns.get(boundary.turnId)?.userMessageId !== ordered[0]) {
    return invalid(
      `the boundary on ${messageId} does not start at the user message of turn ${boundary.turnId}`,
    )
  }
  let rounds = 0
  for (let i = 0; i <= position; i++) {
    if (state.messages.get(view.messageIds[i]!)?.role === "user") rounds++
  }
  if (rounds !== boundary.historyRoundCount) {
    return invalid(
      `the history before ${messageId} has ${rounds} rounds, but the boundary was pinned after ${boundary.historyRoundCount}`,
    )
  }
  return { ok: true, boundary, prefix: view.messageIds.slice(0, position + 1) }
}
