/**
 * Stable reads of an open file (NodeWorkspace's `readFile`): the bytes are returned only if the
 * file held still while they were read, so what a caller gets is content the file held at one
 * moment, never a mix made by reading across a write. A read that cannot prove it fails with
 * code `ECHANGED`, and `retryWhileChanging` tries again, spaced so a write in progress can end.
 *
 * The settle rule (`SETTLE_NS`) has one exception: a read told which bytes the file should hold
 * (`expected`, what an agent's tool says it wrote) that finds exactly those accepts them at once.
 * Equal bytes are one whole version, whatever the stamps say; the checks that the stamps did not
 * move during the read, and the second read of a file changed within seconds, still apply. Why
 * that is safe, case by case:
 * - a write of the expected content caught partway holds a prefix of it, or its start over the
 *   old tail: other bytes (a prefix is shorter), so the read waits as ever;
 * - equal bytes read while a later write is already on its way are still that version whole, one
 *   the file held; the later write is a change like any other, seen by the next read or capture;
 * - other line endings, a byte-order mark added or dropped: other bytes, so it waits (the guess is
 *   the caller's, core `files/expectedAfter.ts`, which writes `\r\n` files' edits as tools do);
 * - a file deleted or replaced by a symlink: the open answers (absent, or refused by `O_NOFOLLOW`)
 *   before any byte is read, so `expected` changes nothing there.
 * Only the wait is skipped: what is returned is always the bytes read, never `expected` itself.
 * `recordFileMutation` (content supplied by the host) reads nothing and never meets this rule.
 */
import { type BigIntStats, fstatSync, readFileSync, readSync } from "node:fs"
import { Clock, Duration, Effect, Schedule } from "effect"
import type { ErrnoFailure } from "./durable.js"

/**
 * The content of an open regular file of `size` bytes (its `fstat` a moment ago), read as
 * `readFileSync` would: at most that many bytes, fewer if it shrank meanwhile. `readFileSync(fd)`
 * would `fstat` the file a second time; a capture reads thousands of files. A file that says it
 * is empty is read to its end, as `readFileSync` does.
 */
const readOpened = (fd: number, size: number): Buffer => {
  if (size === 0) return readFileSync(fd)
  // Pooled below 4 KiB (most source files): one allocation of the pool's 8 KiB serves several
  // files, where one each made a first capture's collector chase a hundred thousand external
  // buffers. Never transferred or detached, so sharing a pool is safe.
  const buffer = Buffer.allocUnsafe(size)
  let filled = 0
  while (filled < size) {
    const read = readSync(fd, buffer, filled, size - filled, filled)
    if (read === 0) break
    filled += read
  }
  return filled < size ? buffer.subarray(0, filled) : buffer
}

/** Attempts of a read before it is refused as `ECHANGED`. */
const READ_ATTEMPTS = 3
/**
 * A file whose ctime is this recent when a read begins may still be in the middle of a write: a
 * write stamps the file when it starts, so one that began just before the first `fstat` and ends
 * after the last leaves both stamps equal while the bytes read are a mix. Such a read is retried
 * once the file has been quiet this long (a write that takes longer in one system call is the
 * case this cannot see).
 */
export const SETTLE_NS = 100_000_000n
/** A ctime further ahead of the clock than this means the clock moved back, not a fresh write. */
const CLOCK_SLACK_NS = 1_000_000_000n
const RETRY_SPACING = Duration.nanos(SETTLE_NS)

/** Real time for the reads: a filesystem's stamps are compared with it, whatever clock a caller runs on. */
const liveClock = Clock.make()
const nowNs = () => BigInt(Date.now()) * 1_000_000n

const changing = (path: string, why: string) =>
  Object.assign(new Error(`${path} ${why}`), { code: "ECHANGED" })

/**
 * A write call stamps the file once, when it starts, however long it then takes; one this old
 * that is still copying is beyond belief, so files changed longer ago are read once.
 */
const SECOND_READ_WITHIN_NS = 5_000_000_000n

