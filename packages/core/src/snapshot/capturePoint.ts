/**
 * `capturePoint(session, turn)`: records the workspace at a turn boundary as a point.
 *
 * Tracked set = paths of the previous point + paths of checkpoints and write intents + paths the
 * host declares + a bounded scan (`captureTracking.ts`); the manifest is built against the
 * previous point's manifest and stat cache (`pointBuild.ts`). In a live engine (the
 * `WorkspaceChanges` port provided) the scan is replaced by the watcher's change set applied to
 * the tree the last capture saw (`liveCapture.ts`) whenever the watcher can vouch for it. Without
 * it, the previous point's seal (`scanSeal.ts`) tells whether nothing changed (the point is the
 * previous one) or which directories did (only those are listed: `sealedCapture.ts`); otherwise
 * the whole tree is scanned, the files to read being read while it lists (`readDuringScan`). A
 * capture never fails the agent: any failure becomes a `NotCaptured` outcome with the reason.
 */

import type {
  PointCaptured,
  PointKind,
  SessionId,
  SkippedPath,
  TurnId,
  WorkspacePath,
} from "@rewind/contracts"
import { Cause, Clock, Context, Effect } from "effect"
import type { ArtifactStore } from "../ports/ArtifactStore.js"
import type { SessionStore } from "../ports/SessionStore.js"
import type { Workspace } from "../ports/Workspace.js"
import { loadSession, retryOnVersionConflict } from "../session/loadSession.js"
import type { SessionState } from "../session/sessionState.js"
import { makeTracker } from "./captureTracking.js"
import { captureWatched, liveSync, offerFullScan } from "./liveCapture.js"
import { pointArtifactCache } from "./pointArtifactCache.js"
import { buildManifest, loadBaseStatCache, readDuringScan, recordPoint, summarise } from "./pointBuild.js"
import { latestTurnPoint, type PointIndex, pointIdFor, readPointIndex } from "./pointIndex.js"
import {
  loadManifestLayers,
  type Manifest,
  type StatCache,
  storeManifestAndStatCache,
  storeStatCacheBeside,
} from "./pointManifest.js"
import { reusableDecisions, reusableFromStatCache } from "./scanReuse.js"
import { checkSeal, type SealCheck, sealCapture, sealStatFree } from "./scanSeal.js"
import { captureSealed } from "./sealedCapture.js"
import { matchBaseManifest, mayDeferManifest } from "./unchangedManifest.js"
import { type ScanProgress, scanWorkspace } from "./workspaceScan.js"

export { buildManifest, loadStatCache, recordPoint, sameStat, summarise } from "./pointBuild.js"
export { reusableDecisions } from "./scanReuse.js"

export interface CaptureSettings {
  /** Files larger than this are left out (`over_size_limit`). Default 16 MiB. */
  readonly maxFileBytes: number
  /**
   * The scan stops after this many entries (`budget`). Default 1,000,000: a bound on a runaway
   * tree (a capture holds about 1 KB per entry in memory), not on a real one; the old 100,000 cut
   * four copies of babel (110,696 files) short. Hosts and `rewind capture --max-files` lower it.
   */
  readonly maxFiles: number
  /** The scan stops after this long, by the Clock (`budget`). Default 30 s. */
  readonly timeBudgetMs: number
  /** The racy window: files modified this close to the capture are not cached. Default 2 s. */
  readonly racyWindowMs: number
}

export const DEFAULT_CAPTURE_SETTINGS: CaptureSettings = {
  maxFileBytes: 16 * 1024 * 1024,
  maxFiles: 1_000_000,
  timeBudgetMs: 30_000,
  racyWindowMs: 2_000,
}

/**
 * Whether a repeat capture may find the tree unchanged without decoding the base manifest
 * (`unchangedManifest.ts`), whether captures record and check seals (`scanSeal.ts`), and whether a
 * full scan has the files to read read while it lists (`readDuringScan`, pointBuild.ts): all on
 * unless a caller provides otherwise. Off, every capture takes the plain path, which is what the
 * property tests hold the shortcuts against.
 */
export class CaptureShortcuts extends Context.Reference<CaptureShortcuts>()("@rewind/core/CaptureShortcuts", {
  defaultValue: () => ({ matchUnchangedManifest: true, scanSeal: true, readDuringScan: true }),
}) {}

