/**
 * The one retry of a SQL store's transient failures (SQLite: another connection held the lock;
 * PostgreSQL: a deadlock or a serialization failure): `Effect.retry` under the adapter's
 * `Schedule` while the failure is the transient kind, then the last one becomes the StoreError the
 * adapter words. Each adapter keeps only what differs: what counts as transient, its schedule
 * (jittered through the Random service, so deterministic under a seeded one) and its message.
 *
 * The pauses are real time whatever Clock the caller runs with: they wait for another connection,
 * and a test clock that never advances must not turn contention into a hang. The attempts
 * themselves still run with the caller's Clock.
 */
import type { StoreError } from "@rewind/contracts"
import { Clock, Effect, type Schedule } from "effect"

const liveClock = Clock.make()

export interface TransientRetry<T> {
  readonly isTransient: (error: unknown) => error is T
  /** When to try again (the pauses between attempts, and how many). */
  readonly schedule: Schedule.Schedule<unknown>
  /** The failure once the schedule gives up. */
  readonly exhausted: (last: T) => StoreError
}

export const retryTransient = <A, E, R, T>(
  effect: Effect.Effect<A, E | T, R>,
  retry: TransientRetry<T>,
): Effect.Effect<A, Exclude<E, T> | StoreError, R> =>
  Effect.clockWith((callerClock) =>
    Effect.retry(Effect.withClock(effect, callerClock), {
      schedule: retry.schedule,
      while: retry.isTransient,
    }).pipe(Effect.withClock(liveClock)),
  ).pipe(Effect.catchIf(retry.isTransient, (last) => Effect.fail(retry.exhausted(last)))) as Effect.Effect<
    A,
    Exclude<E, T> | StoreError,
    R
  >
