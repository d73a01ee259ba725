/**
 * The live engine's picture of the workspace between captures: what the last scan listed (every
 * in-scope entry with its stat, every listed directory with its rules, every path decided out of
 * scope, what was reported skipped), patched path by path from a watcher's change set instead of
 * being scanned again.
 *
 * Invariant: after `applyChanges` succeeds, the tree is what a full scan would list now — the same
 * entries, scopes, exclusions and skipped reports — provided the change set was complete (the
 * port's promise). Every path named is re-examined from the disk with the decisions a scan would
 * take: its parent's rules, the protection names, the skip list, nested repositories; a directory
 * named loses everything below it and is scanned again. When a patch cannot be made with the same
 * certainty — an ignore file changed (its rules reach below it), a subtree scan read an ignore
 * file or hit its budget or an unreadable directory, a stat failed, a name is not a workspace
 * path, the files git tracks or the ignore files above the root changed, or a change reaches a
 * tracked file the rules exclude (the scan takes those its own way) — it answers "full" and the caller scans the whole tree.
 */
import {
  nameOf,
  parentOf,
  type SkippedPath,
  type WorkspacePath,
  workspacePathProblem,
} from "@rewind/contracts"
import { Effect, Either, Option } from "effect"
import { Workspace } from "../ports/Workspace.js"
import type { TrackedFiles } from "../workspace/gitIndex.js"
import { IGNORE_FILES, isExcluded, onSkipList } from "../workspace/ignoreRules.js"
import { nothingCanBeThere } from "../workspace/pathAbsence.js"
import { protectionByName } from "../workspace/protection.js"
import { currentRepository, repositoryIdentity } from "../workspace/repository.js"
import { type ScannedPath, type ScanResult, type ScanTree, scanSubtrees } from "./workspaceScan.js"

export interface LiveTree {
  readonly entries: Map<WorkspacePath, ScannedPath>
  readonly tree: ScanTree
  /** Scan reports by path (a path has at most one). */
  readonly skipped: Map<string, SkippedPath>
  /** The children of each listed directory that any of the maps above holds. */
  readonly children: Map<string, Set<string>>
  readonly rules: string
}

const addChild = (children: Map<string, Set<string>>, path: string) => {
  const parent = parentOf(path)
  let set = children.get(parent)
  if (set === undefined) {
    set = new Set()
    children.set(parent, set)
  }
  set.add(path)
}

/** Why a full scan cannot seed a live tree, or undefined when it can. */
export const unseedable = (scan: ScanResult, unwatchedNames: ReadonlySet<string>): string | undefined => {
  for (const s of scan.skipped) {
    if (s.reason === "budget") return "the last scan was cut short by its budget"
    if (s.reason === "unreadable") return `a directory could not be read (${s.path})`
  }
  for (const dir of scan.tree.scopes.keys())
    if (dir !== "" && unwatchedNames.has(nameOf(dir)))
      return `${dir} is in scope but the watcher does not watch directories named ${nameOf(dir)}`
  for (const path of scan.tree.beyond)
    for (let at = parentOf(path); at !== ""; at = parentOf(at))
      if (unwatchedNames.has(nameOf(at)))
        return `${path} is tracked by git but the watcher does not watch directories named ${nameOf(at)}`
  return undefined
}

/**
 * Whether a change at `path` can reach a tracked file the rules exclude (`keptAsTracked`): one
 * the scan took below an excluded path, a directory above one, or any tracked path the rules
 * exclude now. Such a change is left to a full scan, which takes those files the one way it
 * knows (`takeTracked`); they are few, and changes to them rare.
 */
const reachesTracked = (live: LiveTree, path: string, tracked: TrackedFiles | undefined) => {
  if (tracked === undefined) return false
  if (tracked.has(path)) return live.tree.beyond.has(path) || !live.tree.scopes.has(parentOf(path))
  for (const p of live.tree.beyond) if (p.startsWith(`${path}/`)) return true
  return false
}

/** The live tree of a full scan (one pass over what it found). */
export const seedTree = (scan: ScanResult): LiveTree => {
  const children = new Map<string, Set<string>>()
  const skipped = new Map<string, SkippedPath>()
  for (const path of scan.entries.keys()) addChild(children, path)
  for (const dir of scan.tree.scopes.keys()) if (dir !== "") addChild(children, dir)
  for (const path of scan.tree.excluded) addChild(children, path)
  for (const s of scan.skipped) {
    skipped.set(s.path, s)
    addChild(children, s.path)
  }
  return { entries: scan.entries, tree: scan.tree, skipped, children, rules: scan.rules }
}

/** Whether the tree decided `path` out of scope (`ScanResult.outOfScope`, over the live tree). */
export const outOfScopeIn =
  (live: LiveTree, stores: ReadonlyArray<string>) =>
  (path: string): boolean | undefined => {
    if (protectionByName(path, stores) !== undefined) return true
    for (let at = path; at !== ""; at = parentOf(at)) if (live.tree.excluded.has(at)) return true
    return live.tree.scopes.has(parentOf(path)) ? false : undefined
  }