export interface CaptureProgress extends ScanProgress {
  readonly phase: "scan" | "hash" | "done"
  readonly hashed: number
  readonly toHash: number
}

/**
 * What every way of capturing a turn's point starts from: the turn, the session as loaded, its
 * point index and latest turn point, and the capture's settings, start and budget.
 */
export interface CaptureContext {
  readonly sessionId: SessionId
  readonly pointId: PointCaptured["pointId"]
  readonly turnId: TurnId
  readonly state: SessionState
  readonly index: PointIndex
  readonly base: PointCaptured
  readonly settings: CaptureSettings
  readonly startedAtMs: number
  readonly budget: { readonly maxFiles: number; readonly deadlineMs: number }
}

export interface CaptureOptions {
  readonly settings?: Partial<CaptureSettings>
  /** Paths the host knows about (e.g. a tool is about to write them); always tracked. */
  readonly declaredPaths?: ReadonlyArray<string>
  readonly onProgress?: (progress: CaptureProgress) => void
}

/**
 * How a capture found its point: by its base point's seal (nothing scanned, or with `rescanned`
 * only the directories the seal showed changed: `sealedCapture.ts`), from a live engine's watcher,
 * or by a scan of the whole tree; `unsealed` says why the point has no seal (its next capture scans
 * the whole tree), `fullScan` why a capture whose base point was sealed scanned the whole tree.
 */
export interface CaptureScan {
  readonly by: "seal" | "watcher" | "scan"
  readonly rescanned?: number
  readonly unsealed?: string
  readonly fullScan?: string
}

export type CaptureOutcome =
  | {
      readonly _tag: "Captured"
      readonly point: PointCaptured
      readonly existing: boolean
      /** Absent for a point found already captured. */
      readonly scan?: CaptureScan
    }
  | { readonly _tag: "NotCaptured"; readonly reason: string }

