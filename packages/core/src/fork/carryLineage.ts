/**
 * The identity of carried subagents and the moment they are cut at. Clone ids are
 * `carry-v1.<sha256 of the lineage's original id>.<fresh id>`: the hash recognises the same
 * lineage across repeated rewinds and cold loads, the fresh part keeps clones apart; a carried
 * clone replaces, among a session's subagents, the original it was carried from. A stream cut at a
 * time keeps its copied history and what was appended and born up to that time.
 */
import { CARRY_ID_PREFIX, type SessionId, type StoredEvent } from "@rewind/contracts"
import { activeBranch } from "../session/activeBranch.js"
import { projectSession, type SessionState, type SubagentLink } from "../session/sessionState.js"
import { sha256Hex } from "../workspace/contentHash.js"

const CARRY_ID = /^carry-v1\.([0-9a-f]{64})\.(.+)$/

export const isCarryId = (sessionId: string): boolean => CARRY_ID.test(sessionId)

/** The lineage key of a session: the hash inside a carry id, else the SHA-256 of the id itself. */
export const carryLineageOf = (sessionId: string): string =>
  CARRY_ID.exec(sessionId)?.[1] ?? sha256Hex(sessionId)

/** The id of a clone of `originalId` (itself possibly a clone), with a fresh distinguishing part. */
export const carryIdFor = (originalId: SessionId, fresh: string): SessionId =>
  `${CARRY_ID_PREFIX}.${carryLineageOf(originalId)}.${fresh}` as SessionId

/** The links that count: a carried clone replaces the original it was carried from. */
export const currentSubagents = (state: SessionState): ReadonlyArray<SubagentLink> => {
  const replaced = new Set<SessionId>()
  for (const link of state.subagents) if (link.carriedFrom !== undefined) replaced.add(link.carriedFrom)
  return state.subagents.filter((link) => !replaced.has(link.subagentSessionId))
}

/**
 * A stream as it stood at `cutAt`: the copied history it started with (a fork's or clone's first
 * events carry their original times in their content, not in the append time) plus its own events
 * appended up to the cut, and of that state's active branch the messages born by then.
 */
export const cutStreamAt = (events: ReadonlyArray<StoredEvent>, cutAt: number) => {
  const second = events[1]?.event
  let keep =
    second?._tag === "SessionForked"
      ? Math.min(second.copiedEventCount, events.length)
      : Math.min(1, events.length)
  while (keep < events.length && events[keep]!.at <= cutAt) keep++
  const state = projectSession(keep === events.length ? events : events.slice(0, keep))
  const branch = activeBranch(state)
  let end = 0
  while (end < branch.length && state.messages.get(branch[end]!)!.createdAt <= cutAt) end++
  return {
    state,
    prefix: end === branch.length ? branch : branch.slice(0, end),
    cut: keep < events.length || end < branch.length,
  }
}
