/**
 * The Node Workspace: the shared confined workspace (`makeConfinedWorkspace` in core) over
 * `node:fs`. The root is resolved with `realpath` once; from then on every path is walked from it
 * with `lstat` and no symlink is ever followed. Files are opened with `O_NOFOLLOW` (and
 * `O_NONBLOCK`, so a FIFO cannot hang a read), and written atomically next to themselves
 * (temp + fsync + rename + directory fsync) with the file's mode kept. POSIX only. Calls are
 * synchronous for the reason given in `internal/durable.ts`.
 *
 * Between the walk and the system call another process could swap a checked directory for a
 * symlink. Where the native module loaded (`fileOperations: "kernel-confined"`), that cannot lead
 * anywhere: reads, writes, renames, deletes, mkdirs and symlinks go through a descriptor of the
 * parent directory opened beneath the root with no link followed (`internal/beneath.ts`), so the
 * kernel keeps them inside. Without it (`"checked"`), each primitive re-checks as late as it can
 * that its path is still free of symlinks (a read asks the kernel where the opened file is, a
 * write checks its temp file before writing a byte and again before the rename, delete, mkdir and
 * symlink check the parent): that narrows the window, it does not close it, and `rewind doctor`
 * says so.
 *
 * Reads are stable: a file whose size, mtime or ctime moved while it was read, that was stamped
 * less than 100 ms before, or (changed within 5 s) whose second read differs from the first, is
 * read again (3 attempts, each opening it afresh), then refused with code `ECHANGED`: what is
 * returned is content the file held at one moment, never a mix made by reading across a write.
 * A read given the bytes the file is expected to hold (`WorkspaceReadOptions.expected`) that
 * finds exactly those is not made to wait for the stamp to age: equal bytes are no mix. Scans report names that are not UTF-8 by an escaped form
 * (`internal/names.ts`) with `unsupportedName`, in both scanners.
 */
import { isUtf8 } from "node:buffer"
import {
  type BigIntStats,
  closeSync,
  constants,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmdirSync,
  statSync,
  symlinkSync,
  unlinkSync,
} from "node:fs"
import { homedir } from "node:os"
import type { DirectoryEntry, FileKind, FileStat } from "@rewind/contracts"
import { WorkspaceIoError } from "@rewind/contracts"
import {
  type FileSystemPrimitives,
  makeConfinedWorkspace,
  type ProbedEntry,
  type ScannedEntry,
  type StatFree,
  Workspace,
  type WorkspaceService,
} from "@rewind/core"
import { Effect, Either, Layer } from "effect"
import { beneathAvailable, beneathOperations } from "./internal/beneath.js"
import {
  assertStillReal,
  type Durability,
  type ErrnoFailure,
  errnoOf,
  isErrno,
  isTempFileOf,
  realPathOfFd,
  syncDirectory,
  writeAtomic,
} from "./internal/durable.js"
import { escapedName } from "./internal/names.js"
import { nativeModuleStatus } from "./internal/nativeModule.js"
import { makeNativeReads, nativeReadsStatus } from "./internal/nativeReads.js"
import { makeNativeScanners } from "./internal/nativeScan.js"
import { createNewFiles } from "./internal/newFiles.js"
import { readHeldStill, retryWhileChanging } from "./internal/stableRead.js"

const attempt = <A>(run: () => A) => Effect.try({ try: run, catch: errnoOf })

/** A regular file's bytes anywhere, a symlink in the last component not followed (`readOutsideRoot`). */
const readOutsideRootNow = (path: string): Either.Either<Uint8Array, ErrnoFailure> => {
  try {
    const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW)
    try {
      return Either.right(readFileSync(fd))
    } finally {
      closeSync(fd)
    }
  } catch (e) {
    return Either.left(errnoOf(e))
  }
}

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
  /**
   * File operations go through the native module's kernel-confined calls when it loads (default
   * true); false forces the checked JavaScript ones (tests compare the two).
   */
  readonly nativeFiles?: boolean
  /**
   * A capture's bulk reads (`readFilesBeneath`) run on a native pool thread, with the contents'
   * hashes, when the module has them (default true; needs `nativeFiles`); false reads them on the
   * main thread. The answers are the same.
   */
  readonly nativeReads?: boolean
}

/** Whether the native directory scanner was built and loads on this machine. */
export const nativeScanAvailable: boolean = makeNativeScanners !== undefined

/**
 * What this machine's workspaces run on: the native module (where it was loaded from, or why it
 * was not), the scanner, and how file operations are confined. `rewind doctor` reports it.
 */
export interface Implementation {
  readonly nativeModule:
    | { readonly loaded: true; readonly path: string }
    | { readonly loaded: false; readonly reason: string }
  readonly scanner: "native" | "javascript"
  /** `kernel-confined`: through directory descriptors opened beneath the root; `checked`: re-checked paths. */
  readonly fileOperations: "kernel-confined" | "checked"
  /** Where a capture's bulk reads run (`native-thread` needs the kernel-confined operations too), and why not there. */
  readonly reads: "native-thread" | "main-thread"
  readonly readsReason: string | null
}