/**
 * The windows of the hold-still rule (settle, clock slack, second read within), as the native
 * batch read (`native/readbatch.c`) takes them, so it applies this module's rule, not a copy.
 */
export const HOLD_STILL_WINDOWS_NS: readonly [number, number, number] = [
  Number(SETTLE_NS),
  Number(CLOCK_SLACK_NS),
  Number(SECOND_READ_WITHIN_NS),
]

const moved = (a: BigIntStats, b: BigIntStats) =>
  a.size !== b.size || a.mtimeNs !== b.mtimeNs || a.ctimeNs !== b.ctimeNs

/**
 * The content of an open file, if it held still while it was read: `fstat` before and after, and
 * a size, mtime or ctime that moved (or a length that is not the size) means a writer was at work
 * and the bytes may be a mix of two versions; so may a file stamped moments before the read began
 * (`SETTLE_NS`). A file changed within the last few seconds is read a second time and must give
 * the same bytes: a long write call in progress moves no stamp, but it changes the bytes between
 * the two reads, and two equal reads prove every page held still between them, so the content
 * returned was the file's at that moment. `ECHANGED` otherwise, for the caller to retry.
 */
export const readHeldStill = (
  fd: number,
  path: string,
  expected: Uint8Array | undefined,
  started: bigint = nowNs(),
) => {
  const before = fstatSync(fd, { bigint: true })
  if (!before.isFile()) throw Object.assign(new Error(`${path} is not a regular file`), { code: "EINVAL" })
  const buffer = readOpened(fd, Number(before.size))
  const after = fstatSync(fd, { bigint: true })
  if (moved(before, after) || BigInt(buffer.byteLength) !== after.size) {
    throw changing(path, "changed while it was read")
  }
  const age = started - after.ctimeNs
  // The one exception to the settle wait: bytes equal to what the writer says it wrote are that
  // version whole, not a mix, however fresh the stamp (a read that differs waits as ever).
  const asDeclared = expected !== undefined && buffer.equals(expected)
  if (age < SETTLE_NS && age > -CLOCK_SLACK_NS && !asDeclared) {
    throw changing(path, "was changed moments before it was read")
  }
  if (age < SECOND_READ_WITHIN_NS && buffer.byteLength > 0) {
    const again = readOpened(fd, buffer.byteLength)
    if (moved(after, fstatSync(fd, { bigint: true })) || !again.equals(buffer)) {
      throw changing(path, "changed while it was read")
    }
  }
  return {
    content: new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength),
    mode: Number(before.mode & 0o7777n),
  }
}

/**
 * One read attempt after another (each opens the file afresh) while the file keeps changing,
 * spaced so that a write in progress can finish; then `ECHANGED` for good.
 */
export const retryWhileChanging = <A>(path: string, attempt: Effect.Effect<A, ErrnoFailure>) =>
  // The first attempt on its own: nearly every read succeeds at once, and setting up the retry's
  // schedule and clock cost more than the read of a small file. Only a read that met a change
  // enters the spaced retries (READ_ATTEMPTS in all, as before).
  Effect.catchIf(
    attempt,
    (failure) => failure.code === "ECHANGED",
    () =>
      retryChanged(
        path,
        Effect.zipRight(Effect.sleep(RETRY_SPACING).pipe(Effect.withClock(liveClock)), attempt),
      ),
  )

const retryChanged = <A>(path: string, attempt: Effect.Effect<A, ErrnoFailure>) =>
  attempt.pipe(
    Effect.retry({
      schedule: Schedule.intersect(Schedule.recurs(READ_ATTEMPTS - 2), Schedule.spaced(RETRY_SPACING)),
      while: (failure) => failure.code === "ECHANGED",
    }),
    Effect.withClock(liveClock),
    Effect.mapError((failure) =>
      failure.code === "ECHANGED"
        ? {
            code: "ECHANGED",
            message: `ECHANGED: ${path} kept changing while it was read (${READ_ATTEMPTS} attempts); nothing torn was returned`,
          }
        : failure,
    ),
  )
