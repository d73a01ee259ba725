/**
 * What a better-sqlite3 failure means for the store: busy (another process holds the lock: worth
 * retrying), corrupt (the file cannot be trusted), or anything else (a plain StoreError). Also the
 * retry policy for busy failures that outlast SQLite's own busy timeout.
 */
import { StoreError } from "@rewind/contracts"
import Database from "better-sqlite3"
import { Clock, Data, Duration, Effect } from "effect"

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
// another OS process, and a test clock that never advances must not turn contention into a hang.
const liveClock = Clock.make()

/**
 * Retries an operation that failed with Busy: SQLite already waited `busyTimeout` inside each
 * attempt, so a few more attempts with growing, jittered pauses are enough before giving up.
 */
export const retryBusy = <A, E, R>(
  effect: Effect.Effect<A, E | Busy, R>,
  attempts = 4,
): Effect.Effect<A, E | StoreError, R> => {
  const loop = (attempt: number): Effect.Effect<A, E | StoreError, R> =>
    Effect.catchIf(
      effect,
      (error): error is Busy => error instanceof Busy,
      (busy) =>
        attempt >= attempts
          ? Effect.fail(
              new StoreError({
                operation: busy.operation,
                message: `the store stayed locked by another connection through ${attempts} attempts; try again later`,
                cause: busy.cause,
              }),
            )
          : Effect.sleep(Duration.millis(Math.round(25 * 2 ** attempt * (0.5 + Math.random())))).pipe(
              Effect.withClock(liveClock),
              Effect.zipRight(Effect.suspend(() => loop(attempt + 1))),
            ),
    )
  return loop(1)
}
