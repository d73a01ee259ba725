/**
 * What a PostgreSQL failure means for the store, by SQLSTATE: worth running the transaction again
 * (deadlock, serialization failure), another writer's rows got there first (a unique key, a
 * stream's contiguity), a lock held too long by another writer, or anything else (a plain
 * StoreError). Also the retry policy for the first kind.
 */
import { StoreError } from "@rewind/contracts"
import { retryTransient } from "@rewind/kysely-store"
import { Data, type Effect, Schedule } from "effect"

/** SQLSTATEs the store reads (PostgreSQL's, and the two its own triggers raise). */
export const SqlState = {
  uniqueViolation: "23505",
  foreignKeyViolation: "23503",
  serializationFailure: "40001",
  deadlockDetected: "40P01",
  lockNotAvailable: "55P03",
  queryCanceled: "57014",
  undefinedTable: "42P01",
  /** Raised by the append-only triggers on `events`, `command_facts`. */
  appendOnly: "RW001",
  /** Raised by the contiguity trigger on `events`: a sequence that does not continue its stream. */
  sequenceGap: "RW002",
} as const

export const sqlState = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === "string" && code.length === 5 ? code : undefined
}

/** Another transaction's committed rows clash with this one's: settled by re-reading. */
export const isCollision = (error: unknown): boolean => {
  const code = sqlState(error)
  return code === SqlState.uniqueViolation || code === SqlState.sequenceGap
}

export const isRetryable = (error: unknown): boolean => {
  const code = sqlState(error)
  return code === SqlState.serializationFailure || code === SqlState.deadlockDetected
}

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** Connection-level failures carry a Node error code rather than a SQLSTATE. */
const connectionProblem = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code === "string" && /^E[A-Z]+$/.test(code)) return code
  if (
    error instanceof Error &&
    /timeout exceeded when trying to connect|Connection terminated/i.test(error.message)
  ) {
    return "connection"
  }
  return undefined
}

export const toStoreError = (operation: string, error: unknown, location: string): StoreError => {
  const code = sqlState(error)
  const problem = connectionProblem(error)
  const message =
    code === SqlState.lockNotAvailable
      ? `${operation} waited longer than the lock timeout for another writer of the same stream at ${location}; try again`
      : code === SqlState.queryCanceled
        ? `${operation} ran longer than the statement timeout at ${location} (${describe(error)})`
        : problem !== undefined
          ? `${operation} could not reach PostgreSQL at ${location} (${describe(error)})`
          : `${operation} failed at ${location}: ${describe(error)}${code === undefined ? "" : ` (SQLSTATE ${code})`}`
  return new StoreError({ operation, message, cause: error })
}

/** A deadlock or serialization failure: the whole transaction may simply run again. */
export class Retryable extends Data.TaggedError("Retryable")<{
  readonly operation: string
  readonly cause: unknown
}> {}

/**
 * Runs `effect` again after a Retryable failure, up to `attempts` times in all, with growing
 * pauses from 20 ms, jittered through the Random service (so the writers that deadlocked do not
 * meet again in step), on the live clock (kysely-store's `retryTransient`, the retry every SQL
 * adapter shares), then fails with a StoreError.
 */
export const retryRetryable = <A, E, R>(
  effect: Effect.Effect<A, E | Retryable, R>,
  attempts: number,
  location: string,
): Effect.Effect<A, Exclude<E, Retryable> | StoreError, R> =>
  retryTransient(effect, {
    isTransient: (error): error is Retryable => error instanceof Retryable,
    schedule: Schedule.exponential("20 millis").pipe(
      Schedule.jittered,
      Schedule.intersect(Schedule.recurs(Math.max(0, attempts - 1))),
    ),
    exhausted: (retryable) =>
      new StoreError({
        operation: retryable.operation,
        message: `${retryable.operation} kept meeting concurrent writers at ${location} (deadlock or serialization failure) through ${attempts} attempts; try again`,
        cause: retryable.cause,
      }),
  })