const captureOnce = (sessionId: SessionId, turnId: TurnId, options: CaptureOptions) =>
  Effect.gen(function* () {
    const settings = { ...DEFAULT_CAPTURE_SETTINGS, ...options.settings }
    const pointId = pointIdFor(sessionId, turnId)
    const index = yield* readPointIndex(sessionId)
    const existing = index.points.find((p) => p.pointId === pointId)
    if (existing !== undefined) return { _tag: "Captured", point: existing, existing: true } as const

    const state = yield* loadSession(sessionId)
    const startedAtMs = yield* Clock.currentTimeMillis
    const base = latestTurnPoint(index)
    const shortcuts = yield* CaptureShortcuts
    // Nothing changed since the base point's seal: the point is the base's, without a scan.
    const seal: SealCheck = shortcuts.scanSeal
      ? yield* checkSeal({ base, state, index, settings, declaredPaths: options.declaredPaths?.length ?? 0 })
      : { _tag: "Off", why: "seals are off" }
    if (seal._tag === "Unchanged" && base !== undefined) {
      // The base point again, for this turn: its manifest, stat cache, counts, skipped and seal.
      const { _tag, capturedAt: _capturedAt, ...same } = base
      const point = yield* recordPoint(sessionId, { ...same, pointId, turnId, reusedManifest: true })
      options.onProgress?.({ phase: "done", hashed: 0, toHash: 0, directories: 0, entries: 0 })
      return { _tag: "Captured", point, existing: false, scan: { by: "seal" } } as const
    }
    const budget = { maxFiles: settings.maxFiles, deadlineMs: startedAtMs + settings.timeBudgetMs }
    // The seal held but for some directories: list only those (`sealedCapture.ts`).
    let fullScan = seal._tag === "Scan" ? seal.why : undefined
    const context = (of: PointCaptured): CaptureContext => ({
      sessionId,
      pointId,
      turnId,
      state,
      index,
      base: of,
      settings,
      startedAtMs,
      budget,
    })
    if (seal._tag === "Scan" && seal.changes !== undefined && base !== undefined) {
      const sealedOutcome = yield* captureSealed({ ...context(base), check: seal, changes: seal.changes })
      if (sealedOutcome._tag === "Captured") {
        options.onProgress?.({ phase: "done", hashed: 0, toHash: 0, directories: 0, entries: 0 })
        const { point, rescanned, unsealed } = sealedOutcome
        return {
          _tag: "Captured",
          point,
          existing: false,
          scan: { by: "seal", rescanned, ...(unsealed === undefined ? {} : { unsealed }) },
        } as const
      }
      fullScan = sealedOutcome.reason
    }
    const baseStatCache = yield* loadBaseStatCache(base?.statCacheHash)
    const statCache: StatCache = baseStatCache?.value.map ?? new Map()
    // The live engine: flush the watcher first (what changed before now is then known), and when
    // the tree of this session's last capture can be patched, capture from the change set.
    const live = yield* liveSync(sessionId, base)
    // A repeat capture that may find the tree unchanged decodes the base manifest only if it must.
    const deferred =
      live === undefined &&
      base !== undefined &&
      baseStatCache !== undefined &&
      shortcuts.matchUnchangedManifest &&
      mayDeferManifest(base, statCache) &&
      // A host that keeps decoded manifests may hold this one: then it costs nothing to use.
      (yield* pointArtifactCache)?.getManifest(base.manifestHash) === undefined
    let baseManifest =
      base === undefined || deferred
        ? undefined
        : { hash: base.manifestHash, value: yield* loadManifestLayers(base.manifestHash) }

    if (live?.watched !== undefined && base !== undefined && baseManifest !== undefined) {
      const watched = yield* captureWatched({ ...context(base), baseManifest, baseStatCache, options, live })
      if (watched !== undefined) {
        options.onProgress?.({ phase: "done", hashed: 0, toHash: 0, directories: 0, entries: 0 })
        return { _tag: "Captured", point: watched, existing: false, scan: { by: "watcher" } } as const
      }
    }

    // Reported per directory: built without a spread, which cost more than the scan step itself.
    const onProgress = options.onProgress
    const progress = (phase: CaptureProgress["phase"], hashed: number, toHash: number, scan: ScanProgress) =>
      onProgress?.({ phase, hashed, toHash, directories: scan.directories, entries: scan.entries })
    let scanState: ScanProgress = { directories: 0, entries: 0 }
    // The files the build will read are read while the scan lists (on a first capture, all of them);
    // once the scan is done, the progress is theirs.
    let listed = false
    const reads = shortcuts.readDuringScan
      ? yield* readDuringScan(statCache, settings, (hashed, offered) => {
          if (listed) progress("hash", hashed, offered, scanState)
        })
      : undefined
    const scan = yield* scanWorkspace(
      budget,
      onProgress === undefined
        ? undefined
        : (p) => {
            scanState = p
            progress("scan", 0, 0, p)
          },
      deferred
        ? reusableFromStatCache(statCache, baseStatCache?.value.rules)
        : reusableDecisions(baseManifest?.value.map ?? new Map(), baseStatCache?.value.rules),
      // A capture that may seal its point seals its listings as it scans (no second listing).
      seal._tag === "Scan" ? yield* sealStatFree : undefined,
      reads?.onEntry,
    )
    listed = true
    const match =
      deferred && base !== undefined
        ? yield* matchBaseManifest(scan, statCache, base.manifestHash, settings.maxFileBytes)
        : undefined
    if (base !== undefined && baseManifest === undefined && match?._tag === "Differs")
      baseManifest = {
        hash: base.manifestHash,
        value: yield* loadManifestLayers(base.manifestHash, match.bytes),
      }
    const tracker = yield* makeTracker(scan.entries, scan.outOfScope)
    // (Where the manifest matched, every path of it was scanned: there is nothing to track.)
    if (baseManifest !== undefined)
      for (const path of baseManifest.value.map.keys())
        if (!scan.entries.has(path)) yield* tracker.track(path, false)
    yield* tracker.trackSession(state, index)
    yield* tracker.trackDeclared(options.declaredPaths ?? [])

    let unsealed: string | undefined
    const sealOf = (skipped: ReadonlyArray<SkippedPath>, manifest?: Manifest) =>
      sealCapture({
        check: seal,
        scan,
        tracked: tracker.tracked,
        absent: (path) => manifest?.get(path as WorkspacePath)?.kind === "tombstone",
        skipped,
        startedAtMs,
        racyWindowMs: settings.racyWindowMs,
      }).pipe(
        Effect.map((outcome) => {
          if ("unsealed" in outcome) unsealed = outcome.unsealed
          return "scanSeal" in outcome ? { scanSeal: outcome.scanSeal } : {}
        }),
      )
    const scanned = (): CaptureScan => ({
      by: "scan",
      ...(unsealed === undefined ? {} : { unsealed }),
      ...(fullScan === undefined ? {} : { fullScan }),
    })
    if (
      match?._tag === "Same" &&
      tracker.tracked.size === 0 &&
      base !== undefined &&
      baseStatCache !== undefined
    ) {
      const skipped: Array<SkippedPath> = [...scan.skipped, ...tracker.skippedDeclared]
      const point = yield* recordPoint(sessionId, {
        pointId,
        kind: "turn" satisfies PointKind,
        turnId,
        manifestHash: base.manifestHash,
        statCacheHash: yield* storeStatCacheBeside(statCache, scan.rules, baseStatCache),
        reusedManifest: true,
        files: match.files,
        links: match.links,
        tombstones: 0,
        bytes: match.bytes,
        skipped,
        ...(yield* sealOf(skipped)),
      })
      progress("done", 0, 0, scanState)
      return { _tag: "Captured", point, existing: false, scan: scanned() } as const
    }
    if (base !== undefined && baseManifest === undefined)
      // Matched, but a checkpoint or a declared path outside the scan is to be tracked too: decoded
      // from the bytes the match read.
      baseManifest = {
        hash: base.manifestHash,
        value: yield* loadManifestLayers(
          base.manifestHash,
          match?._tag === "Same" ? match.manifest : undefined,
        ),
      }
    const previous: Manifest = baseManifest?.value.map ?? new Map()

    const readAhead = reads === undefined ? undefined : yield* reads.finish
    const readBefore = readAhead?.size ?? 0
    const built = yield* buildManifest({
      scanned: scan.entries,
      ...(readAhead === undefined ? {} : { readAhead }),
      tracked: tracker.tracked,
      previous,
      statCache,
      settings,
      startedAtMs,
      // Counted on from what was read during the scan.
      onHashed: (hashed, toHash) => progress("hash", readBefore + hashed, readBefore + toHash, scanState),
    })
    const { manifestHash, statCacheHash } = yield* storeManifestAndStatCache(
      built.manifest,
      built.statCache,
      scan.rules,
      baseManifest === undefined
        ? undefined
        : baseStatCache === undefined
          ? { manifest: baseManifest }
          : { manifest: baseManifest, statCache: baseStatCache },
    )
    const skipped: Array<SkippedPath> = [...scan.skipped, ...tracker.skippedDeclared, ...built.skipped]
    const point = yield* recordPoint(sessionId, {
      pointId,
      kind: "turn" satisfies PointKind,
      turnId,
      manifestHash,
      statCacheHash,
      reusedManifest: base !== undefined && base.manifestHash === manifestHash,
      ...summarise(built.manifest),
      skipped,
      ...(yield* sealOf(skipped, built.manifest)),
    })
    if (live !== undefined) yield* offerFullScan(live, sessionId, scan, built, point)
    progress("done", 0, 0, scanState)
    return { _tag: "Captured", point, existing: false, scan: scanned() } as const
  })

/** Captures the point of (session, turn), or finds the one already captured. Never fails. */
export const capturePoint = (
  sessionId: SessionId,
  turnId: TurnId,
  options: CaptureOptions = {},
): Effect.Effect<CaptureOutcome, never, Workspace | ArtifactStore | SessionStore> =>
  // Another writer may have appended meanwhile (a racing capture of the same turn may even have
  // won): each attempt re-reads the index, finds that point or records its own.
  // Scoped: what a capture forks (`readDuringScan`) stops with the attempt that forked it.
  retryOnVersionConflict(Effect.scoped(captureOnce(sessionId, turnId, options))).pipe(
    Effect.catchAllCause((cause) =>
      Effect.succeed<CaptureOutcome>({
        _tag: "NotCaptured",
        reason: `no point for turn ${turnId}: ${causeMessage(cause)}`,
      }),
    ),
  )

const causeMessage = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  return error instanceof Error || (typeof error === "object" && error !== null && "message" in error)
    ? String((error as { message: unknown }).message)
    : String(error)
}
