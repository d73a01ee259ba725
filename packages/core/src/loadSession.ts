/**
 * Reading a session: its stream folded into a state, and the append that keeps state and store in
 * step. Every command loads, decides, then appends with the version it decided on, so a concurrent
 * writer surfaces as a VersionConflict instead of a lost event.
 */
import { refuse, type SessionEvent, type SessionId } from "@rewind/contracts"
import { Clock, Effect, Option } from "effect"
import { SessionStateCache } from "./ports/SessionStateCache.js"
import { SessionStore } from "./ports/SessionStore.js"
import { evolveAll, projectSession, type SessionState } from "./sessionState.js"

/** The folded state of a session; refuses with `session_not_found` when it has no events. */
export const loadSession = (sessionId: SessionId) =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    const cache = Option.getOrUndefined(yield* Effect.serviceOption(SessionStateCache))
    const cached = cache?.get(sessionId)
    const events = yield* store.read(sessionId, { afterSequence: cached?.version ?? 0 })
    if (events.length === 0) {
      if (cached !== undefined) return cached
      return yield* refuse("session_not_found", `session ${sessionId} does not exist`)
    }
    const state = projectSession(events, cached)
    cache?.set(sessionId, state)
    return state
  })

/** Appends events decided on `state` and returns the state they lead to. */
export const appendDecided = (
  state: SessionState,
  sessionId: SessionId,
  events: ReadonlyArray<SessionEvent>,
) =>
  Effect.gen(function* () {
    if (events.length === 0) return state
    const store = yield* SessionStore
    const at = yield* Clock.currentTimeMillis
    yield* store.append({ sessionId, expectedVersion: state.version, events, at })
    const next = evolveAll(state, events, at)
    Option.getOrUndefined(yield* Effect.serviceOption(SessionStateCache))?.set(sessionId, next)
    return next
  })