export const implementation: Implementation = {
  nativeModule: nativeModuleStatus,
  scanner: nativeScanAvailable ? "native" : "javascript",
  fileOperations: beneathAvailable ? "kernel-confined" : "checked",
  reads: beneathAvailable ? nativeReadsStatus.reads : "main-thread",
  readsReason:
    nativeReadsStatus.reads === "main-thread"
      ? nativeReadsStatus.reason
      : beneathAvailable
        ? null
        : "the kernel-confined file operations are unavailable",
}

const joinBuffer = (directory: string, name: Buffer): Buffer =>
  Buffer.concat([Buffer.from(directory === "/" ? "/" : `${directory}/`), name])

const readdirStatSync = (path: string): Array<ScannedEntry> => {
  const out: Array<ScannedEntry> = []
  // As bytes: a name that is not UTF-8 would otherwise come back mangled (U+FFFD) and its lstat fail.
  for (const raw of readdirSync(path, { encoding: "buffer" })) {
    const supported = isUtf8(raw)
    const name = supported ? raw.toString("utf8") : escapedName(raw)
    const absolute = supported ? `${path === "/" ? "" : path}/${name}` : joinBuffer(path, raw)
    const s = lstatSync(absolute, { bigint: true, throwIfNoEntry: false })
    // Gone since the listing: it is simply not there any more.
    if (s === undefined) continue
    const stat = fileStatOf(s)
    const flag = supported ? {} : { unsupportedName: true as const }
    if (stat.kind === "symlink") {
      try {
        out.push({ name, stat, target: readlinkSync(absolute, "utf8"), ...flag })
      } catch (e) {
        if (!isErrno(e, "ENOENT")) throw e
      }
    } else out.push({ name, stat, ...flag })
  }
  return out
}

const readdirStatManyJs = (paths: ReadonlyArray<string>) =>
  paths.map((path) => {
    try {
      return Either.right(readdirStatSync(path))
    } catch (e) {
      return Either.left(errnoOf(e))
    }
  })

/**
 * The file operations without the native module: plain `node:fs` calls on absolute paths, each
 * re-checking as late as it can that no directory on the way was swapped for a symlink (`EXDEV`).
 */
const checkedFileOperations = (durability: Durability) => ({
  readFile: (path: string, expected: Uint8Array | undefined) =>
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
        return readHeldStill(fd, path, expected)
      } finally {
        closeSync(fd)
      }
    }),

  writeFileAtomic: (path: string, content: Uint8Array, mode: number | undefined) =>
    writeAtomic(
      path,
      content,
      mode === undefined ? { durability, confined: true } : { mode, durability, confined: true },
    ),

  mkdir: (path: string) =>
    attempt(() => {
      assertStillReal(parentOf(path))
      try {
        mkdirSync(path)
      } catch (e) {
        if (!isErrno(e, "EEXIST") || !lstatSync(path).isDirectory()) throw e
      }
    }),

  unlink: (path: string) =>
    Effect.zipRight(
      attempt(() => {
        assertStillReal(parentOf(path))
        unlinkSync(path)
      }),
      durability === "fsync" ? syncDirectory(parentOf(path)) : Effect.void,
    ),

  rmdir: (path: string) =>
    Effect.zipRight(
      attempt(() => {
        assertStillReal(parentOf(path))
        rmdirSync(path)
      }),
      durability === "fsync" ? syncDirectory(parentOf(path)) : Effect.void,
    ),

  symlink: (path: string, target: string) =>
    Effect.zipRight(
      attempt(() => {
        assertStillReal(parentOf(path))
        symlinkSync(target, path)
      }),
      durability === "fsync" ? syncDirectory(parentOf(path)) : Effect.void,
    ),
})

/**
 * The primitives of one workspace over `root` (absolute, symlink-free; every path handed to them
 * is under it). Each set keeps its own cache of directory listings.
 */
