/**
 * The Workspace port: the only way core touches the user's files. Every operation is confined to
 * the workspace root: paths are `WorkspacePath`s (relative, normalised), and an adapter re-checks
 * each one component by component. No symlink is ever followed, inside the root or out (DESIGN
 * §5): a path with a symlink in any directory component is refused (`PathRefused`, reason
 * `symlink_in_path`) by every operation; `read` and `write` refuse a symlink in the last component
 * too, while `delete`, `stat` and `readLink` act on the link itself. So an entry is always at its
 * lexical place, root + path, and a restore can neither write through a link nor out of the root.
 * Writes are atomic (temp file + rename in the same directory, inside the root) and keep the
 * file's permission bits.
 *
 * Error codes a caller may act on (`WorkspaceIoError.code`): `ECHANGED` from `read`/`readMany`
 * when the file kept changing while it was read (its size, mtime or ctime moved during each of a
 * few attempts): nothing torn is ever returned; a capture reports it as `changed_during_read`.
 * `ENOTDIR` when a regular file sits where the path needs a directory.
 */
import type {
  ContentHash,
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
  /**
   * `hashContent(content)`, when the reader computed it over exactly these bytes as it read them
   * (the fs adapter's native reads hash on their own thread); absent otherwise. A capture hands it
   * to `putMany` so the main thread need not hash the content again.
   */
  readonly hash?: ContentHash
}

export interface WorkspaceReadOptions {
  /**
   * The bytes the caller has reason to believe the file now holds (an agent's tool said it wrote
   * them). A read whose bytes equal them cannot be a torn mix of two versions, so an adapter
   * that waits for a freshly changed file to settle may accept it at once; the checks that the
   * file held still while it was read still apply. Bytes that differ change nothing: the read
   * answers exactly as it would without them, with what the file really holds.
   */
  readonly expected?: Uint8Array
}

export interface WorkspaceWriteOptions {
  /** Permission bits for the file; by default an existing file keeps its own, a new one gets the default. */
  readonly mode?: number
}

/** One entry of a directory with its `lstat` (never followed), as a bulk scan reports it. */
export interface ScannedEntry {
  /**
   * The entry's name; for an `unsupportedName` entry, its escaped display form instead (each
   * byte that is not part of valid UTF-8 as `\xHH`, and a backslash as `\\`), which no real name
   * decodes to, so it never collides with one and is never a path to act on.
   */
  readonly name: string
  /**
   * True when the name on disk is not valid UTF-8: it cannot be named by a `WorkspacePath`, so a
   * scan reports it (`unsupported_name`) rather than capturing it or dropping it silently.
   */
  readonly unsupportedName?: true
  readonly stat: FileStat
  /** The link's target as stored, for a symlink. */
  readonly target?: string
}

export type WorkspaceError = PathRefused | WorkspaceIoError

/** One file of a bulk creation (`createFiles`). */
export interface NewFile {
  readonly path: WorkspacePath
  readonly content: Uint8Array
  /** The file's permission bits, exactly (the umask does not apply). */
  readonly mode: number
}

