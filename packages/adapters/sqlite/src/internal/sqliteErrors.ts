/**
 * What a better-sqlite3 failure means for the store: busy (another process holds the lock: worth
 * retrying), corrupt (the file cannot be trusted), or anything else (a plain StoreError). Also the
 * retry policy for busy failures: a short synchronous wait inside SQLite, the rest asynchronous.
 */
import { StoreError } from "@rewind/contracts"
import Database from "better-sqlite3"
import { Clock, Data, Duration, Effect, Schedule } from "effect"

export const sqliteCode = (error: unknown): string | undefined =>
  error instanceof Database.SqliteError ? error.code : undefined

export const isBusy = (error: unknown): boolean => {
  const code = sqliteCode(error)
  return code !== undefined && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))
}

export const isCorrupt = (error: unknown): boolean => {
  const code = sqliteCode(error)
  return code !== undefined && (code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB")
}

export const isUniqueViolation = (error: unknown): boolean => {
  const code = sqliteCode(error)
  return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY"
}

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** Another connection held the lock past the busy timeout. Internal: retried, then a StoreError. */
export class Busy extends Data.TaggedError("Busy")<{ readonly operation: string; readonly cause: unknown }> {}

export const toStoreError = (operation: string, error: unknown, location?: string): StoreError =>
  new StoreError({
    operation,
    message: isCorrupt(error)
      ? `the store file${location === undefined ? "" : ` ${location}`} is corrupt (${describe(error)}); restore it from a backup`
      : `${operation} failed: ${describe(error)}`,
    cause: error,
  })

// The wait between attempts is real time whatever Clock the caller runs with: it waits for
// another connection, and a test clock that never advances must not turn contention into a hang.
const liveClock = Clock.make()

/** The busy budget when the caller has no configured one (SqliteStoreOptions' default). */
const DEFAULT_BUSY_BUDGET_MILLIS = 5_000

/**
 * Between attempts: growing pauses from 5 ms, capped at 100 ms, jittered through the Random
 * service, until the budget has passed.
 */
const busySchedule = (budgetMillis: number) =>
  Schedule.exponential("5 millis").pipe(
    Schedule.union(Schedule.spaced("100 millis")),
    Schedule.jittered,
    Schedule.upTo(Duration.millis(budgetMillis)),
  )

/**
 * Retries an operation that failed with Busy. SQLite waits only briefly inside each attempt (the
 * connection's busy_timeout is short, see openDatabase.ts, because that wait blocks the event
 * loop); the rest of the budget (the configured busy timeout) is waited here, asynchronously, so
 * another connection in this process can finish meanwhile. Then a StoreError.
 */
export const retryBusy = <A, E, R>(
  effect: Effect.Effect<A, E | Busy, R>,
  budgetMillis: number = DEFAULT_BUSY_BUDGET_MILLIS,
): Effect.Effect<A, E | StoreError, R> =>
  Effect.clockWith((callerClock) =>
    Effect.retry(Effect.withClock(effect, callerClock), {
      schedule: busySchedule(budgetMillis),
      while: (error) => error instanceof Busy,
    }).pipe(Effect.withClock(liveClock)),
  ).pipe(
    Effect.catchIf(
      (error): error is Busy => error instanceof Busy,
      (busy) =>
        Effect.fail(
          new StoreError({
            operation: busy.operation,
            message: `the store stayed locked by another connection for ${budgetMillis} ms; try again later`,
            cause: busy.cause,
          }),
        ),
    ),
  )
