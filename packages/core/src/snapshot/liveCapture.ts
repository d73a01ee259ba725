/**
 * The live engine's capture: when the `WorkspaceChanges` port is provided, a repeat capture of a
 * session patches the tree its last capture saw with the watcher's change set (`liveTree.ts`) and
 * builds the manifest for the changed paths only, over the previous manifest and stat cache held
 * in memory (the point artifact cache). The cost is what changed, not the size of the tree.
 *
 * When it is used: the watcher vouched for the change set (`Changed`, after its flush), this
 * process captured the session's latest point from a full scan or a watched capture whose record
 * it still holds, and that point is still the session's latest. Otherwise the capture scans in
 * full (and, if the scan was complete and every listed directory is one the watcher watches,
 * seeds a record for next time). A record is taken out while a capture uses it, so a capture that
 * fails half way leaves none behind and the next one scans in full: never a wrong point.
 *
 * Records are kept per watcher instance (a WeakMap: they die with the layer) and per session, a
 * few sessions at most (each holds the tree: about as much memory as a scan of it).
 */

import type {
  ContentHash,
  PointCaptured,
  PointKind,
  SessionId,
  SkippedPath,
  WorkspacePath,
} from "@rewind/contracts"
import { Effect, Option } from "effect"
import { type BoundedMap, boundedMap } from "../internal/boundedMap.js"
import {
  type ChangeCursor,
  WorkspaceChanges,
  type WorkspaceChangesService,
} from "../ports/WorkspaceChanges.js"
import { storeDirectories } from "../workspace/protection.js"
import type { CaptureContext, CaptureOptions } from "./capturePoint.js"
import { makeTracker } from "./captureTracking.js"
import { applyChanges, type LiveTree, outOfScopeIn, seedTree, unseedable } from "./liveTree.js"
import { type Built, buildManifest, recordPoint } from "./pointBuild.js"
import {
  type Layered,
  type ManifestEntry,
  type StatCacheEntry,
  sameManifestEntry,
  sameStatCacheEntry,
  storeManifestAndStatCache,
} from "./pointManifest.js"
import { countsOver, patched } from "./pointPatch.js"
import type { ScannedPath, ScanResult } from "./workspaceScan.js"

interface LiveRecord {
  /** The watcher's cursor from before this record's tree was taken. */
  readonly cursor: ChangeCursor
  readonly point: PointCaptured
  readonly tree: LiveTree
  /** What building the manifest reported (unreadable, over the size limit, ...), by path. */
  readonly built: Map<string, SkippedPath>
}

/** Sessions whose records one watcher keeps. */
const SESSIONS_KEPT = 4

const records = new WeakMap<WorkspaceChangesService, BoundedMap<SessionId, LiveRecord>>()

const takeRecord = (service: WorkspaceChangesService, sessionId: SessionId) => {
  const kept = records.get(service)
  const record = kept?.get(sessionId)
  kept?.delete(sessionId)
  return record
}

const keepRecord = (service: WorkspaceChangesService, sessionId: SessionId, record: LiveRecord) => {
  let kept = records.get(service)
  if (kept === undefined) {
    kept = boundedMap(SESSIONS_KEPT)
    records.set(service, kept)
  }
  kept.set(sessionId, record)
}

export interface LiveSync {
  readonly service: WorkspaceChangesService
  /** The cursor to keep with this capture's point. */
  readonly cursor: ChangeCursor | undefined
  /** Set when the capture may be made from the change set. */
  readonly watched?: { readonly record: LiveRecord; readonly paths: ReadonlyArray<string> }
  /** Why the capture scans in full. */
  readonly reason?: string
}

/** Flushes the watcher and decides whether this capture may use the change set. */
export const liveSync = (sessionId: SessionId, base: PointCaptured | undefined) =>
  Effect.gen(function* () {
    const port = yield* Effect.serviceOption(WorkspaceChanges)
    if (Option.isNone(port)) return undefined
    const service = port.value
    const record = takeRecord(service, sessionId)
    const answer = yield* service.changesSince(record?.cursor)
    const sync = (reason: string): LiveSync => ({ service, cursor: answer.cursor, reason })
    if (answer._tag === "Unknown") return sync(answer.reason)
    if (record === undefined) return sync("no earlier capture of this session in this process")
    if (
      base === undefined ||
      record.point.manifestHash !== base.manifestHash ||
      record.point.statCacheHash !== base.statCacheHash
    )
      return sync("the session's latest point is not the one this process captured last")
    return { service, cursor: answer.cursor, watched: { record, paths: answer.paths } } satisfies LiveSync
  })

