/**
 * The primitives a filesystem adapter supplies to the confined workspace (`FileSystemPrimitives`),
 * and how their failures read to a caller. Every path handed to a primitive has been confined
 * first, except `readdirStatBeneath`'s and `readFilesBeneath`'s, which the operating system confines
 * as it opens them. A
 * primitive failing with `ELOOP` or `EXDEV` met a symlink the walk did not see: it is answered as
 * `symlink_in_path`, so a race and a planted link read the same to the caller.
 */
import {
  aFileKind,
  type DirectoryEntry,
  type FileKind,
  type FileStat,
  PathRefused,
  WorkspaceIoError,
} from "@rewind/contracts"
import type { Effect, Either } from "effect"
import type {
  ListingSeal,
  ScannedEntry,
  StatFree,
  WorkspaceError,
  WorkspaceFile,
  WorkspaceReadOptions,
} from "../ports/Workspace.js"
import type { ProbedEntry } from "./confinedPathResolution.js"

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
  /**
   * Optional: the entry at a whole absolute path under the root, walked by the system without
   * following a link anywhere on it, or undefined when it cannot say so (see `probeWhole` in
   * confinedPathResolution.ts). An adapter without it is walked a component at a time.
   */
  readonly probeWhole?: (absolute: string) => Effect.Effect<ProbedEntry | undefined, PrimitiveFailure>
  /** `lstat` of an existing entry. */
  readonly stat: (absolute: string) => Effect.Effect<FileStat, PrimitiveFailure>
  /**
   * The bytes of a regular file anywhere (a symlink in the last component is not followed): only
   * for what the root's repository keeps outside the root, its index and ignore files
   * (`repository.ts`), which are read and never written. Without it those reads go through
   * `readFile`, which a filesystem may confine to the root.
   */
  readonly readOutsideRoot?: (absolute: string) => Effect.Effect<Uint8Array, PrimitiveFailure>
  /**
   * `readOutsideRoot`, done at once: for a file a caller may never need and cannot wait for when it
   * does (the index, parsed only when a decision turns on the tracked set: `repository.ts`).
   * Optional: without it such a file is read when it is found.
   */
  readonly readOutsideRootNow?: (absolute: string) => Either.Either<Uint8Array, PrimitiveFailure>
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
   * A listing is `undefined` for a directory not listed that way, for whatever reason: the
   * workspace then resolves and lists it as usual, which gives the answer (or the error) it owes.
   * Given `statFree`, each listing taken is also sealed as `sealBeneath` would seal the same
   * directories (`seal`: a check per directory, in order; those not listed that way, or not
   * sealed, in its `failed`; undefined when it cannot tell, and always without `statFree`): a
   * capture's scan then serves its seal too, without listing the tree again. Optional.
   */
  readonly readdirStatBeneath?: (
    root: string,
    relatives: ReadonlyArray<string>,
    statFree?: StatFree,
  ) => Effect.Effect<{
    readonly listings: ReadonlyArray<ReadonlyArray<ScannedEntry> | undefined>
    readonly seal: ListingSeal | undefined
  }>
  /**
   * `readFile` of files given relative to the root, each opened by name in its directory, which
   * the operating system opened beneath the root without following a symlink anywhere on its path
   * (as for `readdirStatBeneath`; one descriptor serves a run of files of the same directory).
   * `undefined` for a file not read that way, for whatever reason (missing, not a regular file, a
   * symlink on the way or in its name, changing while it was read): the workspace then reads it the
   * walked way, which gives the answer (or the error) it owes. Optional.
   */
  readonly readFilesBeneath?: (
    root: string,
    relatives: ReadonlyArray<string>,
  ) => Effect.Effect<ReadonlyArray<WorkspaceFile | undefined>>
  /**
   * The workspace's `sealListings` over directories given relative to the root, each opened
   * beneath it as `readdirStatBeneath` opens one; `undefined` when it cannot be told (the root not
   * opened). Optional: without it no capture is sealed.
   */
  readonly sealBeneath?: (
    root: string,
    relatives: ReadonlyArray<string>,
    statFree: StatFree,
  ) => Effect.Effect<ListingSeal | undefined>
  readonly readlink: (absolute: string) => Effect.Effect<string, PrimitiveFailure>
  readonly symlink: (absolute: string, target: string) => Effect.Effect<void, PrimitiveFailure>
  /**
   * Whether a directory entry is the temp file of an interrupted `writeFileAtomic` of `target` in
   * the same directory (always false for a filesystem whose writes leave no temp file).
   */
  readonly isPartialWrite: (entryName: string, targetName: string) => boolean
}

export type Operation = WorkspaceIoError["operation"]

export const ioError =
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

export const notRegular = (path: string, kind: FileKind, doing: string) =>
  new PathRefused({
    path,
    reason: "not_a_regular_file",
    message: `refused to ${doing} ${JSON.stringify(path)}: it is ${aFileKind(kind)}, not a regular file`,
  })

export const byName = (a: { readonly name: string }, b: { readonly name: string }) =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : 0

/**
 * Entries in name order: the array itself when it already is. A primitive that keeps listings
 * hands back the same array for a directory that did not change, and a scan can then recognise
 * it by identity and reuse what it derived from it last time.
 */
export const sortedByName = <A extends { readonly name: string }>(
  entries: ReadonlyArray<A>,
): ReadonlyArray<A> => {
  for (let i = 1; i < entries.length; i++) {
    if (byName(entries[i - 1]!, entries[i]!) > 0) return [...entries].sort(byName)
  }
  return entries
}

/** The refusal of a mode that is not a permission mode (0 to 0o7777), or undefined for a good one. */
export const badMode = (path: string, mode: number | undefined) =>
  mode !== undefined && !(Number.isInteger(mode) && mode >= 0 && mode <= 0o7777)
    ? new WorkspaceIoError({
        operation: "write",
        path,
        code: "EINVAL",
        message: `mode ${String(mode)} is not a permission mode`,
      })
    : undefined
