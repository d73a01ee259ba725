/**
 * Kernel-confined file operations: every write, create, rename and delete (and the open of a file
 * to read) acts through a descriptor of its parent directory that the native module opened
 * beneath the workspace root with no symlink followed anywhere on the way (Linux `openat2` with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS; a component walk with
 * `openat(O_NOFOLLOW)` where `openat2` is missing), and then only by name inside that directory
 * (`openat`, `renameat`, `unlinkat`, `mkdirat`, `symlinkat`, never following a link). However the
 * tree is swapped around meanwhile, the kernel keeps each call inside the root: this is what
 * closes the window a check before the system call leaves open.
 *
 * An atomic write's temp file lives beside its target, in the same directory descriptor, named as
 * `isTempFileOf` recognises. Flushes go through libuv's thread pool (`fs.fsync` on the
 * descriptors), as in `durable.ts`, so concurrent writes can share a journal commit.
 *
 * Failures are errno codes as Node names them; a symlink met on the way is `ELOOP`.
 */
import { randomUUID } from "node:crypto"
import { closeSync, constants, fchmodSync, writeFileSync } from "node:fs"
import type { ProbedEntry } from "@rewind/core"
import { Effect } from "effect"
import {
  type Durability,
  type ErrnoFailure,
  errnoFailure,
  errnoOf,
  fsyncAsync,
  tempNameFor,
} from "./durable.js"
import { nativeModule } from "./nativeModule.js"
import type { DirectoryOpener } from "./newFiles.js"

/** The module's file operations: >= 0 for success (a descriptor where one is opened), -errno. */
interface FileOperationsModule {
  readonly openDirBeneath: (root: string, relative: string, walk?: boolean) => number
  readonly openAt: (dirfd: number, name: string, flags: number, mode: number) => number
  readonly renameAt: (dirfd: number, from: string, to: string) => number
  readonly unlinkAt: (dirfd: number, name: string) => number
  readonly rmdirAt: (dirfd: number, name: string) => number
  readonly mkdirAt: (dirfd: number, name: string, mode: number) => number
  readonly symlinkAt: (target: string, dirfd: number, name: string) => number
  /** Linux with openat2: the entry at a path, no link followed on it (dirscan.c `probePath`). */
  readonly probePath?: (path: string) => number | string
}

const operations: FileOperationsModule | undefined =
  typeof (nativeModule as Partial<FileOperationsModule> | undefined)?.openDirBeneath === "function" &&
  typeof (nativeModule as Partial<FileOperationsModule> | undefined)?.rmdirAt === "function"
    ? (nativeModule as FileOperationsModule)
    : undefined

/** Whether the kernel-confined operations are available (the native module loaded). */
export const beneathAvailable = operations !== undefined

/** Throws the failure of a call that answered -errno; returns its answer otherwise. */
const check = (answer: number, syscall: string, path: string): number => {
  if (answer >= 0) return answer
  const failure = errnoFailure(-answer, syscall, path)
  throw Object.assign(new Error(failure.message), failure)
}

export interface BeneathOperations {
  /** Opens a file to read (`O_RDONLY | O_NONBLOCK | O_NOFOLLOW`); the caller closes it. */
  readonly openRead: (relative: string) => number
  /**
   * `read` of each file opened as `openRead` opens it, with one descriptor of a directory for a
   * run of files in it; `undefined` for a file that could not be opened or that `read` threw for.
   */
  readonly readFiles: <A>(
    relatives: ReadonlyArray<string>,
    read: (fd: number, absolute: string) => A,
  ) => Array<A | undefined>
  readonly writeAtomic: (
    relative: string,
    content: Uint8Array,
    mode: number | undefined,
  ) => Effect.Effect<void, ErrnoFailure>
  readonly mkdir: (relative: string) => Effect.Effect<void, ErrnoFailure>
  readonly unlink: (relative: string) => Effect.Effect<void, ErrnoFailure>
  /** Removes an empty directory (ENOTEMPTY otherwise). */
  readonly rmdir: (relative: string) => Effect.Effect<void, ErrnoFailure>
  readonly symlink: (relative: string, target: string) => Effect.Effect<void, ErrnoFailure>
  /** Directories opened beneath the root, files created by name in them (`createFiles`). */
  readonly directoryOpener: DirectoryOpener
  /**
   * The entry at an absolute path under the root in one call, the kernel following no link on it
   * (last component included); undefined when the kernel's walk met a link, a file or nothing
   * where a directory is, or failed: the confined workspace then walks it a component at a time
   * (core's `probeWhole`). Absent without `openat2`, and in `walk` mode.
   */
  readonly probeWhole?: (absolute: string) => ProbedEntry | undefined
}

/** `probePath`'s answer as a probed entry: 0 missing, 1 file, 2 directory, 3 other, a link's target. */
const PROBED: ReadonlyArray<ProbedEntry> = [
  { kind: "missing" },
  { kind: "file" },
  { kind: "directory" },
  { kind: "other" },
]

const splitParent = (relative: string): readonly [string, string] => {
  const cut = relative.lastIndexOf("/")
  return cut === -1 ? ["", relative] : [relative.slice(0, cut), relative.slice(cut + 1)]
}

/**
 * The operations for one root (absolute, symlink-free), or undefined without the native module.
 * `walk`: open directories by the component walk even where `openat2` exists (what systems
 * without it run; tests race it too).
 */
