/**
 * A Workspace built from a filesystem's primitive operations: the semantics every adapter shares
 * (which paths are refused, what a read of a directory does, that a write keeps the file's mode,
 * that a delete never removes a directory or a symlink's target) live here once, and an adapter
 * supplies only the primitives (Node's `fs`, an in-memory tree). Every path handed to a primitive
 * has been confined by `resolveConfined` first, so a primitive never sees a path outside the root;
 * the exceptions, `readdirStatBeneath` and `readFilesBeneath`, are handed paths relative to the
 * root for the operating system to confine as it opens them.
 *
 * No symlink is ever followed (DESIGN §5): a link in a directory component refuses the path
 * (`symlink_in_path`), a read or write of a link refuses it too, and delete, stat and readLink act
 * on the link itself. A primitive that meets a link the walk did not see (another process swapped
 * one in) fails with `ELOOP` or `EXDEV`, and the workspace answers `symlink_in_path` for it as
 * well, so a race and a planted link read the same to the caller.
 */
import { Effect, Option } from "effect"
import type { WorkspaceService } from "../ports/Workspace.js"
import {
  type ConfinedRoot,
  listDirectory,
  readLink,
  readMany,
  readPath,
  scanDirectories,
  scanDirectoriesSealed,
  scanDirectory,
  statMany,
  statPath,
} from "./confinedReads.js"
import {
  createFiles,
  deletePath,
  discardPartialWrites,
  makeSymlink,
  removeEmptyDirectory,
  writePath,
} from "./confinedWrites.js"
import type { FileSystemPrimitives } from "./filesystemPrimitives.js"
import { locateRepository } from "./repository.js"

export type { FileSystemPrimitives, PrimitiveFailure } from "./filesystemPrimitives.js"

/**
 * Builds the Workspace service over an absolute, symlink-free root and its primitives. The walk
 * and the reads are in `confinedReads.ts`, the writes in `confinedWrites.ts`; this only binds them
 * to one root.
 */
export const makeConfinedWorkspace = (
  root: string,
  fs: FileSystemPrimitives,
  options: {
    /**
     * Directories the search for the root's repository does not go up into (git's
     * `GIT_CEILING_DIRECTORIES`; the Node adapter adds the home directory): see `repository.ts`.
     */
    readonly repositoryCeilings?: ReadonlyArray<string>
  } = {},
): WorkspaceService => {
  const at: ConfinedRoot = { root, fs }
  return {
    root,
    read: (path, options) => readPath(at, path, undefined, options),
    readMany: (paths) => readMany(at, paths),
    write: (path, content, options) => writePath(at, path, content, options),
    createFiles: (files) => createFiles(at, files),
    delete: (path) => deletePath(at, path),
    removeEmptyDirectory: (path) => removeEmptyDirectory(at, path),
    stat: (path) => statPath(at, path),
    statMany: (paths) => statMany(at, paths),
    list: (directory) => listDirectory(at, directory),
    scanDirectory: (directory) => scanDirectory(at, directory),
    scanDirectories: (directories) => scanDirectories(at, directories),
    ...(fs.readdirStatBeneath === undefined
      ? {}
      : {
          scanDirectoriesSealed: (directories, statFree) =>
            scanDirectoriesSealed(at, directories, statFree, fs.readdirStatBeneath!),
        }),
    discardPartialWrites: (path) => discardPartialWrites(at, path),
    readLink: (path) => readLink(at, path),
    symlink: (path, linkTarget) => makeSymlink(at, path, linkTarget),
    repository: locateRepository(root, fs, options.repositoryCeilings),
    ...(fs.sealBeneath === undefined
      ? {}
      : {
          sealListings: (directories, statFree) =>
            Effect.map(fs.sealBeneath!(root, directories, statFree), Option.fromNullable),
        }),
  } satisfies WorkspaceService
}
