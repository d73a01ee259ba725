/**
 * What one scan (`workspaceScan.ts`) accumulates, and the steps that take a directory's listing
 * into it: refuse a nested repository, read the directory's own ignore files, decide each child
 * (protected, reused, excluded, skip-listed, queued or taken), and finally the result. The state is
 * mutable and belongs to one scan only; every step runs in queue order, so the result is the same
 * whatever the wave size.
 */
import { parentOf, type SkippedPath, type WorkspacePath, workspacePathProblem } from "@rewind/contracts"
import { Effect, Either, Option } from "effect"
import { once } from "../internal/once.js"
import { type ScannedEntry, Workspace } from "../ports/Workspace.js"
import { hashContent } from "../workspace/contentHash.js"
import {
  BUILT_IN_SKIP,
  IGNORE_FILES,
  isExcluded,
  onSkipList,
  pushRules,
  type RuleStack,
  readDirectoryRules,
} from "../workspace/ignoreRules.js"
import { protectionByName, STORE_DIRECTORY_NAME, VCS_NAME } from "../workspace/protection.js"
import { type Repository, repositoryIdentity } from "../workspace/repository.js"
import type {
  ScanBudget,
  ScanListingSeals,
  ScannedPath,
  ScanResult,
  ScanReuse,
  ScanStart,
  ScanTree,
} from "./workspaceScan.js"

type Stores = Parameters<typeof protectionByName>[1]

/** Decisions taken from `ScanReuse`, with the rule stack in force where each was taken. */
export interface Provisional {
  readonly rules: Array<RuleStack>
  readonly paths: Array<string>
  readonly directory: Array<boolean>
}

export interface ScanState {
  readonly budget: ScanBudget
  readonly reuse: ScanReuse | undefined
  readonly stores: Stores
  readonly entries: Map<WorkspacePath, ScannedPath>
  readonly skipped: Array<SkippedPath>
  // Directories whose listing was read, and paths decided out of scope inside them.
  readonly listed: Set<string>
  readonly excluded: Set<string>
  ignored: number
  directories: number
  reusedDecisions: number
  readonly identity: Array<string>
  // One entry per reused path (nearly every path of a repeat scan), so kept as columns, not objects.
  readonly provisional: Provisional
  readonly scopes: Map<string, RuleStack>
  queue: Array<{ dir: string; rules: RuleStack }>
  /** The repository around the root (`repository.ts`): its tracked files, part of the identity. */
  readonly repository: Repository | undefined
  /** Nested repositories met: a tracked path inside one stays out (it is not a rule). */
  readonly nested: Set<string>
  /** Tracked files taken below what the rules excluded (see `takeTracked`), present or not. */
  readonly beyond: Set<string>
  /** The excluded directories they lie under (what a reused decision must not take as in scope). */
  readonly trackedOnly: Set<string>
  /** Directories decided but not listed: the caller knows their listings (`scanSubtrees`). */
  readonly kept: ReadonlySet<string> | undefined
}

export const newScanState = (
  budget: ScanBudget,
  reuse: ScanReuse | undefined,
  stores: Stores,
  start: ReadonlyArray<ScanStart>,
  repository: Repository | undefined,
  kept?: ReadonlySet<string>,
): ScanState => ({
  budget,
  reuse,
  stores,
  entries: new Map(),
  skipped: [],
  listed: new Set(),
  excluded: new Set(),
  ignored: 0,
  directories: 0,
  reusedDecisions: 0,
  identity: [],
  provisional: { rules: [], paths: [], directory: [] },
  scopes: new Map(),
  queue: [...start],
  repository,
  nested: new Set(),
  beyond: new Set(),
  trackedOnly: new Set(),
  kept,
})

export const outOfBudget = (state: ScanState, dir: string, detail: string) =>
  state.skipped.push({ path: dir === "" ? "." : dir, reason: "budget", detail })

const join = (dir: string, name: string) => (dir === "" ? name : `${dir}/${name}`)

