/**
 * The bounded scan of a capture: walks the workspace a level at a time through the bulk
 * `scanDirectories` operation (one `lstat` per entry, symlinks never followed, so a linked
 * directory is recorded as a link and never descended), applying the one ignore-rule module
 * (`workspace/ignoreRules.ts`) at every level and a file-count and time budget counted per entry.
 * The next wave of queued directories is listed while one is taken in (a workspace that lists off
 * the main thread overlaps the two); what the scan answers does not depend on it. Asked to
 * (`sealWith`), it seals each listing as it takes it (`ScanResult.listingSeals`, `scanSeal.ts`),
 * and it tells a caller each entry once its wave is taken in (`onEntry`: a capture reads files
 * meanwhile, `pointBuild.ts`'s `readDuringScan`).
 *
 * Never in scope, and not reported: what the ignore rules exclude (but a file git tracks, which no
 * rule excludes: `takeTracked` stats those after the listing), and what the protection policy
 * keeps out by name (`.git` anywhere, Rewind's store). Left out and reported (DESIGN §7: never
 * silent): directories on the built-in skip list that the ignore rules neither exclude already nor
 * re-include explicitly with a `!` rule (then they are the repository's own files and scanned),
 * nested repositories (`skipped_directory`, once per directory), ignore files refused by their
 * budget (`ignore_file_refused`), names that are not valid UTF-8 or that a workspace path cannot
 * hold, such as a control character or `\` (`unsupported_name`), and what the
 * budget or an unreadable directory left out.
 *
 * Ignore decisions are reused (`ScanReuse`): testing every path against the rule sets above it is
 * most of a repeat scan's work, and almost always repeats the previous capture's answer. A path
 * the previous capture held as a file or link (or a directory above one) is taken as in scope
 * without asking the rules, provisionally; the scan records the identity of every ignore file it
 * applied (path, content hash, applied or refused), and when that identity differs from the one
 * the reused decisions were made under, each provisional answer is asked of the rules in force
 * (and if one does not stand, the scan runs again deciding everything). Equal identity means every directory's rule stack is the one that
 * decided last time, so the reused answer is the answer the rules give now. The identity covers
 * the files git tracks too, and the directories taken only for their tracked files follow it in
 * the clear, so a reused decision never takes one of those as in scope. Names on the skip list,
 * protected names and nested repositories are always decided afresh (they are cheap).
 */
import type { FileStat, SkippedPath, WorkspacePath } from "@rewind/contracts"
import { nameOf, parentOf } from "@rewind/contracts"
import { Clock, Effect, Either, Fiber, Option } from "effect"
import {
  LISTING_CHECK_BYTES,
  type ListingSeal,
  type ScannedEntry,
  type StatFree,
  Workspace,
  type WorkspaceError,
} from "../ports/Workspace.js"
import {
  IGNORE_FILES,
  isExcluded,
  join,
  pushRules,
  type RuleStack,
  readDirectoryRules,
} from "../workspace/ignoreRules.js"
import { storeDirectories } from "../workspace/protection.js"
import { currentRepository, type Repository } from "../workspace/repository.js"
import { finishScan, newScanState, outOfBudget, takeListing, takeTracked } from "./scanState.js"

/** Directories listed in one call: few enough that their listings fit in memory together. */
const SCAN_WAVE = 256

export interface ScanBudget {
  readonly maxFiles: number
  /** Absolute Clock time (ms) after which no further directory is scanned. */
  readonly deadlineMs: number
}

/** Ignore decisions of a previous capture, offered for reuse (see the header). */
export interface ScanReuse {
  /** The `rules` identity of the scan that made these decisions. */
  readonly rules: string
  /** Whether the path was in scope then as a file or link (not excluded by the rules). */
  readonly fileInScope: (path: string) => boolean
  /** Whether the directory was in scope then (something in scope lay below it). */
  readonly directoryInScope: (path: string) => boolean
}

export interface ScannedPath {
  readonly stat: FileStat
  readonly target?: string
}

export interface ScanProgress {
  readonly directories: number
  readonly entries: number
}

