/**
 * A Workspace built from a filesystem's primitive operations: the semantics every adapter shares
 * (which paths are refused, what a read of a directory does, that a write keeps the file's mode,
 * that a delete never removes a directory or a symlink's target) live here once, and an adapter
 * supplies only the primitives (Node's `fs`, an in-memory tree). Every path handed to a primitive
 * has been confined by `resolveConfined` first, so a primitive never sees a path outside the root;
 * the one exception, `readdirStatBeneath`, is handed paths relative to the root for the operating
 * system to confine as it opens them.
 *
 * No symlink is ever followed (DESIGN §5): a link in a directory component refuses the path
 * (`symlink_in_path`), a read or write of a link refuses it too, and delete, stat and readLink act
 * on the link itself. A primitive that meets a link the walk did not see (another process swapped
 * one in) fails with `ELOOP` or `EXDEV`, and the workspace answers `symlink_in_path` for it as
 * well, so a race and a planted link read the same to the caller.
 */
import {
  type DirectoryEntry,
  type FileStat,
  PathRefused,
  WorkspaceIoError,
  type WorkspacePath,
  workspacePathProblem,
} from "@rewind/contracts"
import { Effect, Either, Option } from "effect"
import type {
  NewFile,
  ScannedEntry,
  WorkspaceError,
  WorkspaceFile,
  WorkspaceReadOptions,
  WorkspaceService,
} from "../ports/Workspace.js"
import {
  type ConfinedPath,
  checkRootedLength,
  checkSymlinkTarget,
  checkWorkspacePath,
  type ProbedEntry,
  resolveConfined,
} from "./confinedPathResolution.js"

/** Failure of a primitive; the workspace re-labels it with the operation and workspace path. */
export interface PrimitiveFailure {
  readonly message: string
  readonly code?: string
}

/**
 * Codes a primitive fails with when it met a symlink on the way that the walk did not see: `ELOOP`
 * (the kernel refused to follow it) or `EXDEV` (a check found the path no longer leads where it was
 * walked to, or the kernel refused to leave the root).
 */
const LINK_ON_THE_WAY = new Set(["ELOOP", "EXDEV"])

/** Operations on absolute paths that the confined workspace has already checked. */
export interface FileSystemPrimitives {
  /** What is at the path itself (like `lstat` + `readlink`); "missing" when nothing is. */
  readonly probe: (absolute: string) => Effect.Effect<ProbedEntry, PrimitiveFailure>
  /** `lstat` of an existing entry. */
  readonly stat: (absolute: string) => Effect.Effect<FileStat, PrimitiveFailure>
  /**
   * Content and mode of a regular file. Fails for anything else at the path (nothing, a directory,
   * a FIFO, a symlink in the last component, which is never followed) and never blocks: bulk reads
   * rely on it to tell a file from everything else without an `lstat` first.
   */
  readonly readFile: (
    absolute: string,
    options?: WorkspaceReadOptions,
  ) => Effect.Effect<WorkspaceFile, PrimitiveFailure>
  /**
   * Replaces or creates a regular file atomically (temp file in the same directory + rename).
   * `mode` undefined: the platform default for a new file.
   */
  readonly writeFileAtomic: (
    absolute: string,
    content: Uint8Array,
    mode: number | undefined,
  ) => Effect.Effect<void, PrimitiveFailure>
  /**
   * Creates new regular files in directories that exist (`O_CREAT | O_EXCL | O_NOFOLLOW`: nothing
   * may be at a path, and a symlink there is not followed), writes each and gives it its mode
   * exactly; with durable writes, flushes the files, the directories they went into and the
   * parents of `directories` (made for them) before answering. Stops at the first file that
   * cannot be made, naming it by `index`.
   */
  readonly createFiles: (
    files: ReadonlyArray<{ readonly absolute: string; readonly content: Uint8Array; readonly mode: number }>,
    directories: ReadonlyArray<string>,
  ) => Effect.Effect<void, PrimitiveFailure & { readonly index?: number }>
  /** Creates one directory level; succeeds if a directory is already there. */
  readonly mkdir: (absolute: string) => Effect.Effect<void, PrimitiveFailure>
  /** Removes a file or symlink (never a directory). */
  readonly unlink: (absolute: string) => Effect.Effect<void, PrimitiveFailure>
  /** Removes an empty directory (`ENOTEMPTY` when it is not). */
  readonly rmdir: (absolute: string) => Effect.Effect<void, PrimitiveFailure>
  readonly readdir: (absolute: string) => Effect.Effect<ReadonlyArray<DirectoryEntry>, PrimitiveFailure>
  /**
   * `readdir` + `lstat` (+ `readlink` for symlinks) of every entry, in one call. An entry that
   * vanishes between the listing and its `lstat` is left out.
   */
  readonly readdirStat: (absolute: string) => Effect.Effect<ReadonlyArray<ScannedEntry>, PrimitiveFailure>
  /**
   * `readdirStat` of several directories, each with its own answer, in order. Optional: without
   * it the directories are read one by one through `readdirStat`.
   */
  readonly readdirStatMany?: (
    absolutes: ReadonlyArray<string>,
  ) => Effect.Effect<ReadonlyArray<Either.Either<ReadonlyArray<ScannedEntry>, PrimitiveFailure>>>
  /**
   * `readdirStat` of directories given relative to the root (`""` is the root itself), each opened
   * by the operating system beneath the root without following a symlink anywhere on its path
   * (Linux `openat2` with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS). That is the confinement a walk
   * gives, done in the same step as the open, so the workspace does not walk these paths itself.
   * `undefined` for a directory not listed that way, for whatever reason: the workspace then
   * resolves and lists it as usual, which gives the answer (or the error) it owes. Optional.
   */
  readonly readdirStatBeneath?: (
    root: string,
    relatives: ReadonlyArray<string>,
  ) => Effect.Effect<ReadonlyArray<ReadonlyArray<ScannedEntry> | undefined>>
  readonly readlink: (absolute: string) => Effect.Effect<string, PrimitiveFailure>
  readonly symlink: (absolute: string, target: string) => Effect.Effect<void, PrimitiveFailure>
  /**
   * Whether a directory entry is the temp file of an interrupted `writeFileAtomic` of `target` in
   * the same directory (always false for a filesystem whose writes leave no temp file).
   */
  readonly isPartialWrite: (entryName: string, targetName: string) => boolean
}

