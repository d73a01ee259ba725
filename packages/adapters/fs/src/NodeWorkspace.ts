/**
 * The Node Workspace: the shared confined workspace (`makeConfinedWorkspace` in core) over
 * `node:fs`. The root is resolved with `realpath` once; from then on every path is walked from it
 * with `lstat`/`readlink` so no symlink is followed out of it. Files are opened with `O_NOFOLLOW`
 * (and `O_NONBLOCK`, so a FIFO cannot hang a read), and written atomically next to themselves
 * (temp + fsync + rename + directory fsync) with the file's mode kept. POSIX only. Calls are
 * synchronous for the reason given in `internal/durable.ts`.
 *
 * Between the walk and the system call another process could swap a checked directory for a
 * symlink. Each primitive therefore re-checks, as late as it can, that the path it was handed is
 * still free of symlinks: a read asks the kernel where the opened file really is, a write checks
 * its open temp file before writing a byte and the directory again before the rename, and delete,
 * mkdir and symlink check the parent directory. That shrinks the window to the gap between one
 * check and the next system call; it does not close it (Node has no `openat`). Scans are the
 * exception: on Linux the native scanner (`internal/nativeScan.ts`) opens each directory with
 * `openat2` beneath the root, refusing any symlink on the way in the same step.
 */
import {
  type BigIntStats,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  readSync,
  realpathSync,
  statSync,
  symlinkSync,
  unlinkSync,
} from "node:fs"
import type { DirectoryEntry, FileKind, FileStat } from "@rewind/contracts"
import { WorkspaceIoError } from "@rewind/contracts"
import {
  type FileSystemPrimitives,
  makeConfinedWorkspace,
  type ProbedEntry,
  type ScannedEntry,
  Workspace,
  type WorkspaceService,
} from "@rewind/core"
import { Effect, Either, Layer } from "effect"
import {
  assertStillReal,
  type Durability,
  errnoOf,
  isErrno,
  isTempFileOf,
  realPathOfFd,
  syncDirectory,
  writeAtomic,
} from "./internal/durable.js"
import { makeNativeScanners } from "./internal/nativeScan.js"

const attempt = <A>(run: () => A) => Effect.try({ try: run, catch: errnoOf })

const kindOf = (d: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): FileKind =>
  d.isSymbolicLink() ? "symlink" : d.isDirectory() ? "directory" : d.isFile() ? "file" : "other"

const fileStatOf = (s: BigIntStats): FileStat => ({
  kind: kindOf(s),
  size: Number(s.size),
  mode: Number(s.mode & 0o7777n),
  mtimeNs: s.mtimeNs,
  ctimeNs: s.ctimeNs,
  inode: s.ino,
})

const parentOf = (path: string): string => path.slice(0, Math.max(1, path.lastIndexOf("/")))

export interface NodeWorkspaceOptions {
  /** `fsync` (default) flushes each written file and its directory; see `Durability`. */
  readonly durability?: Durability
  /**
   * Scans (`scanDirectories`) go through the native directory scanner when it was built at install
   * time (default true); false forces the JavaScript scanner. The answers are the same.
   */
  readonly nativeScan?: boolean
}

/** Whether the native directory scanner was built and loads on this machine. */
export const nativeScanAvailable: boolean = makeNativeScanners !== undefined

const readdirStatSync = (path: string): Array<ScannedEntry> => {
  const out: Array<ScannedEntry> = []
  for (const name of readdirSync(path)) {
    const absolute = `${path === "/" ? "" : path}/${name}`
    const s = lstatSync(absolute, { bigint: true, throwIfNoEntry: false })
    // Gone since the listing: it is simply not there any more.
    if (s === undefined) continue
    const stat = fileStatOf(s)
    if (stat.kind === "symlink") {
      try {
        out.push({ name, stat, target: readlinkSync(absolute) })
      } catch (e) {
        if (!isErrno(e, "ENOENT")) throw e
      }
    } else out.push({ name, stat })
  }
  return out
}

/**
 * The content of an open regular file of `size` bytes (its `fstat` a moment ago), read as
 * `readFileSync` would: at most that many bytes, fewer if it shrank meanwhile. `readFileSync(fd)`
 * would `fstat` the file a second time; a capture reads thousands of files. A file that says it
 * is empty is read to its end, as `readFileSync` does.
 */
const readOpened = (fd: number, size: number): Buffer => {
  if (size === 0) return readFileSync(fd)
  const buffer = Buffer.allocUnsafeSlow(size)
  let filled = 0
  while (filled < size) {
    const read = readSync(fd, buffer, filled, size - filled, filled)
    if (read === 0) break
    filled += read
  }
  return filled < size ? buffer.subarray(0, filled) : buffer
}

const readdirStatManyJs = (paths: ReadonlyArray<string>) =>
  paths.map((path) => {
    try {
      return Either.right(readdirStatSync(path))
    } catch (e) {
      return Either.left(errnoOf(e))
    }
  })