export interface ScanResult {
  /** Every non-directory entry in scope: files, symlinks and `other` kinds. */
  readonly entries: Map<WorkspacePath, ScannedPath>
  readonly skipped: Array<SkippedPath>
  /** Ignored entries and skipped directories, for status (not reported one by one). */
  readonly ignored: number
  /**
   * Whether the scan decided a path is out of scope (ignored, protected, under a skipped
   * directory) — `undefined` when the scan did not list the path's directory (budget, unreadable),
   * so the caller must decide it another way.
   */
  readonly outOfScope: (path: string) => boolean | undefined
  /** The identity of the ignore files this scan applied (a hash): what `ScanReuse.rules` compares. */
  readonly rules: string
  /** How many ignore decisions were reused rather than asked of the rules. */
  readonly reusedDecisions: number
  /** The shape of what was listed, for a live engine to patch (`liveTree.ts`). */
  readonly tree: ScanTree
  /** The seal of the listings the scan took, when asked for (`scanWorkspace`'s `sealWith`). */
  readonly listingSeals?: ScanListingSeals
}

/**
 * The listings' seal a scan took with them: each directory's as `sealListings` would seal it, under
 * `statFree`, from the listing the scan decided by (what `scanSeal.ts` records instead of listing
 * the tree again).
 */
export interface ScanListingSeals {
  readonly statFree: StatFree
  /** The check (`ListingSeal.checks`) and newest ctime of a listed directory, where it was sealed. */
  readonly of: (directory: string) => { readonly check: Uint8Array; readonly newest: bigint } | undefined
}

/** What a scan decided about directories, kept so a later scan of one subtree can fit in. */
export interface ScanTree {
  /** Every directory listed and in scope ("" the root), with the rules in force for its entries. */
  readonly scopes: Map<string, RuleStack>
  /** Paths decided out of scope in a listed directory (ignored, protected, skipped directories). */
  readonly excluded: Set<string>
  /** How many ignore files the scan read. */
  readonly ignoreFiles: number
  /** The identity of what its repository contributed (`repository.ts`; "" without one). */
  readonly repository: string
  /** Tracked files taken below what the rules excluded, present or not (`takeTracked`). */
  readonly beyond: Set<string>
}

/** Where a scan starts: the root, or (a live engine) directories whose parents were listed before. */
export interface ScanStart {
  readonly dir: string
  readonly rules: RuleStack
}

export const scanWorkspace = (
  budget: ScanBudget,
  onProgress?: (p: ScanProgress) => void,
  reuse?: ScanReuse,
  /** Seal each listing too, where the workspace can (`ScanResult.listingSeals`). */
  sealWith?: StatFree,
  /**
   * Told each entry as its wave is taken in scope (a caller starts reading files meanwhile). A scan
   * run again (see below) tells its entries again; an entry told is in the answer only if the
   * answer holds that very entry.
   */
  onEntry?: (path: WorkspacePath, entry: ScannedPath) => void,
): Effect.Effect<ScanResult, WorkspaceError, Workspace> =>
  Effect.gen(function* () {
    const startedAt = yield* Clock.currentTimeMillis
    const repository = yield* currentRepository
    const { scan, provisional } = yield* scanOnce(repository, budget, onProgress, {
      reuse,
      sealWith,
      onEntry,
    })
    if (reuse === undefined || provisional.paths.length === 0 || scan.rules === reuse.rules) return scan
    // The reused decisions were made under other rules (or the scan saw only part of them, as when
    // a budget cut it short): ask the rules in force now about each one. The rule stacks they were
    // taken under are the ones the scan built from the ignore files it read, so when every answer
    // stands the scan is the one that decides everything. Only when one does not is the tree
    // scanned again, in a budget window of its own (the first may be spent).
    if (
      !provisional.paths.some((path, i) => {
        const directory = provisional.directory[i]!
        return isExcluded(provisional.rules[i]!, path, directory, repository)
      })
    )
      return scan
    const now = yield* Clock.currentTimeMillis
    const again = yield* scanOnce(
      repository,
      { ...budget, deadlineMs: now + (budget.deadlineMs - startedAt) },
      onProgress,
      { sealWith, onEntry },
    )
    return again.scan
  })

/**
 * Scans below the given directories only (each with the rules in force for its entries' parent),
 * deciding everything afresh: what a live engine runs for a directory that appeared. A directory
 * in `kept` is decided as ever but not listed (the caller knows its listing has not changed:
 * `sealedCapture.ts`); it is in neither `tree.scopes` nor `tree.excluded` unless the decision
 * excluded it.
 */
