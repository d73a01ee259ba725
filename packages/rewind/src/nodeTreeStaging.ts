/**
 * The staging half of the Node Workspaces (`nodeWorkspaces.ts`): a new tree is written into a
 * private directory beside its target and renamed into place in one step, so a crash or a second
 * fork racing into the same target never leaves a partial tree there (the port's header says the
 * contract).
 *
 * Where: `<parent>/.<name>.rewind-<operationId>`, made with `mkdir` (which fails if anything is
 * there) and mode 0700, so no other user can plant anything in it while it is filled; the target's
 * parent and every existing directory above it must be real directories (checked with `realpath`
 * at `prepare`, and again right before `stage` and `publish` act), so neither the private
 * directory nor the target can land anywhere but where they are named. The target must not exist
 * or be an empty directory; the published tree takes the empty directory's mode, or the default
 * one for a new directory (0777 less the umask).
 *
 * `rename(2)` of a directory replaces an empty directory and fails on a full one: of two forks
 * racing into one target the first to publish wins and the second is refused (`taken`). Two forks
 * of an *empty* tree are the case this cannot tell apart (the second rename replaces the first's
 * empty directory); docs/forks.md says so.
 */
import {
  chmodSync,
  closeSync,
  constants,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmSync,
} from "node:fs"
import { basename, dirname, isAbsolute, join, resolve } from "node:path"
import { NodeWorkspace } from "@rewind/adapter-fs"
import { type Refused, refuse, WorkspaceIoError } from "@rewind/contracts"
import type { StagedTree, StagedTreeState, WorkspacesService } from "@rewind/core"
import { Effect } from "effect"

const codeOf = (e: unknown) => (e as { code?: string }).code

const ioError = (operation: "write" | "stat" | "delete", path: string, e: unknown) =>
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

const realOrSelf = (p: string) => {
  try {
    return realpathSync(p)
  } catch {
    return p
  }
}

const refused = (reason: string, root: string, message: string) =>
  refuse("workspace_refused", message, { reason, root })

/** Refuses when an existing directory on the way to `path` is, or is reached through, a symlink. */
const checkNoLinkOnTheWay = (path: string, root: string): Effect.Effect<void, Refused> => {
  const ancestor = existingAncestor(path)
  const real = realOrSelf(ancestor)
  return real === ancestor
    ? Effect.void
    : refused(
        "symlink_in_path",
        root,
        `${root} is reached through a symbolic link (${ancestor} resolves to ${real}); name the real directory`,
      )
}

const isEmptyDirectory = (path: string) => readdirSync(path).length === 0

/** What is at the target: nothing, an empty directory (its mode), or something that refuses it. */
const targetState = (root: string) => {
  const stat = lstatSync(root, { throwIfNoEntry: false })
  if (stat === undefined) return { kind: "missing" as const }
  if (!stat.isDirectory()) return { kind: "not_a_directory" as const }
  if (!isEmptyDirectory(root)) return { kind: "occupied" as const }
  return { kind: "empty" as const, mode: stat.mode & 0o7777 }
}

/** `targetState` with an unreadable target (no permission, say) as an I/O error, not a defect. */
const lookAt = (root: string) =>
  Effect.try({ try: () => targetState(root), catch: (e) => ioError("stat", root, e) })

