/**
 * A capture of what changed since the base point's seal: when the seal's listing (`scanSeal.ts`)
 * shows that only some directories changed, those alone are listed and decided again (a scan that
 * starts at each and does not descend into a directory whose listing is unchanged), and the point
 * is the base point patched at the paths they hold (`pointPatch.ts`). A cold process then pays for
 * the listing of the tree's directories and for what changed, not for a scan of the whole tree.
 *
 * Why the patch is the point a full capture would take. A directory whose listing is unchanged
 * holds the same entries with the same stats as when the base point was sealed, and nothing above
 * it changed its rules: an ignore file is an entry of its directory's listing, and a directory
 * whose ignore file changed (or appeared, or went) makes this capture give way to a full scan, as
 * does a directory that became a nested repository or excluded, anything the scan of the changes
 * cannot vouch for (budget, unreadable, a refused ignore file, a file git tracks below an ignored
 * directory that the base seal's beyond table does not hold), a new directory holding an ignore
 * file (its rules would change the scan's identity), a base point without a stat cache, or more
 * than a quarter of the directories changed (the full scan is then as cheap). The changed
 * directories are listed afresh with the rules in force for them (`startsAt`), every child decided
 * as the full scan decides it; the base point's paths in them, and the ones tracked beyond a listed
 * directory whose nearest sealed directory changed, are tracked as a full capture tracks them. Of
 * the base point only those paths' entries are decoded; its stat cache is not read at all when the
 * changed directories hold few files (they are hashed again), and the new maps are stored as
 * deltas over the base's.
 *
 * The paths a capture of the changes re-examines are those whose nearest sealed directory above
 * them changed or was listed now (`underChanges`); every other path of the base point stands.
 */
import type { PointCaptured, PointKind, SkippedPath } from "@rewind/contracts"
import { parentOf, type WorkspacePath } from "@rewind/contracts"
import { Effect, Either, Option } from "effect"
import { Workspace } from "../ports/Workspace.js"
import { hashContent } from "../workspace/contentHash.js"
import { IGNORE_FILES, join } from "../workspace/ignoreRules.js"
import type { CaptureContext } from "./capturePoint.js"
import { makeTracker } from "./captureTracking.js"
import type { Wanted } from "./layeredMaps.js"
import { buildManifest, recordPoint } from "./pointBuild.js"
import {
  changesAt,
  loadManifestSubset,
  loadStatCacheSubset,
  type ManifestEntry,
  type PathChanges,
  sameManifestEntry,
  sameStatCacheEntry,
  storeDeltas,
  storeWhole,
} from "./pointManifest.js"
import { countsOver } from "./pointPatch.js"
import { type BeyondTable, type SealCheck, type SealedChanges, sealChanges } from "./scanSeal.js"
import { type ScanResult, scanSubtrees, startsAt } from "./workspaceScan.js"

export interface SealedCaptureInput extends CaptureContext {
  readonly check: Extract<SealCheck, { _tag: "Scan" }>
  readonly changes: SealedChanges
}

/**
 * What the changed directories may hold for a capture to hash every file in them again rather
 * than read the base point's stat cache: a few small files cost less than the whole tree's cache
 * (23 MB to inflate at four copies of babel).
 */
const REHASH_FILES = 256
const REHASH_BYTES = 32 * 1024 * 1024

export type SealedCaptureOutcome =
  | {
      readonly _tag: "Captured"
      readonly point: PointCaptured
      readonly rescanned: number
      readonly unsealed?: string
    }
  /** The full scan must take it, for the reason given. */
  | { readonly _tag: "FullScan"; readonly reason: string }

/**
 * Whether a path's parent directory is one of `directories`, for the rows of a whole tree: without
 * a string built per path while the directories are few (a slice and a set lookup for each of
 * 110k paths cost more than the decode they decide).
 */
const parentIn = (directories: ReadonlySet<string>): Wanted => {
  const list = [...directories]
  if (list.length > 16) return (path: string) => directories.has(parentOf(path))
  // The same test on a decoder's bytes (`Wanted.parents`).
  return Object.assign(
    (path: string) => {
      const slash = path.lastIndexOf("/")
      for (const dir of list)
        if (dir === "" ? slash < 0 : slash === dir.length && path.startsWith(dir)) return true
      return false
    },
    { parents: list },
  )
}

/**
 * More changed directories than a quarter of the sealed ones (and more than a few): a scan of the
 * whole tree is about as cheap, and decides everything in one pass.
 */
const mostChanged = (changed: number, sealed: number) => changed > 64 && changed * 4 > sealed

const fullScan = (reason: string): SealedCaptureOutcome => ({ _tag: "FullScan", reason })