export const scanSubtrees = (
  budget: ScanBudget,
  start: ReadonlyArray<ScanStart>,
  kept?: ReadonlySet<string>,
): Effect.Effect<ScanResult, WorkspaceError, Workspace> =>
  Effect.flatMap(currentRepository, (repository) =>
    Effect.map(scanOnce(repository, budget, undefined, { start, kept }), ({ scan }) => scan),
  )

/**
 * Where a scan of each of `directories` starts (`ScanStart`): the rules in force for the entries
 * of its parent, built from the ignore files of every directory above it (found by a stat of each
 * ignore-file name there) over the repository's outer rules. For directories known to be in scope
 * (no nested repository or excluded directory above them: the caller's to know). `undefined` when
 * an ignore file on the way is refused: a scan from the root reports that, not this.
 */
export const startsAt = (
  directories: ReadonlyArray<string>,
): Effect.Effect<ReadonlyArray<ScanStart> | undefined, never, Workspace> =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const repository = yield* currentRepository
    const above = new Set<string>()
    for (const dir of directories)
      for (let at = dir; at !== ""; ) {
        at = parentOf(at)
        if (above.has(at)) break
        above.add(at)
      }
    const order = [...above].sort((a, b) => a.length - b.length)
    const candidates = order.flatMap((dir) => IGNORE_FILES.map((name) => join(dir, name) as WorkspacePath))
    const stats = yield* workspace.statMany(candidates)
    const present = new Map<string, Array<{ name: string; size: number; regular: boolean }>>()
    candidates.forEach((path, i) => {
      const stat = stats[i]!
      if (Either.isLeft(stat) || Option.isNone(stat.right) || stat.right.value.kind === "directory") return
      const dir = parentOf(path)
      const list = present.get(dir) ?? []
      list.push({
        name: nameOf(path),
        size: stat.right.value.size,
        regular: stat.right.value.kind === "file",
      })
      present.set(dir, list)
    })
    // The stack in force for the entries of each directory above, shallowest first.
    const scopes = new Map<string, RuleStack>()
    for (const dir of order) {
      const outer = dir === "" ? (repository?.outerRules ?? []) : scopes.get(parentOf(dir))!
      const own = present.get(dir)
      if (own === undefined) {
        scopes.set(dir, outer)
        continue
      }
      const rules = yield* readDirectoryRules(dir, own)
      if (rules.refused.length > 0) return undefined
      scopes.set(dir, pushRules(outer, rules.rules))
    }
    return directories.map((dir) =>
      dir === "" ? { dir, rules: repository?.outerRules ?? [] } : { dir, rules: scopes.get(parentOf(dir))! },
    )
  })

/**
 * One scan: directories are listed a wave at a time through the bulk `scanDirectories` (one call
 * per wave, not per directory); results are taken in queue order (`scanState.ts`).
 */
