/**
 * The whole history of a session as an inspector shows it: every message of the stream in append
 * order, cut branches included, each marked active (on the branch `branchView` computes) or cut,
 * and, for a cut one, which cut segment it belongs to; compactions with whether they still apply;
 * and the background tasks the session's turns started. A window (`offset`, `limit`) answers only
 * that slice of the entries, with the totals and the branch structure (every cut segment's start
 * and length) of the whole history, so a long timeline can be sized at once and read page by page.
 *
 * Invariants: `active` is decided by the one active-branch function (branchView), never
 * recomputed here; a segment is a run of consecutive cut messages in append order that no
 * conversation rewind happened inside (`state.rewoundAfter`), numbered from 1 in that order, so
 * each abandoned attempt is its own segment even when two cut attempts are adjacent in the
 * stream; nothing is dropped: without a window the entries are exactly `state.messageOrder`, and
 * the windows of one state tile it. The per-message classification is computed once per state
 * (states are immutable values; as branchView does), so paging a long session does not redo it.
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

/** A cut segment: its number, the index of its first entry in the whole history, its length. */
export interface HistorySegment {
  readonly segment: number
  readonly start: number
  readonly count: number
}

/** Which entries to answer: `limit` of them from `offset` (default 0). */
export interface HistoryWindow {
  readonly offset?: number | undefined
  readonly limit: number
}

export interface SessionHistory {
  readonly version: number
  readonly branchGeneration: number
  /** Entries in the whole history, whatever the window. */
  readonly total: number
  /** Entries on the active branch, in the whole history. */
  readonly activeCount: number
  /** Index in the whole history of `entries[0]`. */
  readonly offset: number
  readonly segments: ReadonlyArray<HistorySegment>
  readonly entries: ReadonlyArray<SessionHistoryEntry>
  readonly compactions: ReadonlyArray<Compaction & { readonly active: boolean }>
  readonly backgroundTasks: ReadonlyArray<BackgroundTask>
}

interface Classified {
  readonly ids: ReadonlyArray<MessageId>
  /** Per entry: 0 active, n ≥ 1 its cut segment. */
  readonly segmentOf: Int32Array
  readonly segments: ReadonlyArray<HistorySegment>
  readonly activeCount: number
}

const classifiedCache = new WeakMap<SessionState, Classified>()

const classify = (state: SessionState): Classified => {
  const cached = classifiedCache.get(state)
  if (cached !== undefined) return cached
  const active = new Set(branchView(state).messageIds)
  const boundaries = new Set(state.rewoundAfter)
  const ids = state.messageOrder.filter((id) => state.messages.has(id))
  const segmentOf = new Int32Array(ids.length)
  const segments: Array<{ segment: number; start: number; count: number }> = []
  let inCut = false
  let activeCount = 0
  ids.forEach((id, i) => {
    const isActive = active.has(id)
    if (isActive) activeCount++
    else if (!inCut) segments.push({ segment: segments.length + 1, start: i, count: 0 })
    if (!isActive) {
      segments.at(-1)!.count++
      segmentOf[i] = segments.length
    }
    // A rewind after this message: whatever comes next is another attempt.
    inCut = !isActive && !boundaries.has(id)
  })
  const classified: Classified = { ids, segmentOf, segments, activeCount }
  classifiedCache.set(state, classified)
  return classified
}

export const sessionHistory = (state: SessionState, window?: HistoryWindow): SessionHistory => {
  const view = branchView(state)
  const { ids, segmentOf, segments, activeCount } = classify(state)
  const from = Math.min(window?.offset ?? 0, ids.length)
  const to = window === undefined ? ids.length : Math.min(ids.length, from + window.limit)
  const entries: Array<SessionHistoryEntry> = []
  for (let i = from; i < to; i++) {
    const id = ids[i]!
    entries.push({
      message: state.messages.get(id)!,
      parts: state.parts.get(id) ?? [],
      active: segmentOf[i] === 0,
      segment: segmentOf[i]!,
      compactedBy: view.coveredBy.get(id),
    })
  }
  const live = new Set(view.activeCompactions.map((c) => c.summaryMessageId))
  return {
    version: state.version,
    branchGeneration: state.branchGeneration,
    total: ids.length,
    activeCount,
    offset: from,
    segments,
    entries,
    compactions: state.compactions.map((c) => ({ ...c, active: live.has(c.summaryMessageId) })),
    backgroundTasks: [...state.backgroundTasks.values()],
  }
}