/**
 * The paths of a listing's entries, by listing. An adapter that keeps listings returns the same
 * (immutable) array for a directory that has not changed, so a repeat scan reuses the path
 * strings it built last time instead of building thousands again; and because they are the very
 * strings the previous manifest and stat cache were keyed by, the capture's lookups in those maps
 * are cheap too. Only a cache: a listing seen for the first time gets its paths built.
 */
const pathsOfListing = new WeakMap<
  ReadonlyArray<ScannedEntry>,
  { readonly dir: string; readonly paths: ReadonlyArray<string> }
>()

const pathsOf = (dir: string, children: ReadonlyArray<ScannedEntry>): ReadonlyArray<string> => {
  const known = pathsOfListing.get(children)
  if (known !== undefined && known.dir === dir) return known.paths
  const paths = children.map((c) => join(dir, c.name))
  pathsOfListing.set(children, { dir, paths })
  return paths
}

const provisionally = (state: ScanState, scope: RuleStack, path: string, isDirectory: boolean) => {
  state.provisional.rules.push(scope)
  state.provisional.paths.push(path)
  state.provisional.directory.push(isDirectory)
}

/**
 * Takes one listed directory into the scan (a nested repository is left out whole). Synchronous
 * for a directory holding no ignore file (nearly all of them), which is taken directly rather than
 * through an Effect per directory.
 */
export const takeListing = (
  state: ScanState,
  dir: string,
  rules: RuleStack,
  children: ReadonlyArray<ScannedEntry>,
): Effect.Effect<void, never, Workspace> | undefined => {
  // A nested repository belongs to someone else's history: leave it alone entirely.
  if (dir !== "" && children.some((c) => c.name === ".git")) {
    state.ignored++
    state.excluded.add(dir)
    state.nested.add(dir)
    state.skipped.push({
      path: dir,
      reason: "skipped_directory",
      detail: "a nested repository (it holds .git)",
    })
    return undefined
  }
  state.directories++
  state.listed.add(dir)
  const present = ignoreFilesOf(children)
  if (present === undefined) {
    takeScope(state, dir, rules, children)
    return undefined
  }
  return Effect.map(ownRules(state, dir, present), (own) =>
    takeScope(state, dir, pushRules(rules, own), children),
  )
}

const takeScope = (
  state: ScanState,
  dir: string,
  scope: RuleStack,
  children: ReadonlyArray<ScannedEntry>,
) => {
  state.scopes.set(dir, scope)
  takeChildren(state, dir, scope, children)
}

type IgnoreFile = { name: string; size: number; regular: boolean }

/** The directory's own ignore files; undefined when it holds none. */
const ignoreFilesOf = (children: ReadonlyArray<ScannedEntry>): Array<IgnoreFile> | undefined => {
  // A loop, not a flatMap (which made an empty array per child): most hold no ignore file.
  let present: Array<IgnoreFile> | undefined
  for (const c of children) {
    if (!IGNORE_FILES.includes(c.name) || c.stat.kind === "directory") continue
    if (present === undefined) present = []
    present.push({ name: c.name, size: c.stat.size, regular: c.stat.kind === "file" })
  }
  return present
}

/** The rules of a directory's own ignore files (to push on its parent's). */
const ownRules = (state: ScanState, dir: string, present: ReadonlyArray<IgnoreFile>) =>
  Effect.gen(function* () {
    const own = yield* readDirectoryRules(dir, present)
    for (const line of own.identity) state.identity.push(line)
    for (const r of own.refused)
      state.skipped.push({ path: r.path, reason: "ignore_file_refused", detail: r.detail })
    return own.rules
  })

