/**
 * The plan of a point restore (module-internal to `snapshot/`), shared by the preview and the
 * apply so that what the apply re-checks is the very computation the preview showed: each path of
 * the point's manifest against what is there now (by content hash, mode and link target) gives a
 * write, a link, a delete (only where the point holds a tombstone, or implies one: see below;
 * paths the point does not mention are left alone), "unchanged", or a conflict (a directory, FIFO
 * or unreadable file in the way, content missing from the store or corrupt). Paths the protection
 * policy keeps from a change are listed apart (one that holds the point's state already is
 * unchanged, and is not checked at all: see `planPointRestore`); among them the links leading out
 * of the root, standing or in the point (`keptLinks`): no restore makes one, nor takes one away,
 * since its redo could not make it again, and one such link never refuses the whole restore. Every
 * content the restore would write is read and verified here, so a corrupt blob refuses the preview
 * rather than the apply.
 *
 * A path that changed kind since the point: a file or link of the point implies that nothing is
 * beneath it, and a path of the point implies that no file is above it (`pointRestoreWay.ts`). The
 * files and links of a directory standing where the point has a file, and a file standing where it
 * needs a directory, are planned as deletes like the point's own tombstones (rescued first, put
 * back by the redo); the path itself is then planned as absent. What a restore could not put back
 * keeps the directory a conflict.
 */
import {
  aFileKind,
  type ContentHash,
  type PointId,
  type ProtectedPath,
  refuse,
  type SessionId,
  type WorkspacePath,
} from "@rewind/contracts"
import { Effect, Either } from "effect"
import { ArtifactStore } from "../ports/ArtifactStore.js"
import { sha256Hex } from "../workspace/contentHash.js"
import { nothingCanBeThere } from "../workspace/pathAbsence.js"
import { checkProtection, linkProtection } from "../workspace/protection.js"
import { loadStatCache } from "./capturePoint.js"
import { latestTurnPoint, readPointIndex } from "./pointIndex.js"
import {
  ABSENT,
  type CurrentState,
  type Inspected,
  inspectAll,
  type KeptContents,
  knownStats,
  listDirectoriesOf,
} from "./pointInspection.js"
import { loadManifest, type ManifestEntry, type StatCache } from "./pointManifest.js"
import { type DirectoryInTheWay, findWay } from "./pointRestoreWay.js"

export interface PlannedChange {
  readonly path: WorkspacePath
  readonly action: "write" | "link" | "delete"
  readonly current: CurrentState
  readonly wanted: ManifestEntry
}

export interface RestoreConflict {
  readonly path: WorkspacePath
  /**
   * `symlink_in_path`: a directory on the way is a symlink now, and nothing is written through a
   * link (remove or replace the link first); `content_corrupt`: the stored content does not hash
   * to what the point recorded. (A link leading out of the root, standing or in the point, is no
   * conflict: the protection policy keeps it, see `keptLinks`.)
   */
  readonly reason:
    | "not_a_regular_file"
    | "unreadable"
    | "content_missing"
    | "symlink_in_path"
    | "content_corrupt"
  readonly detail: string
}

const satisfied = (current: CurrentState, wanted: ManifestEntry): boolean => {
  switch (wanted.kind) {
    case "file":
      return current.kind === "file" && current.hash === wanted.hash && current.mode === wanted.mode
    case "link":
      return current.kind === "link" && current.target === wanted.target
    case "tombstone":
      return current.kind === "absent"
  }
}

/** Whether what was found at a path is the point's file or link already, or its absence. */
const holdsAlready = (now: Inspected | undefined, wanted: ManifestEntry): boolean =>
  now !== undefined && Either.isRight(now) && !("notRegular" in now.right) && satisfied(now.right, wanted)

/**
 * The paths of `target` that do not hold already where a link leading out of the root stands or
 * is wanted: the protection policy keeps them as they are (`linkProtection`), so the restore
 * neither takes such a link away (no redo could make it again) nor makes one, and says so.
 */
