/**
 * Reading a session: its stream folded into a state, and the append that keeps state and store in
 * step. Every command loads, decides, then appends with the version it decided on, so a concurrent
 * writer surfaces as a VersionConflict instead of a lost event.
 *
 * `retryOnVersionConflict` is the one retry policy for such conflicts: the program given to it must
 * re-read and re-decide on each attempt (a conflict means the decision was taken on a stale state).
 */
import { refuse, type SessionEvent, type SessionId, VersionConflict } from "@rewind/contracts"
import { Clock, Effect, Option, Schedule } from "effect"
import { SessionStore } from "../ports/SessionStore.js"
import { SessionStateCache } from "./SessionStateCache.js"
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

/**
 * How a command that lost a race is tried again. First at once, a few times: in one process the
 * winner has already committed, so re-reading is enough and costs no wait (and a test clock that
 * never moves is never waited on). Then with growing pauses, jittered through the Random service
 * (deterministic under a seeded Random), so writers in several processes stop colliding. Bounded:
 * at most 7 + 6 retries and about 1.3 s of pauses, then the conflict is the caller's answer.
 */
export const versionConflictSchedule = Schedule.recurs(7).pipe(
  Schedule.andThen(
    Schedule.exponential("10 millis").pipe(Schedule.jittered, Schedule.intersect(Schedule.recurs(6))),
  ),
)

/**
 * Runs `attempt` again on a VersionConflict, under `versionConflictSchedule`; any other failure,
 * and the last conflict, is returned as it is. `attempt` must load the session itself.
 */
export const retryOnVersionConflict = <A, E, R>(attempt: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.retry(attempt, {
    schedule: versionConflictSchedule,
    while: (error) => error instanceof VersionConflict,
  })
