/**
 * The mark side of GC (`pointGc.ts`): every live root of every session read from its stream (points
 * with their manifest layers and blobs, the newest stat cache and its layers, checkpoint content,
 * write-intent pre-images, graph-thread values not deleted since), the store's blob sizes, and which
 * points retention keeps. A session stream or a manifest that cannot be read fails the whole
 * collection (`GcRootUnreadable`): unreadable is never "unreferenced". Reads only; deletes nothing.
 */
import {
  type ContentHash,
  graphEventBlobs,
  type PointCaptured,
  type SessionId,
  WriteIntentDeclared,
} from "@rewind/contracts"
import { Effect, Either, Schema, Stream } from "effect"
import { ArtifactStore } from "../ports/ArtifactStore.js"
import { SessionStore } from "../ports/SessionStore.js"
import { loadManifestLayers, loadStatCacheLayers, manifestBlobs } from "./pointManifest.js"
import { sealLayers } from "./scanSeal.js"

export interface RetentionPolicy {
  /** Points kept per session and kind (turn, rescue); older ones stop being roots. Default: all. */
  readonly keepLastPoints?: number
  /** Bytes the content held only by released-able points may take; oldest points go first. */
  readonly byteBudget?: number
}

export interface PointRoots {
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
export const collectRoots = Effect.gen(function* () {
  const store = yield* SessionStore
  const sessions = yield* Effect.mapError(
    store.listSessions(),
    (e) => new GcRootUnreadable({ reason: e.message }),
  )
  const points: Array<PointRoots> = []
  const fixed = new Set<ContentHash>()
  for (const session of sessions) {
    // Only the newest stat cache and seal of a session are ever read again; older ones are garbage.
    let latestStatCache: ContentHash | undefined
    let latestSeal: ContentHash | undefined
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
        if (event.kind === "turn") {
          latestStatCache = event.statCacheHash
          latestSeal = event.scanSeal
        }
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
    // A seal stored as a delta is read over the records below it.
    if (latestSeal !== undefined) for (const layer of yield* sealLayers(latestSeal)) fixed.add(layer)
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
export const sizes = Effect.gen(function* () {
  const artifacts = yield* ArtifactStore
  const out = new Map<ContentHash, { size: number; storedAt: number }>()
  yield* Stream.runForEach(artifacts.list(), (info) =>
    Effect.sync(() => void out.set(info.hash, { size: info.size, storedAt: info.storedAt })),
  )
  return out
})
/** Which points stay roots under the policy (a session's newest point of each kind always does). */
export const retain = (
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