const keptLinks = (
  target: Iterable<readonly [WorkspacePath, ManifestEntry]>,
  inspected: ReadonlyMap<WorkspacePath, Inspected>,
) => {
  const kept = new Map<WorkspacePath, ProtectedPath>()
  for (const [path, wanted] of target) {
    const now = inspected.get(path)
    if (holdsAlready(now, wanted)) continue
    const standing =
      now !== undefined && Either.isRight(now) && "kind" in now.right && now.right.kind === "link"
        ? linkProtection(path, now.right.target)
        : undefined
    const found = standing ?? (wanted.kind === "link" ? linkProtection(path, wanted.target) : undefined)
    if (found !== undefined) kept.set(path, found)
  }
  return kept
}

const findPoint = (sessionId: SessionId, pointId: PointId) =>
  Effect.gen(function* () {
    const index = yield* readPointIndex(sessionId)
    const point = index.points.find((p) => p.pointId === pointId)
    if (point === undefined) return yield* refuse("not_found", `session ${sessionId} has no point ${pointId}`)
    return point
  })

/** What the plan knows of each path: what the restore wants there, and what stands there now. */
interface Known {
  /** The point's manifest with the tombstones it implies (`pointRestoreWay.ts`). */
  readonly target: ReadonlyMap<WorkspacePath, ManifestEntry>
  readonly inspected: ReadonlyMap<WorkspacePath, Inspected>
  readonly protectedPaths: ReadonlyMap<WorkspacePath, ProtectedPath>
  readonly directories: ReadonlyMap<WorkspacePath, DirectoryInTheWay>
}

/** Whether the restore deletes what stands at `path`: a file or link where it wants nothing. */
const deletedHere = (path: WorkspacePath, known: Known): boolean => {
  if (known.target.get(path)?.kind !== "tombstone" || known.protectedPaths.has(path)) return false
  const now = known.inspected.get(path)
  return (
    now !== undefined &&
    Either.isRight(now) &&
    "kind" in now.right &&
    (now.right.kind === "file" || now.right.kind === "link")
  )
}

/**
 * Whether a directory above `path` is a link or a file now that the restore deletes (it stands
 * where the point has a directory): the restore takes links in the way away before any write, and
 * deletes files before it writes, so nothing is at `path` for it.
 */
const underDeleted = (path: WorkspacePath, known: Known): boolean => {
  for (let cut = path.lastIndexOf("/"); cut > 0; cut = path.lastIndexOf("/", cut - 1)) {
    if (deletedHere(path.slice(0, cut) as WorkspacePath, known)) return true
  }
  return false
}

/**
 * Why the directory at `path` (where the point has a file) cannot be cleared; undefined when the
 * restore deletes everything it holds, so it is gone before the path is written.
 */
const keptDirectory = (path: WorkspacePath, known: Known): string | undefined => {
  const found = known.directories.get(path)
  if (found === undefined) return "it was not looked into"
  if ("blocked" in found) return found.blocked
  const kept = found.holds.find((p) => !deletedHere(p, known))
  if (kept === undefined) return undefined
  const now = known.inspected.get(kept)
  const why =
    known.protectedPaths.get(kept)?.message ??
    (now !== undefined && Either.isLeft(now) ? now.left.message : "it changed while the plan looked")
  return `it holds ${kept}, which the restore cannot delete (${why})`
}

const HOLDS = "holds"

/**
 * What stands at `path` for a restore to `wanted`: its state, a conflict, or `HOLDS` when the
 * point's tombstone holds already.
 */