type Operation = WorkspaceIoError["operation"]

const ioError =
  (operation: Operation, path: string) =>
  (failure: PrimitiveFailure): WorkspaceError =>
    failure.code !== undefined && LINK_ON_THE_WAY.has(failure.code)
      ? new PathRefused({
          path,
          reason: "symlink_in_path",
          message: `refused to ${operation} ${JSON.stringify(path)}: a symlink on the way, which the workspace never goes through (${failure.message})`,
        })
      : new WorkspaceIoError({
          operation,
          path,
          message: failure.message,
          ...(failure.code === undefined ? {} : { code: failure.code }),
        })

const notRegular = (path: string, kind: string, doing: string) =>
  new PathRefused({
    path,
    reason: "not_a_regular_file",
    message: `refused to ${doing} ${JSON.stringify(path)}: it is a ${kind}, not a regular file`,
  })

const byName = (a: { readonly name: string }, b: { readonly name: string }) =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : 0

/**
 * Entries in name order: the array itself when it already is. A primitive that keeps listings
 * hands back the same array for a directory that did not change, and a scan can then recognise
 * it by identity and reuse what it derived from it last time.
 */
const sortedByName = <A extends { readonly name: string }>(entries: ReadonlyArray<A>): ReadonlyArray<A> => {
  for (let i = 1; i < entries.length; i++) {
    if (byName(entries[i - 1]!, entries[i]!) > 0) return [...entries].sort(byName)
  }
  return entries
}

