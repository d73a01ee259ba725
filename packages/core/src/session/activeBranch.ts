/**
 * The one definition of the active branch: the kept prefix written by the last conversation rewind,
 * followed by every message appended after that rewind's cut. Resume, cold projection, fork copying
 * and evaluation all go through `activeBranch`; nothing else may decide which messages are live.
 */
import type { MessageId } from "@rewind/contracts"
import type { SessionState } from "./sessionState.js"

export const activeBranch = (state: SessionState): ReadonlyArray<MessageId> => {
  const cursor = state.cursor
  if (cursor === undefined) return state.messageOrder
  const cutIndex =
    cursor.branchCutAfterMessageId === undefined
      ? -1
      : (state.messageIndex.get(cursor.branchCutAfterMessageId) ?? -1)
  const appendedAfterCut = state.messageOrder.slice(cutIndex + 1)
  return appendedAfterCut.length === 0
    ? cursor.keptMessageIds
    : [...cursor.keptMessageIds, ...appendedAfterCut]
}

/**
 * The last message of the active branch (what `activeBranch(state).at(-1)` is) without building the
 * branch: a restore's notice goes into the branch's last turn, and a branch is every message id of
 * a long session.
 */
export const lastActiveMessage = (state: SessionState): MessageId | undefined => {
  const cursor = state.cursor
  if (cursor === undefined) return state.messageOrder.at(-1)
  const cutIndex =
    cursor.branchCutAfterMessageId === undefined
      ? -1
      : (state.messageIndex.get(cursor.branchCutAfterMessageId) ?? -1)
  return cutIndex + 1 < state.messageOrder.length ? state.messageOrder.at(-1) : cursor.keptMessageIds.at(-1)
}