const standing = (
  path: WorkspacePath,
  wanted: ManifestEntry,
  known: Known,
): CurrentState | RestoreConflict | typeof HOLDS => {
  const now = known.inspected.get(path)!
  if (Either.isRight(now)) {
    if (!("notRegular" in now.right)) return now.right
    // A tombstone says no file or link is at the path; a directory there (a later point's, say)
    // is not one, and the restore leaves it alone.
    if (wanted.kind === "tombstone" && now.right.notRegular === "directory") return HOLDS
    if (now.right.notRegular === "directory" && wanted.kind !== "tombstone") {
      // A directory where the point has a file or link: gone before the write if the restore
      // deletes all it holds (they are this plan's deletes), kept and a conflict otherwise.
      const kept = keptDirectory(path, known)
      if (kept === undefined) return ABSENT
      return { path, reason: "not_a_regular_file", detail: `a directory is in the way: ${kept}` }
    }
    return { path, reason: "not_a_regular_file", detail: `${aFileKind(now.right.notRegular)} is in the way` }
  }
  const error = now.left
  const throughLink = error._tag === "PathRefused" && error.reason === "symlink_in_path"
  if (!nothingCanBeThere(error)) {
    return { path, reason: "unreadable", detail: error.message }
  }
  // Through a link, or beneath a file, nothing is at this path in the tree: a tombstone holds
  // already. A link or file this very restore deletes (it stands where the point has a
  // directory) leaves nothing at the path either.
  if (wanted.kind === "tombstone") return HOLDS
  if (underDeleted(path, known)) return ABSENT
  return throughLink
    ? { path, reason: "symlink_in_path", detail: error.message }
    : { path, reason: "unreadable", detail: error.message }
}

/** The manifest's paths against what is there now: the changes, the conflicts, how many hold already. */
const compare = (known: Known) =>
  Effect.gen(function* () {
    const artifacts = yield* ArtifactStore
    const changes: Array<PlannedChange> = []
    const conflicts: Array<RestoreConflict> = []
    let unchanged = 0
    const missing = new Set<ContentHash>()
    for (const [path, wanted] of known.target) {
      if (known.protectedPaths.has(path)) continue
      const current = standing(path, wanted, known)
      if (current === HOLDS) {
        unchanged++
        continue
      }
      if ("reason" in current) {
        conflicts.push(current)
        continue
      }
      if (satisfied(current, wanted)) {
        unchanged++
        continue
      }
      if (wanted.kind === "file" && (missing.has(wanted.hash) || !(yield* artifacts.has(wanted.hash)))) {
        missing.add(wanted.hash)
        conflicts.push({
          path,
          reason: "content_missing",
          detail: `content ${wanted.hash} is not in the store`,
        })
        continue
      }
      changes.push({
        path,
        action: wanted.kind === "file" ? "write" : wanted.kind === "link" ? "link" : "delete",
        current,
        wanted,
      })
    }
    return { changes, conflicts, unchanged }
  })

/**
 * Every content the changes write, read and verified now (the apply writes these very bytes:
 * preview = apply). A content that cannot be used turns its changes into conflicts.
 */
const readContents = (changes: Array<PlannedChange>, conflicts: Array<RestoreConflict>) =>
  Effect.gen(function* () {
    const artifacts = yield* ArtifactStore
    const contents = new Map<ContentHash, Uint8Array>()
    const wantedHashes = [
      ...new Set(changes.flatMap((c) => (c.wanted.kind === "file" ? [c.wanted.hash] : []))),
    ]
    const batch = yield* Effect.either(artifacts.getMany(wantedHashes))
    if (Either.isRight(batch)) {
      for (const [i, h] of wantedHashes.entries()) contents.set(h, batch.right[i]!)
      return contents
    }
    for (const hash of wantedHashes) {
      const one = yield* Effect.either(artifacts.get(hash))
      if (Either.isRight(one)) {
        contents.set(hash, one.right)
        continue
      }
      for (const c of changes.filter((c) => c.wanted.kind === "file" && c.wanted.hash === hash)) {
        conflicts.push({
          path: c.path,
          reason: one.left._tag === "ArtifactNotFound" ? "content_missing" : "content_corrupt",
          detail: `content ${hash} cannot be used: ${one.left.message}`,
        })
      }
    }
    const bad = new Set(conflicts.map((c) => c.path))
    changes.splice(0, changes.length, ...changes.filter((c) => !bad.has(c.path)))
    return contents
  })

