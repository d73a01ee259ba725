/**
 * The Node side of `Workspace.createFiles`, the bulk "write a new tree" operation: files created
 * exclusively in a tree nobody else uses yet, with no temp file and rename each. Files come grouped
 * by directory (a tree is written in path order), so a directory is opened or checked once per
 * run of files in it, not once per file: through the native module a descriptor of it opened
 * beneath the root (`openDirBeneath`, no symlink followed) and every file created by name in it;
 * without the module, its path re-checked to be free of symlinks (`assertStillReal`) before the
 * files are opened with `O_NOFOLLOW`. Every file is opened `O_CREAT | O_EXCL`, so nothing that is
 * already at a path (a planted link included) is replaced or followed, then written, then given
 * its mode with `fchmod` (exactly, whatever the umask).
 *
 * Durability `fsync`: the batch's files and every directory that gained an entry are flushed
 * through libuv's thread pool, many at a time (one journal commit can serve them all), before the
 * call answers; `atomic`: left to the operating system, as `git worktree add` does.
 */
import { closeSync, constants, fchmodSync, openSync, writeSync } from "node:fs"
import { Effect } from "effect"
import { assertStillReal, type Durability, type ErrnoFailure, errnoOf, fsyncAsync } from "./durable.js"

export interface NewFileAt {
  readonly absolute: string
  readonly content: Uint8Array
  readonly mode: number
}

/** How a directory is opened for files to be created by name in it (the native module's calls). */
export interface DirectoryOpener {
  /** A descriptor of the directory (absolute), opened beneath the root; throws an errno error. */
  readonly openDirectory: (absolute: string) => number
  /** Creates `name` in `dirfd` with `flags`, answering a descriptor; throws an errno error. */
  readonly createIn: (dirfd: number, name: string, flags: number) => number
}

/** Flushes at a time: enough to fill the thread pool's queue, few enough for the descriptor limit. */
const FLUSH_CONCURRENCY = 32

const CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW

const parentOf = (path: string): string => path.slice(0, Math.max(1, path.lastIndexOf("/")))

const writeAll = (fd: number, content: Uint8Array) => {
  let done = 0
  while (done < content.byteLength) done += writeSync(fd, content, done, content.byteLength - done)
}

/**
 * Creates `files` (see the header). `directories`: made for these files by the caller; their
 * parents gained an entry, so they are flushed too.
 */
export const createNewFiles = (
  files: ReadonlyArray<NewFileAt>,
  directories: ReadonlyArray<string>,
  durability: Durability,
  opener: DirectoryOpener | undefined,
): Effect.Effect<void, ErrnoFailure & { readonly index?: number }> =>
  Effect.suspend(() => {
    const durable = durability === "fsync"
    const toFlush: Array<number> = []
    const flushDirectories = new Set<string>(directories.map(parentOf))
    let dirfd: number | undefined
    let directory: string | undefined
    let index = 0
    const closeAll = () => {
      if (dirfd !== undefined) closeSync(dirfd)
      for (const fd of toFlush.splice(0)) closeSync(fd)
    }
    try {
      for (; index < files.length; index++) {
        const file = files[index]!
        const parent = parentOf(file.absolute)
        if (parent !== directory) {
          if (dirfd !== undefined) closeSync(dirfd)
          dirfd = undefined
          directory = parent
          if (opener === undefined) assertStillReal(parent)
          else dirfd = opener.openDirectory(parent)
          if (durable) flushDirectories.add(parent)
        }
        const fd =
          dirfd === undefined
            ? openSync(file.absolute, CREATE, 0o600)
            : opener!.createIn(dirfd, file.absolute.slice(parent.length + (parent === "/" ? 0 : 1)), CREATE)
        try {
          writeAll(fd, file.content)
          fchmodSync(fd, file.mode)
        } catch (e) {
          closeSync(fd)
          throw e
        }
        if (durable) toFlush.push(fd)
        else closeSync(fd)
      }
    } catch (e) {
      closeAll()
      return Effect.fail({ ...errnoOf(e), index })
    }
    if (dirfd !== undefined) closeSync(dirfd)
    if (!durable) return Effect.void
    const fds = toFlush.splice(0)
    return Effect.forEach(fds, fsyncAsync, { concurrency: FLUSH_CONCURRENCY, discard: true }).pipe(
      Effect.ensuring(
        Effect.sync(() => {
          for (const fd of fds) closeSync(fd)
        }),
      ),
      Effect.zipRight(
        Effect.forEach(
          flushDirectories,
          (dir) =>
            Effect.acquireUseRelease(
              Effect.try({
                try: () =>
                  opener?.openDirectory(dir) ?? openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY),
                catch: errnoOf,
              }),
              fsyncAsync,
              (fd) => Effect.sync(() => closeSync(fd)),
            ),
          { concurrency: FLUSH_CONCURRENCY, discard: true },
        ),
      ),
    )
  })
