/**
 * File primitives shared by the blob store and the workspace: write a temp file, (sync it,) rename
 * it over the target, (then sync the directory so the rename itself survives a power cut).
 *
 * Opening, writing and renaming are synchronous system calls on purpose: each is microseconds on a
 * local disk, while an async call's round trip through libuv's thread pool costs far more than the
 * call itself (about half a millisecond each on a busy machine). Only the flushes, which really
 * wait for the disk, go through the thread pool, so the event loop is never blocked on them and
 * concurrent writes' flushes can share one journal commit.
 */
import { randomUUID } from "node:crypto"
import {
  closeSync,
  constants,
  existsSync,
  fchmodSync,
  fsync,
  futimesSync,
  openSync,
  readlinkSync,
  realpathSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from "node:fs"
import { basename, dirname } from "node:path"
import { getSystemErrorMap } from "node:util"
import { Effect } from "effect"

export interface ErrnoFailure {
  readonly code?: string
  readonly message: string
}

export const errnoOf = (error: unknown): ErrnoFailure => {
  const e = error as NodeJS.ErrnoException
  return e?.code === undefined
    ? { message: String(e?.message ?? error) }
    : { code: e.code, message: e.message }
}

/** A failure named as Node names an errno (`uv` numbers errors negatively on POSIX). */
export const errnoFailure = (
  errno: number,
  syscall: string,
  path: string,
): ErrnoFailure & { readonly code: string } => {
  const [code, description] = getSystemErrorMap().get(-errno) ?? [`E${errno}`, `error ${errno}`]
  return { code, message: `${code}: ${description}, ${syscall} '${path}'` }
}

export const isErrno = (error: unknown, code: string): boolean =>
  (error as NodeJS.ErrnoException)?.code === code

/**
 * How hard a write tries to survive a crash. `fsync` (the default): the file and its directory are
 * flushed before the write returns, so it survives a power cut. `atomic`: temp file + rename only,
 * which survives a crash of the process (readers see the old file or the new one, never a part)
 * but leaves flushing to the OS, as git does by default for loose objects.
 */
export type Durability = "fsync" | "atomic"

export const fsyncAsync = (fd: number): Effect.Effect<void, ErrnoFailure> =>
  Effect.async<void, ErrnoFailure>((resume) => {
    fsync(fd, (error) => resume(error ? Effect.fail(errnoOf(error)) : Effect.void))
  })

/**
 * Flushes a directory's entries (a rename or unlink in it) to disk. The flush itself goes through
 * the thread pool, so flushes of concurrent writes can share one journal commit.
 */
export const syncDirectory = (directory: string): Effect.Effect<void, ErrnoFailure> =>
  Effect.acquireUseRelease(
    Effect.try({
      try: () => openSync(directory, constants.O_RDONLY | constants.O_DIRECTORY),
      catch: errnoOf,
    }),
    fsyncAsync,
    (fd) => Effect.sync(() => closeSync(fd)),
  )

/**
 * Where an open file really is: the kernel's own record of the path it opened (`/proc/self/fd` on
 * Linux), or the real path of its directory elsewhere. Used to catch a directory swapped for a
 * symlink between the confined walk and the system call that opened the file.
 */
const HAS_PROC_FD = existsSync("/proc/self/fd")

export const realPathOfFd = (fd: number, openedAs: string): string =>
  HAS_PROC_FD
    ? readlinkSync(`/proc/self/fd/${fd}`)
    : `${realpathSync(dirname(openedAs))}/${basename(openedAs)}`

/**
 * Fails (code `EXDEV`) unless `directory`, an absolute path the confined walk found free of
 * symlinks, still is: no component of it was swapped for a symlink since.
 */
export const assertStillReal = (directory: string): void => {
  const real = realpathSync(directory)
  if (real !== directory) {
    throw Object.assign(
      new Error(`${directory} now leads to ${real} (a directory was swapped for a symlink); refused`),
      { code: "EXDEV" },
    )
  }
}

const removeQuietly = (path: string) =>
  Effect.sync(() => {
    try {
      unlinkSync(path)
    } catch {
      // Already gone; nothing else to undo.
    }
  })

const tempPrefix = (targetName: string) => `.${targetName.slice(0, 100)}.`

/** The name of a temp file for `targetName` (in the same directory), from a fresh UUID. */
export const tempNameFor = (targetName: string, uuid: string): string =>
  `${tempPrefix(targetName)}${uuid}.tmp`
const TEMP_SUFFIX = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.tmp$/

/** Whether `entryName` is a temp file `writeAtomic` makes for a file named `targetName`. */
export const isTempFileOf = (entryName: string, targetName: string): boolean => {
  const prefix = tempPrefix(targetName)
  return entryName.startsWith(prefix) && TEMP_SUFFIX.test(entryName.slice(prefix.length))
}

/**
 * Writes `content` to `target` atomically. The temp file lives in `tempDirectory` (default: the
 * target's own directory, which keeps the rename on one filesystem). `mode` undefined gives a new
 * file the process default (0o666 & ~umask); a given mode is set exactly, whatever the umask.
 * `mtimeMs`, when given, is set on the temp file before the rename, so the file never appears with
 * another modification time.
 */
export const writeAtomic = (
  target: string,
  content: Uint8Array,
  options: {
    readonly mode?: number
    readonly tempDirectory?: string
    readonly durability: Durability
    readonly mtimeMs?: number
    /**
     * The target's directory was found free of symlinks (the confined workspace): refuse, before
     * writing a byte and again before the rename, if a component has been swapped for one since.
     */
    readonly confined?: boolean
    /** Runs once the content is written, before the last check (tests use it to race the rename). */
    readonly onWritten?: () => void
  },
): Effect.Effect<void, ErrnoFailure> =>
  Effect.gen(function* () {
    const directory = dirname(target)
    const temp = `${options.tempDirectory ?? directory}/${tempPrefix(basename(target))}${randomUUID()}.tmp`
    const assertStillAt = (fd: number) => {
      if (options.confined === true && realPathOfFd(fd, temp) !== temp) {
        throw Object.assign(
          new Error(
            `${directory} no longer is the directory that was checked (swapped for a symlink?); refused`,
          ),
          { code: "EXDEV" },
        )
      }
    }
    const written = yield* Effect.acquireUseRelease(
      Effect.try({
        try: () =>
          openSync(
            temp,
            constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
            options.mode ?? 0o666,
          ),
        catch: errnoOf,
      }),
      (fd) =>
        Effect.zipRight(
          Effect.try({
            try: () => {
              assertStillAt(fd)
              writeFileSync(fd, content)
              if (options.mode !== undefined) fchmodSync(fd, options.mode)
              if (options.mtimeMs !== undefined) {
                const seconds = options.mtimeMs / 1000
                futimesSync(fd, seconds, seconds)
              }
              options.onWritten?.()
            },
            catch: errnoOf,
          }),
          options.durability === "fsync" ? fsyncAsync(fd) : Effect.void,
        ).pipe(
          // Checked again just before the rename: the open temp file is where it was created only
          // if no directory on the way has been moved (or swapped for a symlink) since. One
          // `readlink`, where a `realpath` of the directory costs an `lstat` per component.
          Effect.zipRight(Effect.try({ try: () => assertStillAt(fd), catch: errnoOf })),
        ),
      (fd) => Effect.sync(() => closeSync(fd)),
    ).pipe(
      Effect.zipRight(Effect.try({ try: () => renameSync(temp, target), catch: errnoOf })),
      Effect.either,
    )
    if (written._tag === "Left") {
      yield* removeQuietly(temp)
      return yield* Effect.fail(written.left)
    }
    if (options.durability === "fsync") yield* syncDirectory(directory)
  })
