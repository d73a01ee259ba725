/**
 * The Workspaces port over Node's filesystem, for isolated forks in the embedded default: new trees
 * are prepared (absolute, missing or empty, never reached through a symlink), opened as confined
 * Node workspaces (one per root, kept for the process), and files are cloned copy-on-write with
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
  readdirSync,
  realpathSync,
  renameSync,
  rmSync,
} from "node:fs"
import { dirname, isAbsolute, join, resolve } from "node:path"
import { NodeWorkspace } from "@rewind/adapter-fs"
import { type Refused, refuse, WorkspaceIoError, type WorkspacePath } from "@rewind/contracts"
import type { OpenedWorkspace, WorkspacesService } from "@rewind/core"
import { Effect } from "effect"

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

/** The deepest existing ancestor of `path` (itself included). */
const existingAncestor = (path: string): string => {
  let at = path
  while (lstatSync(at, { throwIfNoEntry: false }) === undefined) {
    const up = dirname(at)
    if (up === at) return at
    at = up
  }
  return at
}

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
    prepare: (root) =>
      Effect.suspend((): Effect.Effect<string, Refused | WorkspaceIoError> => {
        if (!isAbsolute(root)) {
          return refuse(
            "workspace_refused",
            `${root} is not an absolute path; name the new tree's directory in full`,
            {
              reason: "not_absolute",
              root,
            },
          )
        }
        const lexical = resolve(root)
        const ancestor = existingAncestor(lexical)
        if (real(ancestor) !== ancestor) {
          return refuse(
            "workspace_refused",
            `${lexical} is reached through a symbolic link (${ancestor} resolves to ${real(ancestor)}); name the real directory`,
            { reason: "symlink_in_path", root: lexical },
          )
        }
        const stat = lstatSync(lexical, { throwIfNoEntry: false })
        if (stat !== undefined) {
          if (!stat.isDirectory()) {
            return refuse("workspace_refused", `${lexical} exists and is not a directory`, {
              reason: "not_a_directory",
              root: lexical,
            })
          }
          if (readdirSync(lexical).length > 0) {
            return refuse(
              "workspace_refused",
              `${lexical} is not empty; an isolated fork's tree goes into a new or empty directory, so nothing there is overwritten`,
              { reason: "not_empty", root: lexical },
            )
          }
          return Effect.succeed(lexical)
        }
        return Effect.try({
          try: () => {
            mkdirSync(lexical, { recursive: true })
            return realpathSync(lexical)
          },
          catch: (e) => ioError("write", lexical, e),
        })
      }),
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
