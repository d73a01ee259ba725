/**
 * The whole history of a session as an inspector shows it: every message of the stream in append
 * order, cut branches included, each marked active (on the branch `branchView` computes) or cut,
 * and, for a cut one, which cut segment it belongs to; compactions with whether they still apply;
 * and the background tasks the session's turns started.
 *
 * Invariants: `active` is decided by the one active-branch function (branchView), never
 * recomputed here; a segment is a run of consecutive cut messages in append order that no
 * conversation rewind happened inside (`state.rewoundAfter`), numbered from 1 in that order, so
 * each abandoned attempt is its own segment even when two cut attempts are adjacent in the
 * stream; nothing is dropped: the entries are exactly `state.messageOrder`.
 */
import type { Message, MessageId, Part } from "@rewind/contracts"
import { branchView } from "./branchView.js"
import type { BackgroundTask, Compaction, SessionState } from "./sessionState.js"

export interface SessionHistoryEntry {
  readonly message: Message
  readonly parts: ReadonlyArray<Part>
  readonly active: boolean
  /** 0 on the active branch; n ≥ 1: the n-th run of cut messages in append order. */
  readonly segment: number
  /** The summary message of a live compaction hiding this message from the model. */
  readonly compactedBy: MessageId | undefined
}

export interface SessionHistory {
  readonly version: number
  readonly branchGeneration: number
  readonly entries: ReadonlyArray<SessionHistoryEntry>
  readonly compactions: ReadonlyArray<Compaction & { readonly active: boolean }>
  readonly backgroundTasks: ReadonlyArray<BackgroundTask>
}

export const sessionHistory = (state: SessionState): SessionHistory => {
  const view = branchView(state)
  const active = new Set(view.messageIds)
  const entries: Array<SessionHistoryEntry> = []
  const boundaries = new Set(state.rewoundAfter)
  let segment = 0
  let inCut = false
  for (const id of state.messageOrder) {
    const message = state.messages.get(id)
    if (message === undefined) continue
    const isActive = active.has(id)
    if (!isActive && !inCut) segment++
    // A rewind after this message: whatever comes next is another attempt.
    inCut = !isActive && !boundaries.has(id)
    entries.push({
      message,
      parts: state.parts.get(id) ?? [],
      active: isActive,
      segment: isActive ? 0 : segment,
      compactedBy: view.coveredBy.get(id),
    })
  }
  const live = new Set(view.activeCompactions.map((c) => c.summaryMessageId))
  return {
    version: state.version,
    branchGeneration: state.branchGeneration,
    entries,
    compactions: state.compactions.map((c) => ({ ...c, active: live.has(c.summaryMessageId) })),
    backgroundTasks: [...state.backgroundTasks.values()],
  }
}