/** Why the scan of the changes cannot stand for a full scan's part of the tree (see the header). */
const unfit = (
  scan: ScanResult,
  sealed: ReadonlySet<string>,
  previous: ReadonlyMap<WorkspacePath, ManifestEntry>,
  beyond: BeyondTable,
): Effect.Effect<string | undefined, never, Workspace> =>
  Effect.gen(function* () {
    const odd = scan.skipped.find(
      (s) => s.reason === "budget" || s.reason === "unreadable" || s.reason === "ignore_file_refused",
    )
    if (odd !== undefined) return `${odd.path} was left out (${odd.reason})`
    // Files git tracks below an ignored directory in a changed directory: taken as the full scan
    // takes them when the base seal had each and its stat was found unchanged at this capture's
    // start (`checkSeal`); a new one would need the seal's table made again from a full scan.
    if (scan.tree.beyond.size > 0) {
      const known = new Set(beyond.map(([path]) => path))
      for (const path of scan.tree.beyond)
        if (!known.has(path))
          return `${path}, which git tracks below an ignored directory, is new to the seal`
    }
    for (const path of scan.tree.excluded)
      if (sealed.has(path)) return `${path} was a directory in scope and is excluded now`
    const workspace = yield* Workspace
    for (const dir of scan.tree.scopes.keys())
      for (const name of IGNORE_FILES) {
        const path = join(dir, name) as WorkspacePath
        const now = scan.entries.get(path)
        if (!sealed.has(dir)) {
          if (now !== undefined || scan.tree.excluded.has(path)) return `a new directory holds ${path}`
          continue
        }
        const before = previous.get(path)
        if (now === undefined) {
          if (scan.tree.excluded.has(path)) return `${path} is an ignored ignore file`
          if (before !== undefined && before.kind !== "tombstone") return `${path} went`
          continue
        }
        // By its content (an ignore file is small, and a stat cache may not be at hand).
        if (before?.kind !== "file") return `${path} is new`
        const read = yield* Effect.option(workspace.read(path))
        if (
          Option.isNone(read) ||
          Option.isNone(read.value) ||
          hashContent(read.value.value.content) !== before.hash
        )
          return `${path} changed`
      }
    return undefined
  })

