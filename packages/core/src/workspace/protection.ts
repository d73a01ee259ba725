/**
 * The protection policy: the one place that says which workspace paths Rewind must never record,
 * capture, restore over or delete. Every entry point asks it — recording a checkpoint, declared
 * paths, the scan, direct and cascade restores, preview/apply, point restores, fork restores,
 * rewind by fork, redo and recover — so the answer cannot differ between them.
 *
 * Protected are:
 * - `store`: Rewind's own store — any `.rewind` directory, and wherever the host's store directory
 *   lies inside the root (`StoreLocation`, supplied by the layer that knows where the store is);
 * - `vcs`: a `.git` directory or file at any depth (a worktree's or submodule's `.git` file too),
 *   and everything under one: another tool's history is never ours to write; and the working files
 *   of a nested repository (a directory below the root holding `.git`), which the scan never enters;
 * - `ignored`: what the ignore rules exclude (`ignoreRules.ts`, `ignoreCheck.ts`), since rules apply both ways;
 * - `escaping_link`: a symlink whose target leads outside the root (`linkProtection`). No restore
 *   makes one (a later write through it would leave the root), so none takes one away or retargets
 *   it either: no redo could make it again. It stays as it is, and a point's link of that kind is
 *   not made; either way the path is reported kept, never a reason to refuse the whole restore.
 *
 * The first two are decided from the path alone (`protectionByName`, no I/O); the third reads
 * ignore files through the Workspace; the fourth is decided from the path and a link's target.
 */
import type { ProtectedPath, WorkspacePath } from "@rewind/contracts"
import { Context, Effect, Option } from "effect"
import { symlinkTargetEscape } from "./confinedPathResolution.js"
import { type KnownStats, makeIgnoreCheck } from "./ignoreCheck.js"

/**
 * Where the store lies inside the workspace, as workspace-relative directories (empty when it lies
 * outside). The layer that opens the store provides it; without it only `.rewind` directories are
 * known to be a store.
 */
export class StoreLocation extends Context.Tag("@rewind/core/StoreLocation")<
  StoreLocation,
  { readonly directories: ReadonlyArray<string> }
>() {}

/** The store directory's default name: protected at any depth. */
export const STORE_DIRECTORY_NAME = ".rewind"

export const VCS_NAME = ".git"

const isUnder = (path: string, directory: string) =>
  directory !== "" && (path === directory || path.startsWith(`${directory}/`))

/**
 * `store` or `vcs` protection decided from the path alone; `storeDirectories` are the
 * workspace-relative store locations besides `.rewind`.
 */
export const protectionByName = (
  path: string,
  storeDirectories: ReadonlyArray<string> = [],
): ProtectedPath | undefined => {
  const segments = path.split("/")
  const vcs = segments.indexOf(VCS_NAME)
  if (vcs !== -1) {
    const at = segments.slice(0, vcs + 1).join("/")
    return {
      path,
      kind: "vcs",
      message:
        at === path
          ? `${path} is a repository's .git: Rewind never records or writes it`
          : `${path} is inside the repository data ${at}: Rewind never records or writes it`,
    }
  }
  const store = segments.indexOf(STORE_DIRECTORY_NAME)
  const configured = storeDirectories.find((d) => isUnder(path, d))
  if (store !== -1 || configured !== undefined) {
    const at = configured ?? segments.slice(0, store + 1).join("/")
    return {
      path,
      kind: "store",
      message: `${path} is Rewind's own store (${at}): never recorded or written`,
    }
  }
  return undefined
}

/**
 * `escaping_link` protection of the link at `path` to `target` (the one standing there, or the one
 * a point has there); undefined when the link stays inside the root.
 */
export const linkProtection = (path: string, target: string): ProtectedPath | undefined => {
  const why = symlinkTargetEscape(path.split("/").slice(0, -1), target)
  return why === undefined
    ? undefined
    : {
        path,
        kind: "escaping_link",
        message: `${path} is a link to ${JSON.stringify(target)} (${why}): no restore makes, removes or retargets such a link`,
      }
}

/** The store directories the current layer declared (none when it declared nothing). */
export const storeDirectories = Effect.map(Effect.serviceOption(StoreLocation), (o) =>
  Option.match(o, { onNone: () => [] as ReadonlyArray<string>, onSome: (s) => s.directories }),
)

/**
 * A checker for one operation: `store`/`vcs` by name, then the ignore rules (ignore files read once
 * per directory for the checker's life, so a plan of a thousand paths reads each directory's rules
 * once). Build one per operation: ignore files may change between operations.
 */
export const makeProtectionCheck = (known?: KnownStats) =>
  Effect.gen(function* () {
    const stores = yield* storeDirectories
    const ignored = yield* makeIgnoreCheck(known)
    return (path: WorkspacePath, isDirectory = false): Effect.Effect<Option.Option<ProtectedPath>> =>
      Effect.gen(function* () {
        const byName = protectionByName(path, stores)
        if (byName !== undefined) return Option.some(byName)
        const exclusion = yield* ignored(path, isDirectory)
        return Option.map(
          exclusion,
          (e): ProtectedPath =>
            e.by === "nested_repository"
              ? {
                  path,
                  kind: "vcs",
                  message: `${path} is inside the nested repository ${e.directory}, which Rewind leaves alone`,
                }
              : {
                  path,
                  kind: "ignored",
                  message:
                    e.by === "skip_list"
                      ? `${path} is inside ${e.directory}, which Rewind never touches`
                      : `${path} is excluded by the ignore rules of ${e.rulesOf === "" ? "the workspace root" : e.rulesOf}`,
                },
        )
      })
  })

/**
 * The protected paths among `paths`, each with its reason (unprotected paths are left out).
 * `known`: stats the caller took in bulk already (see `KnownStats`), so a check of a whole tree
 * does not stat every directory's ignore files and `.git` again.
 */
export const checkProtection = (paths: Iterable<WorkspacePath>, known?: KnownStats) =>
  Effect.gen(function* () {
    const check = yield* makeProtectionCheck(known)
    const found = new Map<WorkspacePath, ProtectedPath>()
    for (const path of paths) {
      const p = yield* check(path)
      if (Option.isSome(p)) found.set(path, p.value)
    }
    return found as ReadonlyMap<WorkspacePath, ProtectedPath>
  })