export interface WorkspaceService {
  /** The root directory, for messages; never used to build paths outside the adapter. */
  readonly root: string
  /**
   * The content of a regular file; `None` when nothing exists at the path. A directory, FIFO or
   * device is refused (`not_a_regular_file`), a symlink anywhere on the path, the last component
   * included, is refused (`symlink_in_path`): a read never follows a link. The content is one
   * the file really held: a file that changed while it was read is read again, and after a few
   * attempts the read fails with code `ECHANGED`. `options.expected`: see `WorkspaceReadOptions`.
   */
  readonly read: (
    path: WorkspacePath,
    options?: WorkspaceReadOptions,
  ) => Effect.Effect<Option.Option<WorkspaceFile>, WorkspaceError>
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
   * Replaces (or creates) a regular file atomically, creating missing parent directories. A
   * symlink at the path or on the way is refused (`symlink_in_path`): a write never replaces a
   * link or writes through one (a caller that means to replace a link deletes it first).
   */
  readonly write: (
    path: WorkspacePath,
    content: Uint8Array,
    options?: WorkspaceWriteOptions,
  ) => Effect.Effect<void, WorkspaceError>
  /**
   * The bulk "write a new tree" operation: creates each file new, in order, in a tree nobody else
   * uses yet (an isolated fork's private staging directory). Nothing may exist at a file's path
   * (`EEXIST`: an existing file is never replaced, a symlink there never followed); missing parent
   * directories are created, and the directories that exist on the way are confined as for
   * `write` (a symlink on the way is refused, `symlink_in_path`), each checked once per call. There
   * is no temp file and rename per file, which is what makes it cheaper than `write`; with durable
   * writes the files, and the directories they were added to, are flushed before it answers. It
   * stops at the first failure, leaving the files made before it (the caller discards the tree).
   * Links are not made here: a caller creates them with `symlink` after every file, so no file is
   * ever created under a link.
   */
  readonly createFiles: (files: ReadonlyArray<NewFile>) => Effect.Effect<void, WorkspaceError>
  /**
   * Removes a file or a symlink (never its target, never a directory); false when nothing was
   * there. A symlink in a directory component is refused (`symlink_in_path`).
   */
  readonly delete: (path: WorkspacePath) => Effect.Effect<boolean, WorkspaceError>
  /**
   * Removes a directory if it is empty (true); false when it is not empty, not a directory or not
   * there. What a failed restore uses to take away the directories it created; never recursive.
   */
  readonly removeEmptyDirectory: (path: WorkspacePath) => Effect.Effect<boolean, WorkspaceError>
  /** What is at the path itself (a symlink is reported as a symlink); `None` when nothing is. */
  readonly stat: (path: WorkspacePath) => Effect.Effect<Option.Option<FileStat>, WorkspaceError>
  /**
   * `stat` of several paths at once, each with its own answer, in the order given. Confined
   * exactly as `stat` is, with a directory met on the way checked once per call (as `readMany`
   * does): what a per-path ignore check uses to look for the ignore files and `.git` of every
   * directory above a path, which would otherwise walk from the root once per name.
   */
  readonly statMany: (
    paths: ReadonlyArray<WorkspacePath>,
  ) => Effect.Effect<ReadonlyArray<Either.Either<Option.Option<FileStat>, WorkspaceError>>>
  /**
   * The entries of a directory (the root when no path is given), sorted by name. A symlink to a
   * directory is not listed through (`symlink_in_path`), nor is one on the way.
   */
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
  /**
   * `scanDirectories`, with each listing also sealed as `sealListings` would seal it from the same
   * listing (`seal`, in the order given; a directory it could not seal, listed or not, is in its
   * `failed`; `undefined` when it cannot tell): what lets a capture seal its point from its own
   * scan instead of listing the tree a second time (`snapshot/scanSeal.ts`). Optional: without it
   * the capture lists again to seal.
   */
  readonly scanDirectoriesSealed?: (
    directories: ReadonlyArray<WorkspacePath | undefined>,
    statFree: StatFree,
  ) => Effect.Effect<{
    readonly listings: ReadonlyArray<Either.Either<ReadonlyArray<ScannedEntry>, WorkspaceError>>
    readonly seal: ListingSeal | undefined
  }>
  /** The target of a symlink, as stored. */
  readonly readLink: (path: WorkspacePath) => Effect.Effect<string, WorkspaceError>
  /**
   * Creates a symlink at a path where nothing exists (missing parents are created). The target
   * must be relative and stay inside the root lexically (`symlink_escape` otherwise), so a restore
   * can never plant a way out; a symlink on the way is refused (`symlink_in_path`).
   */
  readonly symlink: (path: WorkspacePath, target: string) => Effect.Effect<void, WorkspaceError>
  /**
   * Removes what an atomic write of `path` left behind when its process died between creating its
   * temp file and renaming it into place (recovery calls this for every file of an interrupted
   * restore, so a crash leaves no stray file in the user's tree). Returns the paths removed. A
   * symlink in a directory component is refused (`symlink_in_path`); one at the path itself is
   * fine (its directory is what is cleaned).
   */
  readonly discardPartialWrites: (
    path: WorkspacePath,
  ) => Effect.Effect<ReadonlyArray<WorkspacePath>, WorkspaceError>
  /**
   * The git repository the root lies in (none outside one): where its index and the ignore files
   * that reach the root from outside it are (`workspace/repository.ts`). Read-only; the one place
   * a workspace reads outside its root, since a repository's top, or a worktree's git directory,
   * lies elsewhere. Optional: a workspace without it has no tracked set and only its own ignore
   * files.
   */
  readonly repository?: Effect.Effect<Option.Option<RepositoryFiles>>
  /**
   * A check of each listing of these directories (workspace-relative, `""` the root; each opened
   * as `scanDirectories` opens one, no symlink on the way): every entry's name, kind and `lstat`
   * (size, mode, mtime, ctime, inode, a link's target), entries sorted by name. Equal checks, equal
   * listings. Entries named in `statFree.names`, or at a path in `statFree.paths`, count by name
   * and kind only (see `snapshot/scanSeal.ts`). Every directory is listed: one that cannot be (gone,
   * replaced, unreadable) is no failure but gets a zero check and its index in `failed`, since a
   * capture of what changed needs every check. `None` when it cannot be told at all (the adapter
   * cannot open the root or beneath it). Optional: without it no capture is sealed
   * (`snapshot/scanSeal.ts`), every repeat capture scans.
   */
  readonly sealListings?: (
    directories: ReadonlyArray<string>,
    statFree: StatFree,
  ) => Effect.Effect<Option.Option<ListingSeal>>
}

