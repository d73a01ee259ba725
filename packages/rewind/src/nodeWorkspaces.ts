/**
 * The Workspaces port over Node's filesystem, for isolated forks in the embedded default: new trees
 * are staged beside their target and renamed into place (`nodeTreeStaging.ts`), trees are opened
 * as confined Node workspaces (one per root, kept for the process), and files are cloned copy-on-write with
 * `COPYFILE_FICLONE_FORCE`, which fails rather than copy where the filesystem cannot clone (ext4,
 * tmpfs): the caller then writes the stored bytes. Never a hard link. A clone goes to a temporary
 * name in the target directory and is renamed into place; every directory on both paths is checked
 * with `lstat` to be a real directory first, and the caller reads the clone back through the
 * confined workspace and checks its hash before trusting it.
 */
import {
  chmodSync,
  constants,
  copyFileSync,
  lstatSync,
  mkdirSync,
  realpathSync,
  renameSync,
  rmSync,
} from "node:fs"
import { join, resolve } from "node:path"
import { NodeWorkspace } from "@rewind/adapter-fs"
import { WorkspaceIoError, type WorkspacePath } from "@rewind/contracts"
import type { OpenedWorkspace, WorkspacesService } from "@rewind/core"
import { Effect } from "effect"
import { makeTreeStaging } from "./nodeTreeStaging.js"

/** Codes `FICLONE` fails with where the filesystem (or the pair of them) cannot clone. */
const CANNOT_CLONE = new Set(["ENOTSUP", "EOPNOTSUPP", "EXDEV", "ENOSYS", "EINVAL", "ENOTTY"])

const codeOf = (e: unknown) => (e as { code?: string }).code

const ioError = (operation: "write" | "stat", path: string, e: unknown) =>
  new WorkspaceIoError({
    operation,
    path,
    message: e instanceof Error ? e.message : String(e),
    ...(codeOf(e) === undefined ? {} : { code: codeOf(e)! }),
  })

/** Every directory from `root` down to `path`'s parent is a real directory (no link on the way). */
const realDirectoriesOnTheWay = (root: string, path: WorkspacePath): boolean => {
  const parts = path.split("/")
  let at = root
  for (const part of parts.slice(0, -1)) {
    at = join(at, part)
    const s = lstatSync(at, { throwIfNoEntry: false })
    if (s === undefined) return false
    if (!s.isDirectory()) return false
  }
  return true
}

let cloneCounter = 0

export interface NodeWorkspacesOptions {
  readonly hostRoot: string
  readonly durability?: "fsync" | "atomic"
  /** The store directories inside a tree (workspace-relative), for the protection policy. */
  readonly storeDirectoriesOf: (root: string) => ReadonlyArray<string>
}

export const makeNodeWorkspaces = (options: NodeWorkspacesOptions): WorkspacesService => {
  const opened = new Map<string, OpenedWorkspace>()
  const real = (p: string) => {
    try {
      return realpathSync(p)
    } catch {
      return resolve(p)
    }
  }
  const hostRoot = real(options.hostRoot)
  return {
    hostRoot,
    ...makeTreeStaging(options.durability),
    open: (root) =>
      Effect.suspend(() => {
        const known = opened.get(root)
        if (known !== undefined) return Effect.succeed(known)
        return Effect.map(
          NodeWorkspace.make(
            root,
            options.durability === undefined ? {} : { durability: options.durability },
          ),
          (workspace) => {
            const entry = { workspace, storeDirectories: options.storeDirectoriesOf(workspace.root) }
            opened.set(root, entry)
            return entry
          },
        )
      }),
    clone: (sourceRoot, targetRoot, path, mode) =>
      Effect.try({
        try: () => {
          const from = join(sourceRoot, path)
          const to = join(targetRoot, path)
          const source = lstatSync(from, { throwIfNoEntry: false })
          if (source === undefined || !source.isFile() || !realDirectoriesOnTheWay(sourceRoot, path))
            return false
          const parts = path.split("/")
          let at = targetRoot
          for (const part of parts.slice(0, -1)) {
            at = join(at, part)
            const s = lstatSync(at, { throwIfNoEntry: false })
            if (s === undefined) mkdirSync(at)
            else if (!s.isDirectory()) return false
          }
          if (lstatSync(to, { throwIfNoEntry: false }) !== undefined) return false
          const temp = `${to}.rewind-clone-${process.pid}-${cloneCounter++}`
          try {
            copyFileSync(from, temp, constants.COPYFILE_FICLONE_FORCE | constants.COPYFILE_EXCL)
          } catch (e) {
            rmSync(temp, { force: true })
            if (CANNOT_CLONE.has(codeOf(e) ?? "")) return false
            throw e
          }
          try {
            chmodSync(temp, mode)
            renameSync(temp, to)
          } catch (e) {
            rmSync(temp, { force: true })
            throw e
          }
          return true
        },
        catch: (e) => ioError("write", path, e),
      }),
  }
}