const takeChildren = (
  state: ScanState,
  dir: string,
  scope: RuleStack,
  children: ReadonlyArray<ScannedEntry>,
) => {
  const { budget, reuse, entries, excluded, stores } = state
  const paths = pathsOf(dir, children)
  // The directory itself is not protected, so a child is protected by name exactly when its own
  // name is `.git` or the store's, or it is itself a configured store directory (one above it would
  // be above the directory too): only then is its whole path checked, which splits it.
  const byPath = dir !== "" && protectionByName(dir, stores) !== undefined
  for (let c = 0; c < children.length; c++) {
    const child = children[c]!
    const path = paths[c]!
    if (child.unsupportedName === true) {
      state.skipped.push({ path, reason: "unsupported_name", detail: "the name is not valid UTF-8" })
      continue
    }
    const name = child.name
    if (
      (byPath || name === VCS_NAME || name === STORE_DIRECTORY_NAME || stores?.includes(path) === true) &&
      protectionByName(path, stores) !== undefined
    ) {
      // `.git` (a directory, or a worktree's file) and the store: never in scope.
      state.ignored++
      excluded.add(path)
      continue
    }
    if (child.stat.kind === "directory") {
      takeDirectory(state, scope, path, name)
      continue
    }
    const reused = reuse?.fileInScope(path) === true
    if (reused) {
      state.reusedDecisions++
      provisionally(state, scope, path, false)
    } else if (isExcluded(scope, path, false, state.repository)) {
      state.ignored++
      excluded.add(path)
      continue
    }
    if (entries.size >= budget.maxFiles) {
      // Counted per entry: a huge directory cannot take the whole budget and then some.
      outOfBudget(
        state,
        dir,
        `file-count budget spent after ${entries.size} entries; the rest of this directory was not taken`,
      )
      return
    }
    if (unsupportedPath(state, path)) continue
    // The listed entry is itself a ScannedPath: nothing is allocated per file here.
    entries.set(path as WorkspacePath, child)
  }
}

/**
 * Whether an in-scope path has a name the filesystem allows but a workspace path does not (a
 * control character, `\`): reported as `unsupported_name` with the reason, where it would
 * otherwise reach a read that refuses it and read as an unreadable file. Asked only of what the
 * ignore rules keep, so an ignored oddity stays silent like any ignored path.
 */
const unsupportedPath = (state: ScanState, path: string): boolean => {
  const problem = workspacePathProblem(path)
  if (problem === undefined) return false
  state.skipped.push({ path, reason: "unsupported_name", detail: problem })
  return true
}

/** A child directory: queued (reused or in scope), or excluded (ignored or skip-listed). */
const takeDirectory = (state: ScanState, scope: RuleStack, path: string, name: string) => {
  if (state.reuse !== undefined && !BUILT_IN_SKIP.has(name) && state.reuse.directoryInScope(path)) {
    state.reusedDecisions++
    provisionally(state, scope, path, true)
    state.queue.push({ dir: path, rules: scope })
  } else if (isExcluded(scope, path, true, state.repository)) {
    state.ignored++
    state.excluded.add(path)
  } else if (onSkipList(scope, path)) {
    state.ignored++
    state.excluded.add(path)
    state.skipped.push({
      path,
      reason: "skipped_directory",
      detail: `${name} is on the built-in skip list`,
    })
  } else if (!unsupportedPath(state, path) && state.kept?.has(path) !== true)
    state.queue.push({ dir: path, rules: scope })
}

/**
 * The tracked files the listing did not take because a rule or the skip list excluded them or a
 * directory above them (`keptAsTracked`: they are the repository's files all the same). Each is
 * stat'ed on its own, after the listing: they are few, and listing an excluded directory to find
 * them would list everything git ignores there. A tracked path inside a nested repository, under
 * a protected name, or below a directory the scan did not list (budget, unreadable, absent) is
 * not one of them. Paths absent from the disk are remembered too (`beyond`), so a live engine
 * knows a change there is one the rules alone would miss.
 */