/** The capture of the changes the seal shows, or why the full scan must take it. */
export const captureSealed = (input: SealedCaptureInput) =>
  Effect.gen(function* () {
    const { changes, base, settings } = input
    const { changed, failed, directories, sealed } = changes
    if (mostChanged(changed.size, directories.length))
      return fullScan(`${changed.size} of ${directories.length} directories changed`)
    if (base.statCacheHash === undefined) return fullScan("the last point has no stat cache")
    // Each changed directory that could be listed and lies below no other changed one: the scan
    // reaches the rest from there.
    const tops: Array<string> = []
    for (const dir of changed) {
      if (failed.has(dir)) continue
      if (dir !== "" && changed.has(parentOf(dir))) {
        if (failed.has(parentOf(dir))) return fullScan(`${dir} was listed but its parent was not`)
        continue
      }
      tops.push(dir)
    }
    tops.sort()
    // What the base point can hold that this capture re-examines: the paths in the changed
    // directories, and the tombstones below no sealed directory (absences beyond a listing: a
    // sealed point holds nothing else there), whose nearest sealed directory may have changed.
    // Nothing else of it is decoded. (A stat cache holds only what a listing showed.)
    const inChanged = parentIn(changed)
    const manifestRows = Object.assign(
      (path: string, tombstone: boolean) =>
        inChanged(path, false) || (tombstone && !sealed.has(parentOf(path))),
      // The same test for a row that is not a tombstone, on its bytes (while the parents are few).
      inChanged.parents === undefined ? {} : { parents: inChanged.parents },
    )
    const loaded = yield* Effect.either(loadManifestSubset(base.manifestHash, manifestRows))
    // A damaged chain is the full path's to report.
    if (Either.isLeft(loaded)) return fullScan(`the last point could not be read: ${loaded.left.message}`)
    const baseManifest = loaded.right
    const starts = yield* startsAt(tops)
    if (starts === undefined) return fullScan("an ignore file above a changed directory was refused")
    const kept = new Set<string>()
    for (const dir of directories) if (!changed.has(dir)) kept.add(dir)
    const scan = yield* scanSubtrees(input.budget, starts, kept)
    const why = yield* unfit(scan, sealed, baseManifest.entries, input.check.beyond ?? [])
    if (why !== undefined) return fullScan(why)
    if (base.files + base.links + scan.entries.size > settings.maxFiles)
      return fullScan("the point may reach the file-count budget")

    // Where the base point's paths may differ: below a directory listed now or changed.
    const listedNow = scan.tree.scopes
    const underChanges = (path: string) => {
      for (let at = parentOf(path); ; at = parentOf(at)) {
        if (changed.has(at) || listedNow.has(at)) return true
        if (sealed.has(at) || at === "") return false
      }
    }
    const previous = baseManifest.entries
    // The stat cache's entries in the changed directories, unless hashing their files again is cheaper.
    let files = 0
    let bytes = 0
    for (const { stat } of scan.entries.values()) {
      files++
      bytes += stat.size
    }
    const rehash = files <= REHASH_FILES && bytes <= REHASH_BYTES
    // (Chosen on the bytes too while the parents are few: a stat cache holds no tombstones.)
    const statLoaded = yield* Effect.either(
      loadStatCacheSubset(base.statCacheHash, rehash ? undefined : inChanged),
    )
    if (Either.isLeft(statLoaded))
      return fullScan(`the last point's stat cache could not be read: ${statLoaded.left.message}`)
    const baseStatCache = statLoaded.right
    const statCache = baseStatCache.entries
    const touched = new Set<WorkspacePath>(scan.entries.keys())
    for (const path of previous.keys()) if (underChanges(path)) touched.add(path)

    const tracker = yield* makeTracker(scan.entries, scan.outOfScope)
    for (const path of touched) if (!scan.entries.has(path)) yield* tracker.track(path, false)
    yield* tracker.trackSession(input.state, input.index, underChanges)

    const built = yield* buildManifest({
      scanned: scan.entries,
      tracked: tracker.tracked,
      previous,
      statCache,
      settings,
      startedAtMs: input.startedAtMs,
    })
    const affected = new Set<WorkspacePath>([...touched, ...tracker.tracked])
    const deltas = yield* storeDeltas(
      { manifest: baseManifest, statCache: baseStatCache },
      changesAt(affected, previous, built.manifest, sameManifestEntry),
      rehash
        ? everyChange(affected, built.statCache)
        : changesAt(affected, statCache, built.statCache, sameStatCacheEntry),
      { manifest: base.files + base.links + base.tombstones, statCache: base.files },
    )
    // Where a delta cannot be written, the map is loaded whole and stored as any capture stores it;
    // but a stat cache whose entries were not read is kept as it is (it only saves hashing: an
    // entry it keeps for a path that changed matches no stat of the path now, and the files listed
    // here are hashed again next time).
    const stored = {
      manifestHash:
        deltas.manifestHash ?? (yield* storeWhole("manifest", base.manifestHash, built.manifest, affected)),
      statCacheHash:
        deltas.statCacheHash ??
        (rehash
          ? base.statCacheHash
          : yield* storeWhole("stat cache", base.statCacheHash, built.statCache, affected)),
    }
    const skipped: Array<SkippedPath> = [
      ...base.skipped.filter((s) => !underChanges(s.path)),
      ...scan.skipped,
      ...tracker.skippedDeclared,
      ...built.skipped,
    ]
    const seal = yield* sealChanges({
      check: input.check,
      scan,
      tracked: tracker.tracked,
      absent: (path) => built.manifest.get(path as WorkspacePath)?.kind === "tombstone",
      skipped,
      startedAtMs: input.startedAtMs,
      racyWindowMs: settings.racyWindowMs,
      changes,
      keeps: (dir) => !changed.has(dir) || listedNow.has(dir),
    })
    const point = yield* recordPoint(input.sessionId, {
      pointId: input.pointId,
      kind: "turn" satisfies PointKind,
      turnId: input.turnId,
      manifestHash: stored.manifestHash,
      statCacheHash: stored.statCacheHash,
      reusedManifest: base.manifestHash === stored.manifestHash,
      ...countsOver(base, previous, built.manifest, affected),
      skipped,
      ...("scanSeal" in seal ? { scanSeal: seal.scanSeal } : {}),
    })
    return {
      _tag: "Captured",
      point,
      rescanned: scan.tree.scopes.size,
      ...("unsealed" in seal ? { unsealed: seal.unsealed } : {}),
    } satisfies SealedCaptureOutcome
  })

/** Without the base's entries: every path re-examined is set again, or removed. */
const everyChange = <V>(
  affected: ReadonlySet<WorkspacePath>,
  after: ReadonlyMap<WorkspacePath, V>,
): PathChanges<V> => {
  const set: Array<readonly [WorkspacePath, V]> = []
  const removed: Array<WorkspacePath> = []
  for (const path of affected) {
    const now = after.get(path)
    if (now === undefined) removed.push(path)
    else set.push([path, now])
  }
  return { set, removed }
}