const flushDirectory = (directory: string) => {
  const fd = openSync(directory, constants.O_RDONLY | constants.O_DIRECTORY)
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

export type TreeStaging = Pick<
  WorkspacesService,
  "prepare" | "stage" | "publish" | "discard" | "unpublish" | "inspect"
>

export const makeTreeStaging = (durability: "fsync" | "atomic" | undefined): TreeStaging => {
  /** Trees this process published, by target: the inode it published (what `unpublish` takes back). */
  const published = new Map<string, bigint>()
  const workspaceOptions = durability === undefined ? {} : { durability }
  return {
    prepare: (root, operationId) =>
      Effect.suspend((): Effect.Effect<StagedTree, Refused | WorkspaceIoError> => {
        if (!isAbsolute(root)) {
          return refused(
            "not_absolute",
            root,
            `${root} is not an absolute path; name the new tree's directory in full`,
          )
        }
        const lexical = resolve(root)
        if (dirname(lexical) === lexical) {
          return refused("not_empty", lexical, `${lexical} cannot hold a new tree`)
        }
        return Effect.flatMap(checkNoLinkOnTheWay(lexical, lexical), () =>
          Effect.flatMap(lookAt(lexical), (state): Effect.Effect<StagedTree, Refused> => {
            if (state.kind === "not_a_directory") {
              return refused("not_a_directory", lexical, `${lexical} exists and is not a directory`)
            }
            if (state.kind === "occupied") {
              return refused(
                "not_empty",
                lexical,
                `${lexical} is not empty; an isolated fork's tree goes into a new or empty directory, so nothing there is overwritten`,
              )
            }
            const staging = join(dirname(lexical), `.${basename(lexical)}.rewind-${operationId}`)
            return Effect.succeed({ root: lexical, staging })
          }),
        )
      }),

    stage: (tree) =>
      Effect.gen(function* () {
        const parent = dirname(tree.root)
        yield* Effect.try({
          try: () => mkdirSync(parent, { recursive: true }),
          catch: (e) => ioError("write", parent, e),
        })
        // The parents were checked at `prepare`; one swapped for a link since is refused here.
        yield* checkNoLinkOnTheWay(parent, tree.root)
        const made = yield* Effect.try({
          try: () => {
            mkdirSync(tree.staging, 0o700)
            return true
          },
          catch: (e) => (codeOf(e) === "EEXIST" ? undefined : ioError("write", tree.staging, e)),
        }).pipe(
          Effect.catchIf(
            (e) => e === undefined,
            () => Effect.succeed(false),
          ),
        )
        if (!made) {
          return yield* refused(
            "taken",
            tree.root,
            `${tree.staging} already exists: another fork is materialising into ${tree.root}`,
          )
        }
        // Made here and not handed out: removed here when no workspace can be opened over it.
        return yield* NodeWorkspace.make(tree.staging, workspaceOptions).pipe(
          Effect.tapError(() => Effect.sync(() => rmSync(tree.staging, { recursive: true, force: true }))),
        )
      }),

    publish: (tree) =>
      Effect.gen(function* () {
        const parent = dirname(tree.root)
        yield* checkNoLinkOnTheWay(parent, tree.root)
        const taken = () =>
          refused(
            "taken",
            tree.root,
            `${tree.root} was filled while the fork's tree was being written (another fork into the same directory?); nothing of this fork was left there`,
          )
        const state = yield* lookAt(tree.root)
        if (state.kind === "occupied" || state.kind === "not_a_directory") return yield* taken()
        const renamed = yield* Effect.try({
          try: () => {
            chmodSync(tree.staging, state.kind === "empty" ? state.mode : 0o777 & ~process.umask())
            const inode = lstatSync(tree.staging, { bigint: true }).ino
            renameSync(tree.staging, tree.root)
            if (durability === "fsync") flushDirectory(parent)
            published.set(tree.root, inode)
            return true
          },
          catch: (e) =>
            ["ENOTEMPTY", "EEXIST", "ENOTDIR", "EISDIR"].includes(codeOf(e) ?? "")
              ? undefined
              : ioError("write", tree.root, e),
        }).pipe(
          Effect.catchIf(
            (e) => e === undefined,
            () => Effect.succeed(false),
          ),
        )
        if (!renamed) return yield* taken()
      }),

    discard: (tree) =>
      Effect.try({
        try: () => {
          const stat = lstatSync(tree.staging, { throwIfNoEntry: false })
          if (stat === undefined) return false
          // Removed whole; `rm` unlinks a link it meets and never follows it.
          rmSync(tree.staging, { recursive: true, force: true })
          return true
        },
        catch: (e) => ioError("delete", tree.staging, e),
      }),

    unpublish: (tree) =>
      Effect.try({
        try: () => {
          const inode = published.get(tree.root)
          const stat = lstatSync(tree.root, { bigint: true, throwIfNoEntry: false })
          if (inode === undefined || stat === undefined || !stat.isDirectory() || stat.ino !== inode)
            return false
          renameSync(tree.root, tree.staging)
          published.delete(tree.root)
          rmSync(tree.staging, { recursive: true, force: true })
          return true
        },
        catch: (e) => ioError("delete", tree.root, e),
      }),

    inspect: (tree) =>
      Effect.try({
        try: (): StagedTreeState => {
          const staging =
            lstatSync(tree.staging, { throwIfNoEntry: false }) === undefined ? "missing" : "present"
          const state = targetState(tree.root)
          return {
            staging,
            root: state.kind === "missing" ? "missing" : state.kind === "empty" ? "empty" : "occupied",
          }
        },
        catch: (e) => ioError("stat", tree.root, e),
      }),
  }
}