/** Builds the Workspace service over an absolute, symlink-free root and its primitives. */
export const makeConfinedWorkspace = (root: string, fs: FileSystemPrimitives): WorkspaceService => {
  /**
   * `seen`: directories already probed in the same bulk call. Only directories are remembered (the
   * components every path of a batch walks through); the last component is always probed.
   */
  const resolve = (
    path: string,
    operation: Operation,
    finalSymlink: "refuse" | "report",
    seen?: Map<string, ProbedEntry>,
  ) =>
    resolveConfined(path, {
      root,
      finalSymlink,
      operation,
      probe: (absolute) => {
        const known = seen?.get(absolute)
        if (known !== undefined) return Effect.succeed(known)
        const probed = Effect.mapError(fs.probe(absolute), ioError(operation, path))
        return seen === undefined
          ? probed
          : Effect.tap(probed, (entry) => {
              if (entry.kind === "directory") seen.set(absolute, entry)
            })
      },
      notADirectory: (p, at) =>
        new WorkspaceIoError({
          operation,
          path: p,
          code: "ENOTDIR",
          message: `${JSON.stringify(at)} is not a directory, so ${JSON.stringify(p)} cannot exist`,
        }),
    })

  const createParents = (target: ConfinedPath, path: string, operation: Operation) =>
    Effect.gen(function* () {
      let dir = target.existingParent
      for (const name of target.missing.slice(0, -1)) {
        dir = `${dir === "/" ? "" : dir}/${name}`
        yield* Effect.mapError(fs.mkdir(dir), ioError(operation, path))
      }
      return `${dir === "/" ? "" : dir}/${target.missing.at(-1)!}`
    })

  const directoryOf = (directory: string | undefined, seen?: Map<string, ProbedEntry>) =>
    Effect.gen(function* () {
      if (directory === undefined) return root
      const target = yield* resolve(directory, "scan", "refuse", seen)
      if (target.kind !== "directory") {
        return yield* new WorkspaceIoError({
          operation: "scan",
          path: directory,
          code: target.kind === "missing" ? "ENOENT" : "ENOTDIR",
          message: `${JSON.stringify(directory)} is ${target.kind === "missing" ? "missing" : `a ${target.kind}`}, not a directory`,
        })
      }
      return target.absolute
    })

  const read = (path: string, seen?: Map<string, ProbedEntry>, options?: WorkspaceReadOptions) =>
    Effect.gen(function* () {
      const target = yield* resolve(path, "read", "refuse", seen)
      switch (target.kind) {
        case "missing":
          return Option.none()
        case "file":
          return Option.some(
            yield* Effect.mapError(fs.readFile(target.absolute, options), ioError("read", path)),
          )
        default:
          return yield* notRegular(path, target.kind, "read")
      }
    })

  const stat = (path: string, seen?: Map<string, ProbedEntry>) =>
    Effect.gen(function* () {
      const target = yield* resolve(path, "stat", "report", seen)
      if (target.kind === "missing") return Option.none()
      return Option.some(yield* Effect.mapError(fs.stat(target.absolute), ioError("stat", path)))
    })

  /**
   * The read of a path whose directories this bulk call has all probed already: the file is opened
   * straight away, without an `lstat` of its own. `readFile` refuses a symlink, a directory or a
   * FIFO by contract, so a file is read exactly when the walk would have found one there; any
   * failure goes the whole way round (`read`), which gives the same answer and the same error as a
   * read on its own. Undefined when a directory on the way has not been probed in this call.
   */
  const readUnderSeen = (path: string, seen: Map<string, ProbedEntry>) => {
    if (workspacePathProblem(path) !== undefined) return undefined
    let absolute = root === "/" ? "" : root
    let start = 0
    for (let cut = path.indexOf("/"); cut !== -1; cut = path.indexOf("/", start)) {
      absolute = `${absolute}/${path.slice(start, cut)}`
      if (seen.get(absolute)?.kind !== "directory") return undefined
      start = cut + 1
    }
    return Effect.orElse(Effect.map(fs.readFile(`${absolute}/${path.slice(start)}`), Option.some), () =>
      read(path, seen),
    )
  }

  const badMode = (path: string, mode: number | undefined) =>
    mode !== undefined && !(Number.isInteger(mode) && mode >= 0 && mode <= 0o7777)
      ? new WorkspaceIoError({
          operation: "write",
          path,
          code: "EINVAL",
          message: `mode ${String(mode)} is not a permission mode`,
        })
      : undefined

  /**
   * `createFiles`: every path checked as data first, each distinct parent directory resolved once
   * (the walk refuses a symlink on the way) and made where missing, then the files handed to the
   * primitive in one batch. The files' own names are not probed: the primitive creates each
   * exclusively, so whatever is there (a file, a planted link) fails it with `EEXIST`.
   */
  const createFiles = (files: ReadonlyArray<NewFile>) =>
    Effect.gen(function* () {
      const seen = new Map<string, ProbedEntry>()
      const parents = new Map<string, string>()
      const made: Array<string> = []
      const batch: Array<{ absolute: string; content: Uint8Array; mode: number }> = []
      for (const file of files) {
        const segments = yield* checkWorkspacePath(file.path)
        yield* checkRootedLength(root, file.path, segments)
        const wrongMode = badMode(file.path, file.mode)
        if (wrongMode !== undefined) return yield* wrongMode
        const cut = file.path.lastIndexOf("/")
        const parent = cut === -1 ? "" : file.path.slice(0, cut)
        let absoluteParent = parent === "" ? root : parents.get(parent)
        if (absoluteParent === undefined) {
          const target = yield* resolve(parent, "write", "refuse", seen)
          if (target.kind === "missing") {
            let dir = target.existingParent
            for (const name of target.missing) {
              dir = `${dir === "/" ? "" : dir}/${name}`
              yield* Effect.mapError(fs.mkdir(dir), ioError("write", file.path))
              seen.set(dir, { kind: "directory" })
              made.push(dir)
            }
            absoluteParent = dir
          } else if (target.kind === "directory") absoluteParent = target.absolute
          else {
            return yield* new WorkspaceIoError({
              operation: "write",
              path: file.path,
              code: "ENOTDIR",
              message: `${JSON.stringify(parent)} is a ${target.kind}, so ${JSON.stringify(file.path)} cannot be created`,
            })
          }
          parents.set(parent, absoluteParent)
        }
        batch.push({
          absolute: `${absoluteParent === "/" ? "" : absoluteParent}/${segments.at(-1)!}`,
          content: file.content,
          mode: file.mode,
        })
      }
      if (batch.length === 0) return
      yield* Effect.mapError(fs.createFiles(batch, made), (failure) =>
        ioError("write", files[failure.index ?? 0]?.path ?? ".")(failure),
      )
    })

  type Listing = Either.Either<ReadonlyArray<ScannedEntry>, WorkspaceError>

  /** `scanDirectories` with every path resolved by the walk first (directories met once per call). */
  const scanChecked = (directories: ReadonlyArray<WorkspacePath | undefined>) =>
    Effect.gen(function* () {
      const seen = new Map<string, ProbedEntry>()
      const resolved = yield* Effect.forEach(directories, (d) => Effect.either(directoryOf(d, seen)))
      const readable = resolved.flatMap((r) => (Either.isRight(r) ? [r.right] : []))
      const listed =
        fs.readdirStatMany === undefined
          ? yield* Effect.forEach(readable, (absolute) => Effect.either(fs.readdirStat(absolute)))
          : yield* fs.readdirStatMany(readable)
      let next = 0
      return resolved.map((r, i): Listing => {
        if (Either.isLeft(r)) return Either.left(r.left)
        const entries = listed[next++]!
        return Either.isLeft(entries)
          ? Either.left(ioError("scan", directories[i] ?? ".")(entries.left))
          : Either.right(sortedByName(entries.right))
      })
    })

  return {
    root,

    read: (path, options) => read(path, undefined, options),

    readMany: (paths) =>
      Effect.suspend(() => {
        const seen = new Map<string, ProbedEntry>()
        return Effect.forEach(paths, (path) => Effect.either(readUnderSeen(path, seen) ?? read(path, seen)))
      }),

    write: (path, content, options) =>
      Effect.gen(function* () {
        const target = yield* resolve(path, "write", "refuse")
        const wrongMode = badMode(path, options?.mode)
        if (wrongMode !== undefined) return yield* wrongMode
        switch (target.kind) {
          case "missing": {
            const absolute = yield* createParents(target, path, "write")
            return yield* Effect.mapError(
              fs.writeFileAtomic(absolute, content, options?.mode),
              ioError("write", path),
            )
          }
          case "file": {
            const mode =
              options?.mode ?? (yield* Effect.mapError(fs.stat(target.absolute), ioError("write", path))).mode
            return yield* Effect.mapError(
              fs.writeFileAtomic(target.absolute, content, mode),
              ioError("write", path),
            )
          }
          default:
            return yield* notRegular(path, target.kind, "write")
        }
      }),

    createFiles,

    delete: (path) =>
      Effect.gen(function* () {
        const target = yield* resolve(path, "delete", "report")
        switch (target.kind) {
          case "missing":
            return false
          case "file":
          case "symlink":
            yield* Effect.mapError(fs.unlink(target.absolute), ioError("delete", path))
            return true
          default:
            return yield* notRegular(path, target.kind, "delete")
        }
      }),

    removeEmptyDirectory: (path) =>
      Effect.gen(function* () {
        const target = yield* resolve(path, "delete", "report")
        if (target.kind !== "directory") return false
        const removed = yield* Effect.either(fs.rmdir(target.absolute))
        if (Either.isRight(removed)) return true
        // Not empty (something else lives there now) or gone already: left as it is.
        if (
          removed.left.code === "ENOTEMPTY" ||
          removed.left.code === "EEXIST" ||
          removed.left.code === "ENOENT"
        )
          return false
        return yield* Effect.fail(ioError("delete", path)(removed.left))
      }),

    stat: (path) => stat(path),

    statMany: (paths) =>
      Effect.suspend(() => {
        const seen = new Map<string, ProbedEntry>()
        return Effect.forEach(paths, (path) => Effect.either(stat(path, seen)))
      }),

    list: (directory) =>
      Effect.gen(function* () {
        const absolute = yield* directoryOf(directory)
        const entries = yield* Effect.mapError(fs.readdir(absolute), ioError("scan", directory ?? "."))
        return [...entries].sort(byName)
      }),

    scanDirectory: (directory) =>
      Effect.gen(function* () {
        const absolute = yield* directoryOf(directory)
        const entries = yield* Effect.mapError(fs.readdirStat(absolute), ioError("scan", directory ?? "."))
        return [...entries].sort(byName)
      }),

    scanDirectories: (directories) =>
      Effect.gen(function* () {
        if (fs.readdirStatBeneath === undefined) return yield* scanChecked(directories)
        // Well-formed paths go to the primitive; what it declines, and the rest, the checked way.
        const eligible = directories.flatMap((d, i) =>
          d === undefined || workspacePathProblem(d) === undefined ? [i] : [],
        )
        const direct = yield* fs.readdirStatBeneath(
          root,
          eligible.map((i) => directories[i] ?? ""),
        )
        const answers = new Map<number, Listing>()
        eligible.forEach((i, k) => {
          const entries = direct[k]
          if (entries !== undefined) answers.set(i, Either.right(sortedByName(entries)))
        })
        const rest = directories.flatMap((_, i) => (answers.has(i) ? [] : [i]))
        const checked = rest.length === 0 ? [] : yield* scanChecked(rest.map((i) => directories[i]))
        for (const [k, i] of rest.entries()) answers.set(i, checked[k]!)
        return directories.map((_, i) => answers.get(i)!)
      }),

    discardPartialWrites: (path) =>
      Effect.gen(function* () {
        // The path itself may be anything (a link is fine: only its directory is listed), but the
        // directories on the way are real ones.
        const target = yield* resolve(path, "delete", "report")
        // A write's temp file sits next to the file it writes.
        if (target.missing.length > 1) return []
        const absolute =
          target.missing.length === 1 ? `${target.existingParent}/${target.missing[0]}` : target.absolute
        const cut = absolute.lastIndexOf("/")
        const directory = absolute.slice(0, Math.max(1, cut))
        const name = absolute.slice(cut + 1)
        const relativeDirectory = target.relative.includes("/")
          ? target.relative.slice(0, target.relative.lastIndexOf("/") + 1)
          : ""
        // Listed beneath the root where the primitive can (the kernel refuses a link swapped in on
        // the way), by path otherwise; every removal goes through `unlink` either way.
        const beneath =
          fs.readdirStatBeneath === undefined
            ? undefined
            : (yield* fs.readdirStatBeneath(root, [relativeDirectory.slice(0, -1)]))[0]
        const entries: ReadonlyArray<DirectoryEntry> =
          beneath?.flatMap((e) =>
            e.unsupportedName === true ? [] : [{ name: e.name, kind: e.stat.kind }],
          ) ?? (yield* Effect.mapError(fs.readdir(directory), ioError("delete", path)))
        const removed: Array<WorkspacePath> = []
        for (const entry of entries) {
          if (entry.kind !== "file" || !fs.isPartialWrite(entry.name, name)) continue
          yield* Effect.mapError(
            fs.unlink(`${directory === "/" ? "" : directory}/${entry.name}`),
            ioError("delete", path),
          )
          removed.push(`${relativeDirectory}${entry.name}` as WorkspacePath)
        }
        return removed
      }),

    readLink: (path) =>
      Effect.gen(function* () {
        const target = yield* resolve(path, "readlink", "report")
        if (target.kind !== "symlink") {
          return yield* new WorkspaceIoError({
            operation: "readlink",
            path,
            code: "EINVAL",
            message: `${JSON.stringify(path)} is ${target.kind === "missing" ? "missing" : `a ${target.kind}`}, not a symlink`,
          })
        }
        return yield* Effect.mapError(fs.readlink(target.absolute), ioError("readlink", path))
      }),

    symlink: (path, linkTarget) =>
      Effect.gen(function* () {
        const target = yield* resolve(path, "symlink", "report")
        if (target.kind !== "missing") {
          return yield* new WorkspaceIoError({
            operation: "symlink",
            path,
            code: "EEXIST",
            message: `${JSON.stringify(path)} already exists`,
          })
        }
        yield* checkSymlinkTarget(path, target.relative.split("/").slice(0, -1), linkTarget)
        const absolute = yield* createParents(target, path, "symlink")
        return yield* Effect.mapError(fs.symlink(absolute, linkTarget), ioError("symlink", path))
      }),
  } satisfies WorkspaceService
}