export const beneathOperations = (
  root: string,
  durability: Durability,
  walk = false,
): BeneathOperations | undefined => {
  const native = operations
  if (native === undefined) return undefined
  const where = (relative: string) => `${root === "/" ? "" : root}/${relative}`

  /** The parent directory of `relative`, opened beneath the root, and the entry's name in it. */
  const openParent = (relative: string) =>
    Effect.try({
      try: () => {
        const [parent, name] = splitParent(relative)
        return { dirfd: check(native.openDirBeneath(root, parent, walk), "openat2", where(parent)), name }
      },
      catch: errnoOf,
    })
  const inParent = <A>(
    relative: string,
    use: (dirfd: number, name: string) => Effect.Effect<A, ErrnoFailure>,
  ): Effect.Effect<A, ErrnoFailure> =>
    Effect.acquireUseRelease(
      openParent(relative),
      ({ dirfd, name }) => use(dirfd, name),
      ({ dirfd }) => Effect.sync(() => closeSync(dirfd)),
    )
  const call = (run: () => number) => Effect.try({ try: run, catch: errnoOf })
  const flushDirectory = (dirfd: number) => (durability === "fsync" ? fsyncAsync(dirfd) : Effect.void)

  const relativeOf = (absolute: string) =>
    absolute === root ? "" : absolute.slice(root === "/" ? 1 : root.length + 1)

  const probePath = walk ? undefined : native.probePath
  return {
    ...(probePath === undefined
      ? {}
      : {
          probeWhole: (absolute: string) => {
            const answer = probePath(absolute)
            return typeof answer === "string" ? { kind: "symlink", target: answer } : PROBED[answer]
          },
        }),
    directoryOpener: {
      openDirectory: (absolute) =>
        check(native.openDirBeneath(root, relativeOf(absolute), walk), "openat2", absolute),
      createIn: (dirfd, name, flags) => check(native.openAt(dirfd, name, flags, 0o600), "open", name),
    },

    readFiles: (relatives, read) => {
      // The directory's descriptor is held only for the run of files in it, all read within this
      // one synchronous call; it was opened beneath the root like every other (no symlink on its
      // path), so each file opened by name in it is as confined as by `openRead`.
      const out = new Array(relatives.length)
      let directory: string | undefined
      let dirfd = -1
      try {
        for (let i = 0; i < relatives.length; i++) {
          const relative = relatives[i]!
          const [parent, name] = splitParent(relative)
          if (parent !== directory) {
            if (dirfd >= 0) closeSync(dirfd)
            directory = parent
            dirfd = native.openDirBeneath(root, parent, walk)
          }
          const fd = dirfd < 0 ? -1 : native.openAt(dirfd, name, constants.O_RDONLY | constants.O_NONBLOCK, 0)
          if (fd < 0) continue
          try {
            out[i] = read(fd, where(relative))
          } catch {
            // Declined: the caller reads it on its own, and gets its answer or error that way.
          } finally {
            closeSync(fd)
          }
        }
      } finally {
        if (dirfd >= 0) closeSync(dirfd)
      }
      return out
    },

    openRead: (relative) => {
      const [parent, name] = splitParent(relative)
      const dirfd = check(native.openDirBeneath(root, parent, walk), "openat2", where(parent))
      try {
        return check(
          native.openAt(dirfd, name, constants.O_RDONLY | constants.O_NONBLOCK, 0),
          "open",
          where(relative),
        )
      } finally {
        closeSync(dirfd)
      }
    },

    writeAtomic: (relative, content, mode) =>
      inParent(relative, (dirfd, name) => {
        const temp = tempNameFor(name, randomUUID())
        const removeTemp = Effect.sync(() => void native.unlinkAt(dirfd, temp))
        const written = Effect.acquireUseRelease(
          call(() =>
            check(
              native.openAt(dirfd, temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600),
              "open",
              where(temp),
            ),
          ),
          (fd) =>
            Effect.zipRight(
              call(() => {
                writeFileSync(fd, content)
                // A new file gets what `open(..., 0o666)` would have given it under the umask.
                fchmodSync(fd, mode ?? 0o666 & ~process.umask())
                return 0
              }),
              durability === "fsync" ? fsyncAsync(fd) : Effect.void,
            ),
          (fd) => Effect.sync(() => closeSync(fd)),
        ).pipe(
          Effect.zipRight(call(() => check(native.renameAt(dirfd, temp, name), "rename", where(relative)))),
        )
        return written.pipe(
          Effect.tapError(() => removeTemp),
          Effect.zipRight(flushDirectory(dirfd)),
        )
      }),

    mkdir: (relative) =>
      inParent(relative, (dirfd, name) =>
        Effect.asVoid(call(() => check(native.mkdirAt(dirfd, name, 0o777), "mkdir", where(relative)))),
      ),

    unlink: (relative) =>
      inParent(relative, (dirfd, name) =>
        Effect.zipRight(
          call(() => check(native.unlinkAt(dirfd, name), "unlink", where(relative))),
          flushDirectory(dirfd),
        ),
      ),

    rmdir: (relative) =>
      inParent(relative, (dirfd, name) =>
        Effect.zipRight(
          call(() => check(native.rmdirAt(dirfd, name), "rmdir", where(relative))),
          flushDirectory(dirfd),
        ),
      ),

    symlink: (relative, target) =>
      inParent(relative, (dirfd, name) =>
        Effect.zipRight(
          call(() => check(native.symlinkAt(target, dirfd, name), "symlink", where(relative))),
          flushDirectory(dirfd),
        ),
      ),
  }
}