/**
 * The plan's knowledge with what is in the way of the point's paths (`pointRestoreWay.ts`): the
 * implied tombstones join the target, inspected (and their protection checked) as the point's own
 * paths are.
 */
const withWay = (
  manifest: ReadonlyMap<WorkspacePath, ManifestEntry>,
  protectedPaths: ReadonlyMap<WorkspacePath, ProtectedPath>,
  inspected: ReadonlyMap<WorkspacePath, Inspected>,
  cache: StatCache,
  keep: KeptContents | undefined,
) =>
  Effect.gen(function* () {
    const way = yield* findWay(manifest, inspected)
    const kept = new Map([...protectedPaths, ...way.keptBeneath])
    if (way.implied.length === 0) {
      return {
        target: manifest,
        inspected,
        protectedPaths: kept,
        directories: way.directories,
      } satisfies Known
    }
    const listings = yield* listDirectoriesOf(way.implied)
    const impliedProtected = yield* checkProtection(way.implied, knownStats(listings))
    const impliedInspected = new Map(yield* inspectAll(listings, (p) => impliedProtected.has(p), cache, keep))
    const impliedLinks = keptLinks(
      way.implied.map((p) => [p, TOMBSTONE] as const),
      impliedInspected,
    )
    for (const path of impliedLinks.keys()) impliedInspected.delete(path)
    const target = new Map(manifest)
    for (const path of way.implied) target.set(path, TOMBSTONE)
    return {
      target,
      inspected: new Map([...inspected, ...impliedInspected]),
      protectedPaths: new Map([...kept, ...impliedLinks, ...impliedProtected]),
      directories: way.directories,
    } satisfies Known
  })

const TOMBSTONE: ManifestEntry = { kind: "tombstone" }

export const planPointRestore = (sessionId: SessionId, pointId: PointId, keep?: KeptContents) =>
  Effect.gen(function* () {
    const point = yield* findPoint(sessionId, pointId)
    const manifest = yield* Effect.catchAll(loadManifest(point.manifestHash), (e) =>
      refuse("unavailable", `the manifest of point ${pointId} cannot be read: ${e.message}`),
    )
    const latest = latestTurnPoint(yield* readPointIndex(sessionId))
    const cache: StatCache = yield* loadStatCache(latest?.statCacheHash)
    // One listing of the point's directories answers both what is at each path and the protection
    // check's stats (ignore files and `.git` of each directory): every entry is stat'ed once.
    const listings = yield* listDirectoriesOf(manifest.keys())
    const inspected = yield* inspectAll(listings, () => false, cache, keep)
    // Protection keeps a path from what a restore would do there, so only the paths that do not
    // hold the point's state already are checked: on a large point nearly every path holds, and
    // deciding the ignore rules for each cost more than the rest of the plan. A path that holds is
    // counted unchanged whether or not a rule now ignores it; one that is protected is planned as
    // if it had not been inspected.
    const byPolicy = yield* checkProtection(
      [...manifest].filter(([path, wanted]) => !holdsAlready(inspected.get(path), wanted)).map(([p]) => p),
      knownStats(listings),
    )
    // The path's own protection (the store, `.git`, the ignore rules) is the reason given first.
    const protectedPaths = new Map([...keptLinks(manifest, inspected), ...byPolicy])
    for (const path of protectedPaths.keys()) inspected.delete(path)
    const known = yield* withWay(manifest, protectedPaths, inspected, cache, keep)
    const { changes, conflicts, unchanged } = yield* compare(known)
    const contents = yield* readContents(changes, conflicts)
    const planDigest = sha256Hex(
      JSON.stringify([pointId, changes.map((c) => [c.path, c.action, c.current, c.wanted])]),
    )
    return {
      point,
      changes,
      conflicts,
      unchanged,
      planDigest,
      cache,
      contents,
      protected: [...known.protectedPaths.values()],
    }
  })

export type PointRestorePlan = Effect.Effect.Success<ReturnType<typeof planPointRestore>>
