/**
 * Everything derived from the active branch: positions, compaction coverage, the model's history
 * and turn counters. Rebuilt from scratch whenever the branch changes, so a rewind can never leave
 * a stale derived value behind.
 */
import type { MessageId, TurnId } from "@rewind/contracts"
import { activeBranch } from "./activeBranch.js"
import type { Compaction, SessionState } from "./sessionState.js"

export interface BranchView {
  readonly messageIds: ReadonlyArray<MessageId>
  /** Position of each active message on the branch. */
  readonly positions: ReadonlyMap<MessageId, number>
  /** Active messages hidden from the model by a compaction, mapped to the summary covering them. */
  readonly coveredBy: ReadonlyMap<MessageId, MessageId>
  readonly activeCompactions: ReadonlyArray<Compaction>
  /** What the model sees, in order: covered ranges replaced by their summary, UI-only messages left out. */
  readonly modelHistory: ReadonlyArray<MessageId>
  /** Turns that have a user message on the branch, in order. */
  readonly turnIds: ReadonlyArray<TurnId>
  readonly lastUserMessageId: MessageId | undefined
}

// States are immutable values, so the view of one state can be computed once and shared.
const cache = new WeakMap<SessionState, BranchView>()

export const branchView = (state: SessionState): BranchView => {
  const cached = cache.get(state)
  if (cached !== undefined) return cached
  const view = computeBranchView(state)
  cache.set(state, view)
  return view
}

const computeBranchView = (state: SessionState): BranchView => {
  const messageIds = activeBranch(state)
  const positions = new Map<MessageId, number>()
  for (let i = 0; i < messageIds.length; i++) positions.set(messageIds[i]!, i)

  const coveredBy = new Map<MessageId, MessageId>()
  const activeCompactions: Array<Compaction> = []
  for (const c of state.compactions) {
    const from = positions.get(c.fromMessageId)
    const to = positions.get(c.toMessageId)
    const summary = positions.get(c.summaryMessageId)
    // A compaction whose summary or range was cut by a rewind no longer applies: the messages it
    // covered that survived the cut are visible again (the compaction range is rebuilt on the new branch).
    if (from === undefined || to === undefined || summary === undefined || from > to) continue
    activeCompactions.push(c)
    for (let i = from; i <= to; i++) coveredBy.set(messageIds[i]!, c.summaryMessageId)
  }

  const modelHistory: Array<MessageId> = []
  const turnIds: Array<TurnId> = []
  let lastUserMessageId: MessageId | undefined
  for (const id of messageIds) {
    const message = state.messages.get(id)
    if (message === undefined) continue
    if (message.role === "user") {
      lastUserMessageId = id
      turnIds.push(message.turnId)
    }
    if (coveredBy.has(id) || message.visibility === "ui_only") continue
    modelHistory.push(id)
  }

  return { messageIds, positions, coveredBy, activeCompactions, modelHistory, turnIds, lastUserMessageId }
}

/**
 * The session's running turn on the active branch (the newest one started, when several are
 * running), or undefined: what a host that sees turn boundaries one event at a time continues.
 */
export const runningTurn = (state: SessionState): TurnId | undefined => {
  const view = branchView(state)
  let open: TurnId | undefined
  for (const turn of state.turns.values()) {
    if (turn.status === "running" && view.positions.has(turn.userMessageId)) open = turn.id
  }
  return open
}
