/**
 * The plan of a point restore (module-internal to `snapshot/`), shared by the preview and the
 * apply so that what the apply re-checks is the very computation the preview showed: each path of
 * the point's manifest against what is there now (by content hash, mode and link target) gives a
 * write, a link, a delete (only where the point holds a tombstone; paths the point does not mention
 * are left alone), "unchanged", or a conflict (a directory, FIFO or unreadable file in the way, a
 * link leading out of the root, content missing from the store or corrupt). Paths the protection
 * policy keeps are listed apart. Every content the restore would write is read and verified here,
 * so a corrupt blob refuses the preview rather than the apply.
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
import { checkSymlinkTarget } from "../workspace/confinedPathResolution.js"
import { sha256Hex } from "../workspace/contentHash.js"
import { checkProtection } from "../workspace/protection.js"
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
   * link (remove or replace the link first); `escaping_link`: the point holds a link whose target
   * leads outside the root, which no restore creates; `content_corrupt`: the stored content does
   * not hash to what the point recorded.
   */
  readonly reason:
    | "not_a_regular_file"
    | "unreadable"
    | "content_missing"
    | "symlink_in_path"
    | "escaping_link"
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

const findPoint = (sessionId: SessionId, pointId: PointId) =>
  Effect.gen(function* () {
    const index = yield* readPointIndex(sessionId)
    const point = index.points.find((p) => p.pointId === pointId)
    if (point === undefined) return yield* refuse("not_found", `session ${sessionId} has no point ${pointId}`)
    return point
  })

/**
 * Whether a directory above `path` is a link now that the point records as absent (it became a
 * directory after): the restore takes links in the way away before any write, so nothing is at
 * `path` for it. Only links: a file in the way would be deleted in the same pass of writes as the
 * paths beneath it are written, and its rollback could not put it back over their directory.
 */
const underRemovedLink = (
  path: WorkspacePath,
  manifest: ReadonlyMap<WorkspacePath, ManifestEntry>,
  inspected: ReadonlyMap<WorkspacePath, Inspected>,
): boolean => {
  for (let cut = path.lastIndexOf("/"); cut > 0; cut = path.lastIndexOf("/", cut - 1)) {
    const above = path.slice(0, cut) as WorkspacePath
    if (manifest.get(above)?.kind !== "tombstone") continue
    const now = inspected.get(above)
    if (now !== undefined && Either.isRight(now) && "kind" in now.right && now.right.kind === "link")
      return true
  }
  return false
}

const HOLDS = "holds"

/**
 * What stands at `path` for a restore to `wanted`: its state, a conflict, or `HOLDS` when the
 * point's tombstone holds already.
 */
const standing = (
  path: WorkspacePath,
  wanted: ManifestEntry,
  manifest: ReadonlyMap<WorkspacePath, ManifestEntry>,
  inspected: ReadonlyMap<WorkspacePath, Inspected>,
): CurrentState | RestoreConflict | typeof HOLDS => {
  const now = inspected.get(path)!
  if (Either.isRight(now)) {
    if (!("notRegular" in now.right)) return now.right
    // A tombstone says no file or link is at the path; a directory there (a later point's, say)
    // is not one, and the restore leaves it alone.
    if (wanted.kind === "tombstone" && now.right.notRegular === "directory") return HOLDS
    return { path, reason: "not_a_regular_file", detail: `${aFileKind(now.right.notRegular)} is in the way` }
  }
  const error = now.left
  if (error._tag !== "PathRefused" || error.reason !== "symlink_in_path") {
    return { path, reason: "unreadable", detail: error.message }
  }
  // Through a link nothing is at this path in the tree: a tombstone holds already. A link this
  // very restore takes away (the point has a tombstone there: it became a directory when
  // captured) leaves nothing at the path either.
  if (wanted.kind === "tombstone") return HOLDS
  return underRemovedLink(path, manifest, inspected)
    ? ABSENT
    : { path, reason: "symlink_in_path", detail: error.message }
}

/** The manifest's paths against what is there now: the changes, the conflicts, how many hold already. */
const compare = (
  manifest: ReadonlyMap<WorkspacePath, ManifestEntry>,
  protectedPaths: ReadonlyMap<WorkspacePath, ProtectedPath>,
  inspected: ReadonlyMap<WorkspacePath, Inspected>,
) =>
  Effect.gen(function* () {
    const artifacts = yield* ArtifactStore
    const changes: Array<PlannedChange> = []
    const conflicts: Array<RestoreConflict> = []
    let unchanged = 0
    const missing = new Set<ContentHash>()
    for (const [path, wanted] of manifest) {
      if (protectedPaths.has(path)) continue
      const current = standing(path, wanted, manifest, inspected)
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
      if (wanted.kind === "link") {
        // Checked as the workspace will check it when creating the link: an escaping target
        // refuses in the preview, not half-way through the apply.
        const leads = yield* Effect.either(
          checkSymlinkTarget(path, path.split("/").slice(0, -1), wanted.target),
        )
        if (Either.isLeft(leads)) {
          conflicts.push({ path, reason: "escaping_link", detail: leads.left.message })
          continue
        }
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

export const planPointRestore = (sessionId: SessionId, pointId: PointId, keep?: KeptContents) =>
  Effect.gen(function* () {
    const point = yield* findPoint(sessionId, pointId)
    const manifest = yield* Effect.catchAll(loadManifest(point.manifestHash), (e) =>
      refuse("unavailable", `the manifest of point ${pointId} cannot be read: ${e.message}`),
    )
    const latest = latestTurnPoint(yield* readPointIndex(sessionId))
    const cache: StatCache = yield* loadStatCache(latest?.statCacheHash)
    // One listing of the point's directories answers both the protection check (ignore files and
    // `.git` of each directory) and what is at each path: every entry is stat'ed once.
    const listings = yield* listDirectoriesOf(manifest.keys())
    const protectedPaths = yield* checkProtection(manifest.keys(), knownStats(listings))
    const inspected = yield* inspectAll(listings, (p) => protectedPaths.has(p), cache, keep)
    const { changes, conflicts, unchanged } = yield* compare(manifest, protectedPaths, inspected)
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
      protected: [...protectedPaths.values()],
    }
  })

export type PointRestorePlan = Effect.Effect.Success<ReturnType<typeof planPointRestore>>
