/**
 * What a better-sqlite3 failure means for the store: busy (another process holds the lock: worth
 * retrying), corrupt (the file cannot be trusted), a full disk or a read-only file (said in words a
 * person can act on: SQLite's own "disk I/O error" does not say the disk is full), or anything else
 * (a plain StoreError). Also the retry policy for busy failures: a short synchronous wait inside
 * SQLite, the rest asynchronous.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { StoreError } from "@rewind/contracts"
import { retryTransient } from "@rewind/kysely-store"
import Database from "better-sqlite3"
import { Data, Duration, Effect, Schedule } from "effect"

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

/** Below this much free space a failed write is taken to be the disk filling up. */
const FULL_BELOW_BYTES = 1024 * 1024

/**
 * Whether the filesystem holding `location` is (nearly) full. SQLite reports ENOSPC as
 * SQLITE_FULL on some writes and as a plain SQLITE_IOERR on others (creating `-shm`, say).
 */
const diskFull = (location: string | undefined): boolean => {
  if (location === undefined || location === ":memory:") return false
  try {
    const stats = fs.statfsSync(path.dirname(path.resolve(location)))
    return stats.bavail * stats.bsize < FULL_BELOW_BYTES
  } catch {
    return false
  }
}

/**
 * Why this process cannot write the store now, or undefined when it can: SQLite opens a file it
 * may not write read-only without a word, and every write then fails. Asked of the file and its
 * directory (where `-wal` and `-shm` live), as the OS answers for this user.
 */
export const readOnlyReason = (location: string): string | undefined => {
  if (location === ":memory:") return undefined
  for (const [target, what] of [
    [location, "the store file"],
    [path.dirname(path.resolve(location)), "the store's directory"],
  ] as const) {
    try {
      fs.accessSync(target, fs.constants.W_OK)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error)
      if (code !== "EACCES" && code !== "EPERM" && code !== "EROFS") return undefined
      return `${what} ${target} is not writable (${code}): reads work, every write (capture, restore, new session) fails`
    }
  }
  return undefined
}

/** A sentence for a failure a person can fix, or undefined for any other failure. */
const actionable = (error: unknown, location: string | undefined): string | undefined => {
  const code = sqliteCode(error)
  if (code === undefined) return undefined
  const where = location === undefined ? "the store" : location
  if (code === "SQLITE_FULL" || (code.startsWith("SQLITE_IOERR") && diskFull(location))) {
    return `the disk holding ${where} is full (${describe(error)}); free some space and try again; the store was not changed`
  }
  const readOnly =
    code.startsWith("SQLITE_READONLY") || code === "SQLITE_CANTOPEN" ? readOnlyReason(where) : undefined
  if (readOnly !== undefined) return `${readOnly} (${describe(error)}); make them writable for this user`
  if (code.startsWith("SQLITE_READONLY")) {
    return `${where} is read-only (${describe(error)}): make the file and its directory writable for this user, or open the store somewhere writable (the change was not saved)`
  }
  return undefined
}

/** Another connection held the lock past the busy timeout. Internal: retried, then a StoreError. */
export class Busy extends Data.TaggedError("Busy")<{ readonly operation: string; readonly cause: unknown }> {}

export const toStoreError = (operation: string, error: unknown, location?: string): StoreError =>
  new StoreError({
    operation,
    message: isCorrupt(error)
      ? `the store file${location === undefined ? "" : ` ${location}`} is corrupt (${describe(error)}); restore it from a backup`
      : `${operation} failed: ${actionable(error, location) ?? describe(error)}`,
    cause: error,
  })

/** The busy budget when the caller has no configured one (SqliteStoreOptions' default). */
const DEFAULT_BUSY_BUDGET_MILLIS = 5_000

/**
 * Between attempts: growing pauses from 5 ms, capped at 100 ms, jittered through the Random
 * service, until the budget has passed. A Schedule is a description (its jitter draws from the
 * Random service when it runs), so one per budget is built once and shared by every call.
 */
const busySchedules = new Map<number, Schedule.Schedule<unknown>>()
const busySchedule = (budgetMillis: number) => {
  let schedule = busySchedules.get(budgetMillis)
  if (schedule === undefined) {
    schedule = Schedule.exponential("5 millis").pipe(
      Schedule.union(Schedule.spaced("100 millis")),
      Schedule.jittered,
      Schedule.upTo(Duration.millis(budgetMillis)),
    )
    busySchedules.set(budgetMillis, schedule)
  }
  return schedule
}

const isBusyFailure = (error: unknown): error is Busy => error instanceof Busy

/**
 * Retries an operation that failed with Busy. SQLite waits only briefly inside each attempt (the
 * connection's busy_timeout is short, see openDatabase.ts, because that wait blocks the event
 * loop); the rest of the budget (the configured busy timeout) is waited here, asynchronously, so
 * another connection in this process can finish meanwhile (on the live clock: kysely-store's
 * `retryTransient`, the retry every SQL adapter shares). Then a StoreError.
 *
 * The first attempt runs bare: nearly every call succeeds at once, and the retry's clock and
 * schedule plumbing cost more than a one-row statement (a per-edit checkpoint makes four such
 * calls). Only a Busy first attempt enters the retry, which then tries again at once and waits
 * out the whole budget as before, so the budget is counted from the first Busy answer.
 */
export const retryBusy = <A, E, R>(
  effect: Effect.Effect<A, E | Busy, R>,
  budgetMillis: number = DEFAULT_BUSY_BUDGET_MILLIS,
): Effect.Effect<A, Exclude<E, Busy> | StoreError, R> =>
  Effect.catchIf(effect, isBusyFailure, () =>
    retryTransient(effect, {
      isTransient: isBusyFailure,
      schedule: busySchedule(budgetMillis),
      exhausted: (busy) =>
        new StoreError({
          operation: busy.operation,
          message: `the store stayed locked by another connection for ${budgetMillis} ms; try again later`,
          cause: busy.cause,
        }),
    }),
  ) as Effect.Effect<A, Exclude<E, Busy> | StoreError, R>
