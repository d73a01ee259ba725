/**
 * Status and garbage collection of the artifact store, from the snapshot engine's point of view.
 *
 * Mark: every live root of every session is read (points with their manifests, the newest stat cache,
 * rescue points, checkpoints' before/after/patch content, write-intent pre-images, the values of graph
 * threads not deleted since they were recorded), what the operation journal still needs (both
 * versions of every file of a pending operation or of one whose redo is still available:
 * `journalRoots`) plus roots the host names (`extraRoots`: redo entries kept elsewhere). A root that
 * cannot be read, the journal included, stops the collection before anything is deleted: unreadable
 * is never "unreferenced".
 * Retention decides which points keep their content: the last `keepLastPoints` of each kind per session,
 * then, while the content only old points hold exceeds `byteBudget`, the oldest point anywhere
 * (never a session's newest) is released. Sweep: the store's clock is read before the mark
 * begins, and the unmarked blobs go to the store's `sweep`, which deletes each one only if it was
 * not put since that mark time minus the grace window, deciding per blob against concurrent puts.
 * Ages are judged on the store's clock alone (never this process's), so with many workers sharing a
 * store, a blob another worker put again after the mark began is never taken, and one an operation
 * in flight put within the grace window (its reference not yet committed) is young. `previewCleanup`
 * reports what a cleanup would delete without deleting.
 */
import type { ContentHash, PointCaptured, SessionId, SkippedPath } from "@rewind/contracts"
import { Effect, Either, Option } from "effect"
import { ArtifactStore } from "../ports/ArtifactStore.js"
import { type WatcherStatus, WorkspaceChanges } from "../ports/WorkspaceChanges.js"
import { journalRoots } from "../restore/journalRoots.js"
import { collectRoots, type RetentionPolicy, retain, sizes } from "./gcRoots.js"
import { treeStatCache } from "./treeStatCache.js"

export { GcRootUnreadable, type RetentionPolicy } from "./gcRoots.js"

export interface CleanupOptions {
  /**
   * Blobs put within this long before the mark began are never deleted: an operation in flight may
   * have put content it has not referenced yet. It must exceed the longest time between a put and
   * the commit that references it. Default 10 minutes.
   */
  readonly graceMs?: number
  readonly retention?: RetentionPolicy
  /** Content the host keeps alive (journals in flight, redo entries stored elsewhere). */
  readonly extraRoots?: ReadonlyArray<ContentHash>
}

export const DEFAULT_GRACE_MS = 10 * 60 * 1000

export interface CleanupReport {
  /** False when a root could not be read: then nothing was deleted. */
  readonly swept: boolean
  readonly reason?: string
  readonly deleted: ReadonlyArray<ContentHash>
  readonly deletedBytes: number
  /** Unmarked blobs not deleted: put within the grace window, put again since the mark, or already gone. */
  readonly keptYoung: number
  readonly releasedPoints: ReadonlyArray<string>
}

export interface SnapshotStatus {
  readonly blobs: number
  readonly storeBytes: number
  /** Bytes of blobs referenced by more than one point or checkpoint. */
  readonly sharedBytes: number
  /** Bytes of manifests and stat caches: the index. */
  readonly indexBytes: number
  readonly pointsPerSession: ReadonlyArray<{ readonly sessionId: SessionId; readonly points: number }>
  /** Paths the latest point of each session left out, with why. */
  readonly unprotected: ReadonlyArray<{ readonly sessionId: SessionId } & SkippedPath>
  /** The live engine's watcher (inactive, with the reason, where this process runs none). */
  readonly watcher: WatcherStatus
}