const scanOnce = (
  repository: Repository | undefined,
  budget: ScanBudget,
  onProgress: ((p: ScanProgress) => void) | undefined,
  {
    reuse,
    // From the root, under the rules that reach it from its repository (`repository.ts`).
    start = [{ dir: "", rules: repository?.outerRules ?? [] }],
    kept,
    sealWith,
    onEntry,
  }: {
    readonly reuse?: ScanReuse | undefined
    readonly start?: ReadonlyArray<ScanStart>
    readonly kept?: ReadonlySet<string>
    /** Seal each listing too, where the workspace can (`ScanResult.listingSeals`). */
    readonly sealWith?: StatFree | undefined
    /** Told each entry once its wave is taken in (`scanWorkspace`). */
    readonly onEntry?: ((path: WorkspacePath, entry: ScannedPath) => void) | undefined
  } = {},
) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const stores = yield* storeDirectories
    const state = newScanState(budget, reuse, stores, start, repository, kept)
    const sealing = sealWith === undefined ? undefined : workspace.scanDirectoriesSealed
    // Each sealed directory's seal (one per wave) and its index there.
    const sealedBy = new Map<string, readonly [ListingSeal, number]>()
    const list = (dirs: ReadonlyArray<WorkspacePath | undefined>) =>
      sealing === undefined
        ? workspace.scanDirectories(dirs)
        : Effect.map(sealing(dirs, sealWith!), ({ listings, seal }) => {
            if (seal !== undefined) {
              const failed = new Set(seal.failed ?? [])
              dirs.forEach((dir, w) => {
                if (!failed.has(w)) sealedBy.set(dir ?? "", [seal, w])
              })
            }
            return listings
          })
    // An ignore file above the root that was refused is reported as any refused ignore file is.
    if (start.some((s) => s.dir === ""))
      for (const r of repository?.refused ?? [])
        state.skipped.push({ path: r.path, reason: "ignore_file_refused", detail: r.detail })
    const { entries, skipped } = state
    // Entries are only ever added, in the map's order: a live iterator over it, advanced no further
    // than its size (an iterator that once answers done stays done), tells each one once.
    const fresh = onEntry === undefined ? undefined : entries.entries()
    let told = 0
    const tell = () => {
      if (fresh === undefined) return
      for (; told < entries.size; told++) {
        const [path, entry] = fresh.next().value!
        onEntry!(path, entry)
      }
    }
    type Wave = ReadonlyArray<{ readonly dir: string; readonly rules: RuleStack }>
    // The queue is taken from `head` on, and cut down only once its taken part is most of it: a
    // copy of the rest per wave was quadratic in a wide tree (52k directories at babel 4x).
    let head = 0
    const queued = () => state.queue.length - head
    const take = (): Wave => {
      const wave = state.queue.slice(head, head + SCAN_WAVE)
      head += wave.length
      if (head >= SCAN_WAVE * 16 && head * 2 >= state.queue.length) {
        state.queue = state.queue.slice(head)
        head = 0
      }
      return wave
    }
    const listWave = (wave: Wave) =>
      list(wave.map(({ dir }) => (dir === "" ? undefined : (dir as WorkspacePath))))
    // The next wave, listed while this one is taken in: a workspace that lists off the main thread
    // (the fs adapter's native scanner) lists it meanwhile. Only directories already queued are
    // listed ahead, each below one this scan took in scope, as they would be next anyway.
    let ahead: { readonly wave: Wave; readonly listed: Fiber.RuntimeFiber<Listings> } | undefined
    while (ahead !== undefined || queued() > 0) {
      const now = yield* Clock.currentTimeMillis
      if (now > budget.deadlineMs || entries.size >= budget.maxFiles) {
        const rest = [...(ahead?.wave ?? []), ...state.queue.slice(head)]
        if (ahead !== undefined) yield* Fiber.interrupt(ahead.listed)
        for (const { dir } of rest)
          outOfBudget(state, dir, now > budget.deadlineMs ? "time budget spent" : "file-count budget spent")
        break
      }
      let wave: Wave
      let listings: Listings
      if (ahead === undefined) {
        wave = take()
        listings = yield* listWave(wave)
      } else {
        wave = ahead.wave
        listings = yield* Fiber.join(ahead.listed)
        ahead = undefined
      }
      if (queued() > 0) {
        const next = take()
        ahead = { wave: next, listed: yield* Effect.fork(listWave(next)) }
        // Started now, not when this fiber next waits: its listing runs while this wave is taken in.
        yield* Effect.yieldNow()
      }
      for (let w = 0; w < wave.length; w++) {
        if (entries.size >= budget.maxFiles) {
          for (const rest of wave.slice(w)) outOfBudget(state, rest.dir, "file-count budget spent")
          break
        }
        const { dir, rules } = wave[w]!
        const listing = listings[w]!
        if (Either.isLeft(listing)) {
          if (dir === "") return yield* listing.left
          skipped.push({ path: dir, reason: "unreadable", detail: listing.left.message })
          continue
        }
        const reading = takeListing(state, dir, rules, listing.right)
        if (reading !== undefined) yield* reading
        onProgress?.({ directories: state.directories, entries: entries.size })
      }
      tell()
    }
    const beyond = takeTracked(state)
    if (beyond !== undefined) yield* beyond
    return finishScan(
      state,
      sealing === undefined
        ? undefined
        : {
            statFree: sealWith!,
            of: (directory) => {
              const at = sealedBy.get(directory)
              if (at === undefined) return undefined
              const [seal, w] = at
              return {
                check: seal.checks.subarray(w * LISTING_CHECK_BYTES, (w + 1) * LISTING_CHECK_BYTES),
                newest: seal.newestByDirectory[w]!,
              }
            },
          },
    )
  })

/** A wave's listings, in its order. */
type Listings = ReadonlyArray<Either.Either<ReadonlyArray<ScannedEntry>, WorkspaceError>>