const bySkippedPath = (skipped: ReadonlyArray<SkippedPath>) => new Map(skipped.map((s) => [s.path, s]))

/** After a full scan: seeds the record of the next capture when the scan can stand for the tree. */
export const offerFullScan = (
  live: LiveSync,
  sessionId: SessionId,
  scan: ScanResult,
  built: Built,
  point: PointCaptured,
) =>
  Effect.gen(function* () {
    const why = live.cursor === undefined ? live.reason : unseedable(scan, live.service.unwatchedNames)
    if (live.cursor !== undefined && why === undefined) {
      keepRecord(live.service, sessionId, {
        cursor: live.cursor,
        point,
        tree: seedTree(scan),
        built: bySkippedPath(built.skipped),
      })
    }
    yield* live.service.noteCapture("full", live.reason ?? why)
  })

export interface WatchedCaptureInput extends CaptureContext {
  readonly baseManifest: { readonly hash: ContentHash; readonly value: Layered<ManifestEntry> }
  readonly baseStatCache: { readonly hash: ContentHash; readonly value: Layered<StatCacheEntry> } | undefined
  readonly options: CaptureOptions
  readonly live: LiveSync
}

/** The capture from the change set; undefined when it must scan in full after all. */
export const captureWatched = (input: WatchedCaptureInput) =>
  Effect.gen(function* () {
    const { live, base } = input
    const { record, paths } = input.live.watched!
    const stores = yield* storeDirectories
    const tree = record.tree
    const applied = yield* applyChanges(tree, paths, stores, input.budget)
    if (applied === "full") {
      yield* live.service.noteCapture("full", "a change the live tree cannot patch (see liveTree.ts)")
      return undefined
    }
    const { touched } = applied
    const previous = input.baseManifest.value.map
    const statCache = input.baseStatCache?.value.map ?? new Map<WorkspacePath, StatCacheEntry>()

    // Tracked beyond the tree, as a full capture tracks them: the previous point's paths that
    // changed, and checkpoints, write intents and declared paths the previous point did not hold.
    const tracker = yield* makeTracker(tree.entries, outOfScopeIn(tree, stores))
    for (const path of touched)
      if (!tree.entries.has(path) && previous.has(path)) yield* tracker.track(path, false)
    yield* tracker.trackSession(
      input.state,
      input.index,
      (path) => !previous.has(path) && !tree.entries.has(path),
    )
    yield* tracker.trackDeclared(input.options.declaredPaths ?? [])

    const scanned = new Map<WorkspacePath, ScannedPath>()
    for (const path of touched) {
      const entry = tree.entries.get(path)
      if (entry !== undefined) scanned.set(path, entry)
    }
    const built = yield* buildManifest({
      scanned,
      tracked: tracker.tracked,
      previous,
      statCache,
      settings: input.settings,
      startedAtMs: input.startedAtMs,
    })
    const affected = new Set<WorkspacePath>([...touched, ...tracker.tracked])
    const manifest = patched(previous, built.manifest, affected, sameManifestEntry)
    const nextStatCache = patched(statCache, built.statCache, affected, sameStatCacheEntry)
    const builtSkipped = new Map(record.built)
    for (const path of affected) builtSkipped.delete(path)
    for (const s of built.skipped) builtSkipped.set(s.path, s)

    const { manifestHash, statCacheHash } = yield* storeManifestAndStatCache(
      manifest,
      nextStatCache,
      tree.rules,
      input.baseStatCache === undefined
        ? { manifest: input.baseManifest }
        : { manifest: input.baseManifest, statCache: input.baseStatCache },
      affected,
    )
    const counts = countsOver(base, previous, manifest, affected)
    const point = yield* recordPoint(input.sessionId, {
      pointId: input.pointId,
      kind: "turn" satisfies PointKind,
      turnId: input.turnId,
      manifestHash,
      statCacheHash,
      reusedManifest: base.manifestHash === manifestHash,
      ...counts,
      skipped: [...tree.skipped.values(), ...tracker.skippedDeclared, ...builtSkipped.values()],
    })
    if (live.cursor !== undefined)
      keepRecord(live.service, input.sessionId, { cursor: live.cursor, point, tree, built: builtSkipped })
    yield* live.service.noteCapture("watched")
    return point
  })