/** The watcher's status, or why this process has none. */
const watcherStatus = Effect.flatMap(
  Effect.serviceOption(WorkspaceChanges),
  Option.match({
    onNone: (): Effect.Effect<WatcherStatus> =>
      Effect.succeed({
        active: false,
        reason:
          "no live engine in this process: every capture scans the workspace (`rewind serve` and openRewind({ live: true }) watch it)",
      }),
    onSome: (changes) => changes.status,
  }),
)
const collect = (options: CleanupOptions, apply: boolean) =>
  Effect.gen(function* () {
    const artifacts = yield* ArtifactStore
    // Read before any root: everything referenced later than this was put after it, or is young.
    const markedAt = yield* artifacts.now()
    const roots = yield* Effect.either(collectRoots)
    // What redo and recover still need: an unreadable journal stops the collection too.
    const journal = yield* Effect.either(journalRoots)
    if (Either.isLeft(roots) || Either.isLeft(journal)) {
      const why = Either.isLeft(roots)
        ? roots.left.reason
        : `the operation journal (${Either.isLeft(journal) ? journal.left.message : ""})`
      const report: CleanupReport = {
        swept: false,
        reason: `a root could not be read, so nothing was deleted: ${why}`,
        deleted: [],
        deletedBytes: 0,
        keptYoung: 0,
        releasedPoints: [],
      }
      return report
    }
    const size = yield* sizes
    const { kept, released } = retain(roots.right.points, roots.right.fixed, size, options.retention ?? {})
    const marked = new Set<ContentHash>([
      ...roots.right.fixed,
      ...journal.right,
      ...(options.extraRoots ?? []),
    ])
    for (const p of kept) for (const b of p.blobs) marked.add(b)
    // A released point's manifest stays (it is small): the point remains readable as a record,
    // and the next collection can still read every root instead of stopping on a missing one.
    for (const p of released) for (const layer of p.layers) marked.add(layer)
    const graceMs = options.graceMs ?? DEFAULT_GRACE_MS
    const candidates = [...size.keys()].filter((hash) => !marked.has(hash))
    // The trees' stat caches name content no root holds: after a sweep it may be gone. Cleared
    // before (no build starts from them during it) and after (none begun before it keeps its tree).
    const trees = apply ? yield* treeStatCache : undefined
    trees?.clear()
    const deleted = apply
      ? yield* Effect.ensuring(
          artifacts.sweep({ candidates, markedAt, graceMs }),
          Effect.sync(() => trees?.clear()),
        )
      : candidates
          .filter((hash) => size.get(hash)!.storedAt < markedAt - graceMs)
          .map((hash) => ({ hash, size: size.get(hash)!.size }))
    let deletedBytes = 0
    for (const blob of deleted) deletedBytes += blob.size
    const report: CleanupReport = {
      swept: true,
      deleted: deleted.map((blob) => blob.hash),
      deletedBytes,
      keptYoung: candidates.length - deleted.length,
      releasedPoints: released.map((p) => p.point.pointId),
    }
    return report
  })

/** What `cleanup` would delete, deleting nothing. */
export const previewCleanup = (options: CleanupOptions = {}) => collect(options, false)

/** Mark and sweep of the artifact store; see the module comment. */
export const cleanup = (options: CleanupOptions = {}) => collect(options, true)

/** Index size, shared content, points per session and what the latest points left unprotected. */
export const snapshotStatus = Effect.gen(function* () {
  const roots = yield* Effect.either(collectRoots)
  if (Either.isLeft(roots)) return yield* roots.left
  const size = yield* sizes
  const refs = new Map<ContentHash, number>()
  const index = new Set<ContentHash>()
  for (const p of roots.right.points) {
    for (const layer of p.layers) index.add(layer)
    if (p.point.statCacheHash !== undefined && size.has(p.point.statCacheHash))
      index.add(p.point.statCacheHash)
  }
  // Shared content is workspace content; manifest layers shared along a delta chain are index.
  for (const p of roots.right.points) {
    for (const b of p.blobs) if (!index.has(b)) refs.set(b, (refs.get(b) ?? 0) + 1)
  }
  for (const b of roots.right.fixed) refs.set(b, (refs.get(b) ?? 0) + 1)
  let storeBytes = 0
  for (const info of size.values()) storeBytes += info.size
  let sharedBytes = 0
  for (const [b, n] of refs) if (n > 1 && !index.has(b)) sharedBytes += size.get(b)?.size ?? 0
  let indexBytes = 0
  for (const b of index) indexBytes += size.get(b)?.size ?? 0
  const perSession = new Map<SessionId, number>()
  const latest = new Map<SessionId, PointCaptured>()
  for (const p of roots.right.points) {
    perSession.set(p.sessionId, (perSession.get(p.sessionId) ?? 0) + 1)
    if (p.point.kind === "turn") latest.set(p.sessionId, p.point)
  }
  const status: SnapshotStatus = {
    blobs: size.size,
    storeBytes,
    sharedBytes,
    indexBytes,
    pointsPerSession: [...perSession].map(([sessionId, points]) => ({ sessionId, points })),
    unprotected: [...latest].flatMap(([sessionId, p]) => p.skipped.map((s) => ({ sessionId, ...s }))),
    watcher: yield* watcherStatus,
  }
  return status
})
