/**
 * The Workspace port: the only way core touches the user's files. Every operation is confined to
 * the workspace root: paths are `WorkspacePath`s (relative, normalised), and an adapter re-checks
 * each one and resolves symlinks component by component so that no read or write ever leaves the
 * root, not even through a symlink inside it. Writes are atomic (temp file + rename in the same
 * directory) and keep the file's permission bits.
 */
import type {
  DirectoryEntry,
  FileStat,
  PathRefused,
  WorkspaceIoError,
  WorkspacePath,
} from "@rewind/contracts"
import { Context, type Effect, type Either, type Option } from "effect"

export interface WorkspaceFile {
  readonly content: Uint8Array
  /** Permission bits of the file (`st_mode & 0o7777`). */
  readonly mode: number
}

export interface WorkspaceWriteOptions {
  /** Permission bits for the file; by default an existing file keeps its own, a new one gets the default. */
  readonly mode?: number
}

/** One entry of a directory with its `lstat` (never followed), as a bulk scan reports it. */
export interface ScannedEntry {
  readonly name: string
  readonly stat: FileStat
  /** The link's target as stored, for a symlink. */
  readonly target?: string
  /**
   * True when the entry's name is not valid UTF-8: `name` is then an escaped display form that no
   * real name can equal, and the entry cannot be addressed by a workspace path (a scan reports it).
   */
  readonly unsupportedName?: boolean
}

export type WorkspaceError = PathRefused | WorkspaceIoError

export interface WorkspaceService {
  /** The root directory, for messages; never used to build paths outside the adapter. */
  readonly root: string
  /**
   * The content of a regular file, following symlinks that stay inside the root; `None` when
   * nothing exists at the path. A directory, FIFO or device is refused (`not_a_regular_file`).
   */
  readonly read: (path: WorkspacePath) => Effect.Effect<Option.Option<WorkspaceFile>, WorkspaceError>
  /**
   * `read` of several files at once, each with its own answer, in the order given: the bulk form a
   * capture reads a batch with. Paths are confined exactly as `read` confines them, but a
   * directory met on the way is checked once per call rather than once per path (a thousand
   * files in one directory cost one check of it, not a thousand).
   */
  readonly readMany: (
    paths: ReadonlyArray<WorkspacePath>,
  ) => Effect.Effect<ReadonlyArray<Either.Either<Option.Option<WorkspaceFile>, WorkspaceError>>>
  /**
   * Replaces (or creates) a regular file atomically, creating missing parent directories. Writing
   * through a symlink writes its target, which must resolve inside the root.
   */
  readonly write: (
    path: WorkspacePath,
    content: Uint8Array,
    options?: WorkspaceWriteOptions,
  ) => Effect.Effect<void, WorkspaceError>
  /** Removes a file or a symlink (never its target, never a directory); false when nothing was there. */
  readonly delete: (path: WorkspacePath) => Effect.Effect<boolean, WorkspaceError>
  /** What is at the path itself (a symlink is reported as a symlink); `None` when nothing is. */
  readonly stat: (path: WorkspacePath) => Effect.Effect<Option.Option<FileStat>, WorkspaceError>
  /** The entries of a directory (the root when no path is given), sorted by name. */
  readonly list: (directory?: WorkspacePath) => Effect.Effect<ReadonlyArray<DirectoryEntry>, WorkspaceError>
  /**
   * The entries of a directory (the root when no path is given) with their `lstat` and, for
   * symlinks, their targets, in one call: the bulk operation a snapshot scan is built on, so its
   * cost per file is one `lstat`, not a confined walk. Sorted by name.
   */
  readonly scanDirectory: (
    directory?: WorkspacePath,
  ) => Effect.Effect<ReadonlyArray<ScannedEntry>, WorkspaceError>
  /**
   * `scanDirectory` of several directories at once (`undefined` is the root), each with its own
   * answer, in the order given. A scan lists a whole level of the tree this way, so the per-call
   * overhead is paid per level rather than per directory (and an adapter may overlap the calls).
   */
  readonly scanDirectories: (
    directories: ReadonlyArray<WorkspacePath | undefined>,
  ) => Effect.Effect<ReadonlyArray<Either.Either<ReadonlyArray<ScannedEntry>, WorkspaceError>>>
  /** The target of a symlink, as stored. */
  readonly readLink: (path: WorkspacePath) => Effect.Effect<string, WorkspaceError>
  /**
   * Creates a symlink at a path where nothing exists. The target must be relative and resolve
   * inside the root (`symlink_escape` otherwise), so a restore can never plant a way out.
   */
  readonly symlink: (path: WorkspacePath, target: string) => Effect.Effect<void, WorkspaceError>
  /**
   * Removes what an atomic write of `path` left behind when its process died between creating its
   * temp file and renaming it into place (recovery calls this for every file of an interrupted
   * restore, so a crash leaves no stray file in the user's tree). Returns the paths removed.
   */
  readonly discardPartialWrites: (
    path: WorkspacePath,
  ) => Effect.Effect<ReadonlyArray<WorkspacePath>, WorkspaceError>
}

export class Workspace extends Context.Tag("@rewind/core/Workspace")<Workspace, WorkspaceService>() {}