/** Entries a listing seal counts by name and kind only. */
export interface StatFree {
  /** Entry names, in any directory. */
  readonly names: ReadonlyArray<string>
  /** Workspace-relative paths. */
  readonly paths: ReadonlyArray<string>
}

/** The bytes of one directory's check in a `ListingSeal`. */
export const LISTING_CHECK_BYTES = 16

/** The newest ctime of a listing that counted no entry, or was not listed (the least int64). */
export const NO_CTIME = -(2n ** 63n)

/** What `sealListings` answers. */
export interface ListingSeal {
  /**
   * Per directory, in the order given, a check of its listing (the first 16 bytes of its SHA-256,
   * all zero for one that could not be listed): different checks, different listings; equal checks,
   * the same listing but for a chance of one in 2^128. What lets a capture list again only the
   * directories whose listing changed (`snapshot/sealedCapture.ts`).
   */
  readonly checks: Uint8Array
  /** The indices of the directories that could not be listed (gone, replaced, unreadable). */
  readonly failed?: ReadonlyArray<number>
  /**
   * Per directory, in the order given, the newest ctime of an entry counted with its stat, in ns
   * since the epoch (the racy check; the least bigint for an empty or failed listing).
   */
  readonly newestByDirectory: BigInt64Array
}

/** A file of the repository as found: a fingerprint of its stat, and its bytes when read. */
export interface RepositoryFile {
  /** Equal fingerprints: the same file, unchanged (path, size, mtime, ctime, inode). */
  readonly fingerprint: string
  /** Its bytes, or why they cannot be had (over a size limit, unreadable). */
  readonly read: Effect.Effect<Either.Either<Uint8Array, string>>
  /**
   * `read`, done at once, where the filesystem can (`FileSystemPrimitives.readOutsideRootNow`):
   * for a reader that may never need the bytes and cannot wait for them when it does.
   */
  readonly readNow?: () => Either.Either<Uint8Array, string>
}

export interface RepositoryFiles {
  /** The root's path below the repository's top ("" when its `.git` is at the root). */
  readonly prefix: string
  /** The index, when there is one. */
  readonly index?: RepositoryFile
  /**
   * Ignore files that apply from outside the root, lowest precedence first: `info/exclude`, then
   * the `.gitignore` of each directory from the top down to the root's parent. `at`: the
   * directory they apply from, relative to the top; `label`: how a report names them.
   */
  readonly outerIgnoreFiles: ReadonlyArray<{
    readonly at: string
    readonly label: string
    readonly file: RepositoryFile
  }>
}

export class Workspace extends Context.Tag("@rewind/core/Workspace")<Workspace, WorkspaceService>() {}