export const takeTracked = (state: ScanState): Effect.Effect<void, never, Workspace> | undefined => {
  const { entries, excluded, stores } = state
  // Nothing below an excluded path was listed, so no excluded path lies below another: each is
  // looked up once in the index, and only the tracked paths below one are ever decoded. The
  // tracked set is asked for only when some excluded path can hold tracked files (`.git` and
  // nested repositories cannot), so a listing that excluded nothing else parses no index.
  const tops = [...excluded].filter(
    (top) => !state.nested.has(top) && protectionByName(top, stores) === undefined,
  )
  const tracked = tops.length === 0 ? undefined : state.repository?.tracked
  if (tracked === undefined) return undefined
  const candidates: Array<WorkspacePath> = []
  for (const top of tops) {
    for (const path of tracked.atOrBelow(top)) {
      if (entries.has(path as WorkspacePath) || protectionByName(path, stores) !== undefined) continue
      if (workspacePathProblem(path) !== undefined) continue
      candidates.push(path as WorkspacePath)
      state.beyond.add(path)
      if (top !== path) state.trackedOnly.add(top)
    }
  }
  if (candidates.length === 0) return undefined
  return Effect.gen(function* () {
    const workspace = yield* Workspace
    const stats = yield* workspace.statMany(candidates)
    for (let i = 0; i < candidates.length; i++) {
      const path = candidates[i]!
      const stat = stats[i]!
      // Gone, under a link, or a directory now: nothing to take (a previous point's copy becomes a
      // tombstone through the capture's tracking, as for any file that went).
      if (Either.isLeft(stat) || Option.isNone(stat.right)) continue
      const found = stat.right.value
      if (entries.size >= state.budget.maxFiles) {
        outOfBudget(
          state,
          parentOf(path),
          "file-count budget spent before the tracked files under ignored paths",
        )
        return
      }
      if (found.kind === "symlink") {
        const target = yield* Effect.either(workspace.readLink(path))
        // A link that cannot be read went between the stat and here: as if gone.
        if (Either.isRight(target)) entries.set(path, { stat: found, target: target.right })
      } else if (found.kind !== "directory") {
        // A file, or a FIFO, socket or device where git tracks a file: taken as the listing takes
        // it, so the point reports what it cannot hold (`not_a_regular_file`), never silently.
        entries.set(path, { stat: found })
      }
    }
  })
}

/** The scan's result, and the decisions it took on trust (for `scanWorkspace` to check). */
export const finishScan = (
  state: ScanState,
  listingSeals?: ScanListingSeals,
): { scan: ScanResult; provisional: Provisional } => {
  const { entries, skipped, listed, excluded, identity, stores, ignored, reusedDecisions } = state
  const outOfScope = (path: string): boolean | undefined => {
    if (protectionByName(path, stores) !== undefined) return true
    // Out of scope when the path or a directory above it was excluded; decided when its
    // directory was listed; unknown otherwise.
    for (let at = path; at !== ""; at = parentOf(at)) if (excluded.has(at)) return true
    return listed.has(parentOf(path)) ? false : undefined
  }
  const ignoreFiles = identity.length
  // The identity holds the repository's, and so the hash of its tracked set: made when first asked
  // for, so a scan of a few changed directories that no caller asks it of (`sealedCapture.ts`)
  // leaves the index unparsed (`repository.ts`). Nothing the scan holds changes after this.
  // (What they need is taken out of `state` first: a kept tree, a live engine's, keeps no more.)
  const { repository, trackedOnly } = state
  const rulesOf = once(() => {
    const lines = [...identity, ...(repository?.identity ?? [])].sort()
    // The directories taken for their tracked files only follow the hash in the clear: a reused
    // decision must not read them as in scope (`scanReuse.ts`), and they are part of the identity.
    return [hashContent(lines.join("\n")), ...[...trackedOnly].sort()].join("\n")
  })
  const repositoryOf = once(() => repositoryIdentity(repository))
  const tree: ScanTree = {
    scopes: state.scopes,
    excluded,
    ignoreFiles,
    get repository() {
      return repositoryOf()
    },
    beyond: state.beyond,
  }
  const scan: ScanResult = {
    entries,
    skipped,
    ignored,
    outOfScope,
    get rules() {
      return rulesOf()
    },
    reusedDecisions,
    tree,
    ...(listingSeals === undefined ? {} : { listingSeals }),
  }
  return { scan, provisional: state.provisional }
}