/** Removes `path` and everything below it; entry paths removed are added to `touched`. */
const removeSubtree = (live: LiveTree, path: string, touched: Set<WorkspacePath>) => {
  const pending = [path]
  while (pending.length > 0) {
    const at = pending.pop()!
    if (live.entries.delete(at as WorkspacePath)) touched.add(at as WorkspacePath)
    live.tree.scopes.delete(at)
    live.tree.excluded.delete(at)
    live.skipped.delete(at)
    const below = live.children.get(at)
    if (below !== undefined) {
      for (const child of below) pending.push(child)
      live.children.delete(at)
    }
  }
  live.children.get(parentOf(path))?.delete(path)
}

/** Merges a subtree scan into the tree; "full" when it cannot stand in for a full scan's part. */
const mergeSubtree = (live: LiveTree, scan: ScanResult, touched: Set<WorkspacePath>): "full" | undefined => {
  if (scan.tree.ignoreFiles > 0 || scan.tree.beyond.size > 0) return "full"
  if (scan.skipped.some((s) => s.reason === "budget" || s.reason === "unreadable")) return "full"
  for (const [path, entry] of scan.entries) {
    live.entries.set(path, entry)
    touched.add(path)
    addChild(live.children, path)
  }
  for (const [dir, scope] of scan.tree.scopes) {
    live.tree.scopes.set(dir, scope)
    addChild(live.children, dir)
  }
  for (const path of scan.tree.excluded) {
    live.tree.excluded.add(path)
    addChild(live.children, path)
  }
  for (const s of scan.skipped) {
    live.skipped.set(s.path, s)
    addChild(live.children, s.path)
  }
  return undefined
}

/**
 * Re-examines every changed path (see the header). `touched` receives every path whose entry may
 * differ from before (removed or (re)listed). Mutates the tree: on "full" it must be dropped.
 */
export const applyChanges = (
  live: LiveTree,
  changed: ReadonlyArray<string>,
  stores: ReadonlyArray<string>,
  budget: { readonly maxFiles: number; readonly deadlineMs: number },
): Effect.Effect<{ readonly touched: Set<WorkspacePath> } | "full", never, Workspace> =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const repository = yield* currentRepository
    const tracked = repository?.tracked
    // The tracked files or outer rules the scan applied are not the repository's now: its
    // decisions are stale (nothing watches the index or the ignore files above the root).
    if (repositoryIdentity(repository) !== live.tree.repository) return "full" as const
    const touched = new Set<WorkspacePath>()
    const unique = [...new Set(changed)]
    for (const path of unique) {
      if (path === "" || workspacePathProblem(path) !== undefined) return "full" as const
      if (reachesTracked(live, path, tracked)) return "full" as const
      // An ignore file's rules reach below its directory, and a `.git` appearing or going makes or
      // unmakes a nested repository: both change decisions beyond the path itself.
      if (IGNORE_FILES.includes(nameOf(path)) || nameOf(path) === ".git") return "full" as const
    }
    // Shallowest first: a directory scanned again covers every change below it.
    unique.sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0))
    const rescanned = new Set<string>()
    const underRescan = (path: string) => {
      for (let at = parentOf(path); at !== ""; at = parentOf(at)) if (rescanned.has(at)) return true
      return false
    }
    for (const path of unique) {
      if (underRescan(path)) continue
      const parent = parentOf(path)
      const scope = live.tree.scopes.get(parent)
      // Not in a listed directory: out of scope (or gone, which its own change reports).
      if (scope === undefined) continue
      removeSubtree(live, path, touched)
      touched.add(path as WorkspacePath)
      const stat = yield* Effect.either(workspace.stat(path as WorkspacePath))
      if (Either.isLeft(stat)) {
        if (nothingCanBeThere(stat.left)) continue
        return "full" as const
      }
      if (Option.isNone(stat.right)) continue
      const found = stat.right.value
      addChild(live.children, path)
      if (protectionByName(path, stores) !== undefined) {
        live.tree.excluded.add(path)
        continue
      }
      if (found.kind === "directory") {
        const byRules = isExcluded(scope, path, true, repository)
        const skipped = !byRules && onSkipList(scope, path)
        // The scan takes the tracked files below an excluded directory its own way.
        if ((byRules || skipped) && tracked !== undefined && tracked.atOrBelow(path).length > 0)
          return "full" as const
        if (byRules) live.tree.excluded.add(path)
        else if (skipped) {
          live.tree.excluded.add(path)
          live.skipped.set(path, {
            path,
            reason: "skipped_directory",
            detail: `${nameOf(path)} is on the built-in skip list`,
          })
        } else {
          live.children.get(parent)?.delete(path)
          const scan = yield* Effect.either(scanSubtrees(budget, [{ dir: path, rules: scope }]))
          if (Either.isLeft(scan) || mergeSubtree(live, scan.right, touched) === "full")
            return "full" as const
          // A nested repository is excluded by the scan; either way the path is a child here.
          addChild(live.children, path)
          rescanned.add(path)
        }
        continue
      }
      if (isExcluded(scope, path, false, repository)) {
        live.tree.excluded.add(path)
        continue
      }
      if (found.kind === "symlink") {
        const target = yield* Effect.either(workspace.readLink(path as WorkspacePath))
        if (Either.isLeft(target)) return "full" as const
        live.entries.set(path as WorkspacePath, { stat: found, target: target.right })
      } else live.entries.set(path as WorkspacePath, { stat: found })
    }
    return { touched }
  })