/** The primitives of one workspace (each set keeps its own cache of directory listings). */
export const nodePrimitives = (durability: Durability = "fsync", nativeScan = true): FileSystemPrimitives => {
  const native = nativeScan ? makeNativeScanners?.() : undefined
  const beneath = native?.scanBeneath
  return {
    probe: (path) =>
      attempt((): ProbedEntry => {
        try {
          const stat = lstatSync(path)
          if (stat.isSymbolicLink()) return { kind: "symlink", target: readlinkSync(path) }
          return { kind: stat.isDirectory() ? "directory" : stat.isFile() ? "file" : "other" }
        } catch (e) {
          if (isErrno(e, "ENOENT")) return { kind: "missing" }
          throw e
        }
      }),

    stat: (path) => attempt(() => fileStatOf(lstatSync(path, { bigint: true }))),

    readFile: (path) =>
      attempt(() => {
        const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
        try {
          // The walk found this path free of symlinks; if a directory on it was swapped for one
          // since, the file opened is somewhere else: read nothing from it.
          if (realPathOfFd(fd, path) !== path) {
            throw Object.assign(
              new Error(`${path} no longer leads where it was checked to (swapped for a symlink?)`),
              {
                code: "EXDEV",
              },
            )
          }
          const stat = fstatSync(fd)
          if (!stat.isFile())
            throw Object.assign(new Error(`${path} is not a regular file`), { code: "EINVAL" })
          const buffer = readOpened(fd, stat.size)
          return {
            content: new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength),
            mode: stat.mode & 0o7777,
          }
        } finally {
          closeSync(fd)
        }
      }),

    writeFileAtomic: (path, content, mode) =>
      writeAtomic(
        path,
        content,
        mode === undefined ? { durability, confined: true } : { mode, durability, confined: true },
      ),

    mkdir: (path) =>
      attempt(() => {
        assertStillReal(parentOf(path))
        try {
          mkdirSync(path)
        } catch (e) {
          if (!isErrno(e, "EEXIST") || !lstatSync(path).isDirectory()) throw e
        }
      }),

    unlink: (path) =>
      Effect.zipRight(
        attempt(() => {
          assertStillReal(parentOf(path))
          unlinkSync(path)
        }),
        durability === "fsync" ? syncDirectory(parentOf(path)) : Effect.void,
      ),

    readdir: (path) =>
      attempt(
        (): ReadonlyArray<DirectoryEntry> =>
          readdirSync(path, { withFileTypes: true }).map((d) => ({ name: d.name, kind: kindOf(d) })),
      ),

    readdirStat: (path) => attempt(() => readdirStatSync(path)),

    readdirStatMany: (paths) =>
      // Synchronous on purpose: issuing a level's lstats together on libuv's thread pool was faster on
      // an idle machine but up to twice as slow on a loaded one (every completion is a JavaScript
      // callback fighting the threads for two cores), and captures run beside an agent that is rarely
      // idle. The native scanner spreads a level over threads inside one call instead, with no
      // JavaScript per entry.
      Effect.sync(() => (native === undefined ? readdirStatManyJs(paths) : native.scan(paths))),

    ...(beneath === undefined
      ? {}
      : {
          readdirStatBeneath: (root: string, relatives: ReadonlyArray<string>) =>
            Effect.sync(() => beneath(root, relatives)),
        }),

    readlink: (path) => attempt(() => readlinkSync(path)),

    symlink: (path, target) =>
      Effect.zipRight(
        attempt(() => {
          assertStillReal(parentOf(path))
          symlinkSync(target, path)
        }),
        durability === "fsync" ? syncDirectory(parentOf(path)) : Effect.void,
      ),

    isPartialWrite: isTempFileOf,
  }
}

/** A workspace confined to `root` (which must be an existing directory). */
export const make = (
  root: string,
  options: NodeWorkspaceOptions = {},
): Effect.Effect<WorkspaceService, WorkspaceIoError> =>
  Effect.try({
    try: () => {
      const real = realpathSync(root)
      if (!statSync(real).isDirectory()) {
        throw Object.assign(new Error(`${root} is not a directory`), { code: "ENOTDIR" })
      }
      return makeConfinedWorkspace(real, nodePrimitives(options.durability, options.nativeScan))
    },
    catch: (e) => {
      const f = errnoOf(e)
      return new WorkspaceIoError({
        operation: "stat",
        path: root,
        message: `the workspace root cannot be used: ${f.message}`,
        ...(f.code === undefined ? {} : { code: f.code }),
      })
    },
  })

export const layer = (
  root: string,
  options: NodeWorkspaceOptions = {},
): Layer.Layer<Workspace, WorkspaceIoError> => Layer.effect(Workspace, make(root, options))
