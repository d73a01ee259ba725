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
import {
  type ContentHash,
  graphEventBlobs,
  type PointCaptured,
  type SessionId,
  type SkippedPath,
  WriteIntentDeclared,
} from "@rewind/contracts"
import { Effect, Either, Option, Schema, Stream } from "effect"
import { ArtifactStore } from "../ports/ArtifactStore.js"
import { SessionStore } from "../ports/SessionStore.js"
import { type WatcherStatus, WorkspaceChanges } from "../ports/WorkspaceChanges.js"
import { journalRoots } from "../restore/journalRoots.js"
import { loadManifestLayers, loadStatCacheLayers, manifestBlobs } from "./pointManifest.js"

export interface RetentionPolicy {
  /** Points kept per session and kind (turn, rescue); older ones stop being roots. Default: all. */
  readonly keepLastPoints?: number
  /** Bytes the content held only by released-able points may take; oldest points go first. */
  readonly byteBudget?: number
}

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

interface PointRoots {
  readonly sessionId: SessionId
  readonly point: PointCaptured
  readonly blobs: ReadonlySet<ContentHash>
  /** The manifest's own artifacts (a delta and the layers below it). */
  readonly layers: ReadonlyArray<ContentHash>
}

/** A GC root (session stream, manifest) that could not be read: collection stops. */
export class GcRootUnreadable extends Schema.TaggedError<GcRootUnreadable>()("GcRootUnreadable", {
  reason: Schema.String,
}) {
  override get message() {
    return this.reason
  }
}

const collectRoots = Effect.gen(function* () {
  const store = yield* SessionStore
  const sessions = yield* Effect.mapError(
    store.listSessions(),
    (e) => new GcRootUnreadable({ reason: e.message }),
  )
  const points: Array<PointRoots> = []
  const fixed = new Set<ContentHash>()
  for (const session of sessions) {
    // Only the newest stat cache of a session is ever read again; older ones are garbage.
    let latestStatCache: ContentHash | undefined
    // A graph thread's values stay roots until the thread is deleted (a later GraphThreadDeleted).
    let graphRoots: Array<ContentHash> = []
    const events = yield* Effect.mapError(
      store.read(session.sessionId),
      (e) => new GcRootUnreadable({ reason: `session ${session.sessionId}: ${e.message}` }),
    )
    for (const { event } of events) {
      if (event._tag === "PointCaptured") {
        const manifest = yield* Effect.mapError(
          loadManifestLayers(event.manifestHash),
          (e) => new GcRootUnreadable({ reason: `point ${event.pointId}: ${e.message}` }),
        )
        const blobs = new Set<ContentHash>(manifestBlobs(manifest.map))
        for (const layer of manifest.layers) blobs.add(layer)
        if (event.kind === "turn") latestStatCache = event.statCacheHash
        points.push({ sessionId: session.sessionId, point: event, blobs, layers: manifest.layers })
      } else if (event._tag === "CheckpointCreated") {
        const c = event.checkpoint
        if (c.before._tag === "present") fixed.add(c.before.hash)
        if (c.after?._tag === "present") fixed.add(c.after.hash)
        if (c.patchHash !== undefined) fixed.add(c.patchHash)
      } else if (event instanceof WriteIntentDeclared) {
        for (const e of event.entries) if (e.preImage.state === "file") fixed.add(e.preImage.hash)
      } else if (event._tag === "GraphCheckpointRecorded" || event._tag === "GraphWritesRecorded") {
        for (const hash of graphEventBlobs(event)) graphRoots.push(hash)
      } else if (event._tag === "GraphThreadDeleted") graphRoots = []
    }
    for (const hash of graphRoots) fixed.add(hash)
    if (latestStatCache !== undefined) {
      fixed.add(latestStatCache)
      // Its lower layers too; a stat cache that cannot be read is not a root worth stopping for
      // (losing it only costs re-hashing), so only what can be read is kept.
      const layers = yield* Effect.either(loadStatCacheLayers(latestStatCache))
      if (Either.isRight(layers)) for (const layer of layers.right.layers) fixed.add(layer)
    }
  }
  return { sessions, points, fixed }
})

const sizes = Effect.gen(function* () {
  const artifacts = yield* ArtifactStore
  const out = new Map<ContentHash, { size: number; storedAt: number }>()
  yield* Stream.runForEach(artifacts.list(), (info) =>
    Effect.sync(() => void out.set(info.hash, { size: info.size, storedAt: info.storedAt })),
  )
  return out
})

/** Which points stay roots under the policy (a session's newest point of each kind always does). */
const retain = (
  points: ReadonlyArray<PointRoots>,
  fixed: ReadonlySet<ContentHash>,
  size: ReadonlyMap<ContentHash, { size: number }>,
  policy: RetentionPolicy,
) => {
  const keep = policy.keepLastPoints ?? Number.POSITIVE_INFINITY
  const kept: Array<PointRoots> = []
  const released: Array<PointRoots> = []
  const groups = new Map<string, Array<PointRoots>>()
  for (const p of points) {
    const key = `${p.sessionId}\u0000${p.point.kind}`
    groups.set(key, [...(groups.get(key) ?? []), p])
  }
  const newest = new Set<PointRoots>()
  for (const group of groups.values()) {
    newest.add(group.at(-1)!)
    const cut = Math.max(1, Math.min(group.length, keep))
    kept.push(...group.slice(group.length - cut))
    released.push(...group.slice(0, group.length - cut))
  }
  if (policy.byteBudget !== undefined) {
    const refs = new Map<ContentHash, number>()
    for (const p of kept) for (const b of p.blobs) refs.set(b, (refs.get(b) ?? 0) + 1)
    let bytes = 0
    for (const b of new Set([...refs.keys(), ...fixed])) bytes += size.get(b)?.size ?? 0
    const candidates = kept
      .filter((p) => !newest.has(p))
      .sort((a, b) => a.point.capturedAt - b.point.capturedAt)
    for (const p of candidates) {
      if (bytes <= policy.byteBudget) break
      kept.splice(kept.indexOf(p), 1)
      released.push(p)
      for (const b of p.blobs) {
        const n = refs.get(b)! - 1
        refs.set(b, n)
        if (n === 0 && !fixed.has(b)) bytes -= size.get(b)?.size ?? 0
      }
    }
  }
  return { kept, released }
}

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
    const deleted = apply
      ? yield* artifacts.sweep({ candidates, markedAt, graceMs })
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