export const nodePrimitives = (
  root: string,
  options: NodeWorkspaceOptions = {},
  /** For tests: the kernel-confined operations open directories by the portable component walk. */
  internal: { readonly walkBeneath?: boolean } = {},
): FileSystemPrimitives => {
  const durability = options.durability ?? "fsync"
  const native = options.nativeScan === false ? undefined : makeNativeScanners?.()
  const beneath = native?.scanBeneath
  const files =
    options.nativeFiles === false ? undefined : beneathOperations(root, durability, internal.walkBeneath)
  const threadReads =
    files === undefined || options.nativeReads === false
      ? undefined
      : makeNativeReads(root, internal.walkBeneath ?? false)
  const rootPrefix = root === "/" ? "/" : `${root}/`
  /** The path relative to the root; a path elsewhere is a bug of the caller, refused as EXDEV. */
  const relativeOf = (path: string): string => {
    if (path.startsWith(rootPrefix) && path.length > rootPrefix.length) return path.slice(rootPrefix.length)
    throw Object.assign(new Error(`${path} is not under the workspace root ${root}`), { code: "EXDEV" })
  }
  const relative = (path: string) => attempt(() => relativeOf(path))
  const checked = checkedFileOperations(durability)
  return {
    probe: (path) =>
      attempt((): ProbedEntry => {
        // Nothing there is an answer, not an error: most probes of a protection check look for
        // ignore files and `.git` that do not exist, and a thrown ENOENT (an Error with its stack)
        // cost ten times the lstat itself.
        const stat = lstatSync(path, { throwIfNoEntry: false })
        if (stat === undefined) return { kind: "missing" }
        if (stat.isSymbolicLink()) {
          try {
            return { kind: "symlink", target: readlinkSync(path) }
          } catch (e) {
            if (isErrno(e, "ENOENT")) return { kind: "missing" }
            throw e
          }
        }
        return { kind: stat.isDirectory() ? "directory" : stat.isFile() ? "file" : "other" }
      }),

    ...(files?.probeWhole === undefined
      ? {}
      : { probeWhole: (path: string) => attempt(() => files.probeWhole!(path)) }),

    stat: (path) => attempt(() => fileStatOf(lstatSync(path, { bigint: true }))),

    readOutsideRoot: (path) => Effect.suspend(() => readOutsideRootNow(path)),
    readOutsideRootNow,

    readFile: (path, readOptions) =>
      retryWhileChanging(
        path,
        files === undefined
          ? checked.readFile(path, readOptions?.expected)
          : Effect.flatMap(relative(path), (rel) =>
              attempt(() => {
                const fd = files.openRead(rel)
                try {
                  return readHeldStill(fd, path, readOptions?.expected)
                } finally {
                  closeSync(fd)
                }
              }),
            ),
      ),

    writeFileAtomic: (path, content, mode) =>
      files === undefined
        ? checked.writeFileAtomic(path, content, mode)
        : Effect.flatMap(relative(path), (rel) => files.writeAtomic(rel, content, mode)),

    createFiles: (batch, directories) =>
      Effect.flatMap(
        // Every path is under the root (the confined workspace built them); said once more here.
        attempt(() => {
          for (const f of batch) relativeOf(f.absolute)
        }),
        () => createNewFiles(batch, directories, durability, files?.directoryOpener),
      ),

    mkdir: (path) =>
      files === undefined ? checked.mkdir(path) : Effect.flatMap(relative(path), files.mkdir),

    unlink: (path) =>
      files === undefined ? checked.unlink(path) : Effect.flatMap(relative(path), files.unlink),

    rmdir: (path) =>
      files === undefined ? checked.rmdir(path) : Effect.flatMap(relative(path), files.rmdir),

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
          readdirStatBeneath: (root: string, relatives: ReadonlyArray<string>, statFree?: StatFree) =>
            Effect.promise(() => beneath(root, relatives, statFree)),
        }),

    ...(native?.sealBeneath === undefined
      ? {}
      : {
          sealBeneath: (at: string, relatives: ReadonlyArray<string>, statFree: StatFree) =>
            Effect.sync(() => native.sealBeneath!(at, relatives, statFree)),
        }),

    // A capture's reads: one call for a group of files instead of an effect, a walk and a parent
    // directory opened per file; on a native pool thread with the contents' hashes where it can
    // (the main thread stores the previous group meanwhile). A file it declines (one that is
    // changing included) is read on its own, with the retries of `readFile`.
    ...(files === undefined
      ? {}
      : {
          readFilesBeneath: (at: string, relatives: ReadonlyArray<string>) => {
            const onMainThread = Effect.sync(() =>
              at === root
                ? files.readFiles(relatives, (fd, path) => readHeldStill(fd, path, undefined))
                : relatives.map(() => undefined),
            )
            if (threadReads === undefined || at !== root || relatives.length === 0) return onMainThread
            // A batch that could not run at all is read on the main thread instead.
            return Effect.orElse(
              Effect.tryPromise(() => threadReads(relatives)),
              () => onMainThread,
            )
          },
        }),

    readlink: (path) => attempt(() => readlinkSync(path)),

    symlink: (path, target) =>
      files === undefined
        ? checked.symlink(path, target)
        : Effect.flatMap(relative(path), (rel) => files.symlink(rel, target)),

    isPartialWrite: isTempFileOf,
  }
}

/**
 * Where the search for a workspace's repository stops (`repository.ts` in core): git's
 * `GIT_CEILING_DIRECTORIES` (absolute paths, `:`-separated) and the user's home directory.
 */
const repositoryCeilings = (): ReadonlyArray<string> => {
  const ceilings = (process.env.GIT_CEILING_DIRECTORIES ?? "")
    .split(":")
    .filter((p) => p.startsWith("/"))
    .map((p) => (p.length > 1 ? p.replace(/\/+$/, "") : p))
  const home = homedir()
  if (home.startsWith("/") && home !== "/") {
    // The root is a real path: so must the ceiling be to meet it on the way up.
    const real = (() => {
      try {
        return realpathSync(home)
      } catch {
        return home.replace(/\/+$/, "")
      }
    })()
    ceilings.push(real)
  }
  return ceilings
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
      return makeConfinedWorkspace(real, nodePrimitives(real, options), {
        repositoryCeilings: repositoryCeilings(),
      })
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
