/**
 * Reading a session: its stream folded into a state, and the append that keeps state and store in
 * step. Every command loads, decides, then appends with the version it decided on, so a concurrent
 * writer surfaces as a VersionConflict instead of a lost event.
 */
import { refuse, type SessionEvent, type SessionId } from "@rewind/contracts"
import { Clock, Effect } from "effect"
import { SessionStore } from "./ports/SessionStore.js"
import { evolveAll, projectSession, type SessionState } from "./sessionState.js"

/** The folded state of a session; refuses with `session_not_found` when it has no events. */
export const loadSession = (sessionId: SessionId) =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    const events = yield* store.read(sessionId)
    if (events.length === 0) return yield* refuse("session_not_found", `session ${sessionId} does not exist`)
    return projectSession(events)
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
    return evolveAll(state, events, at)
  })
