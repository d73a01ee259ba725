/**
 * `capturePoint(session, turn)`: records the workspace at a turn boundary as a point.
 *
 * Tracked set = paths of the previous point + paths of checkpoints and write intents + paths the
 * host declares + a bounded scan (`captureTracking.ts`); the manifest is built against the
 * previous point's manifest and stat cache (`pointBuild.ts`). In a live engine (the
 * `WorkspaceChanges` port provided) the scan is replaced by the watcher's change set applied to
 * the tree the last capture saw (`liveCapture.ts`) whenever the watcher can vouch for it;
 * otherwise, and without the port, the whole tree is scanned. A capture never fails the agent:
 * any failure becomes a `NotCaptured` outcome with the reason.
 */

import type { PointCaptured } from "@rewind/contracts"
import {
  type PointKind,
  type SessionId,
  type SkippedPath,
  type TurnId,
  type WorkspacePath,
  workspacePathProblem,
} from "@rewind/contracts"
import { Cause, Clock, Effect } from "effect"
import type { ArtifactStore } from "../ports/ArtifactStore.js"
import type { SessionStore } from "../ports/SessionStore.js"
import type { Workspace } from "../ports/Workspace.js"
import { loadSession, retryOnVersionConflict } from "../session/loadSession.js"
import { makeTracker } from "./captureTracking.js"
import { captureWatched, liveSync, offerFullScan } from "./liveCapture.js"
import { buildManifest, loadBaseStatCache, recordPoint, summarise } from "./pointBuild.js"
import { latestTurnPoint, pointIdFor, readPointIndex } from "./pointIndex.js"
import {
  loadManifestLayers,
  type Manifest,
  type StatCache,
  storeManifestAndStatCache,
} from "./pointManifest.js"
import { type ScanProgress, type ScanReuse, scanWorkspace } from "./workspaceScan.js"

export { buildManifest, loadStatCache, recordPoint, sameStat, summarise } from "./pointBuild.js"

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

export interface CaptureProgress extends ScanProgress {
  readonly phase: "scan" | "hash" | "done"
  readonly hashed: number
  readonly toHash: number
}

export interface CaptureOptions {
  readonly settings?: Partial<CaptureSettings>
  /** Paths the host knows about (e.g. a tool is about to write them); always tracked. */
  readonly declaredPaths?: ReadonlyArray<string>
  readonly onProgress?: (progress: CaptureProgress) => void
}

export type CaptureOutcome =
  | { readonly _tag: "Captured"; readonly point: PointCaptured; readonly existing: boolean }
  | { readonly _tag: "NotCaptured"; readonly reason: string }

/**
 * The previous point's ignore decisions, for the scan to reuse: its files and links were in scope,
 * and so was every directory above one. Only offered with the rules identity they were made under.
 */
export const reusableDecisions = (previous: Manifest, rules: string | undefined): ScanReuse | undefined => {
  if (rules === undefined || previous.size === 0) return undefined
  let directories: Set<string> | undefined
  const directoriesInScope = () => {
    if (directories !== undefined) return directories
    const found = new Set<string>()
    for (const [path, entry] of previous) {
      if (entry.kind === "tombstone") continue
      for (let slash = path.lastIndexOf("/"); slash > 0; slash = path.lastIndexOf("/", slash - 1)) {
        const dir = path.slice(0, slash)
        if (found.has(dir)) break
        found.add(dir)
      }
    }
    directories = found
    return found
  }
  return {
    rules,
    fileInScope: (path) => {
      const entry = previous.get(path as WorkspacePath)
      return entry !== undefined && entry.kind !== "tombstone"
    },
    directoryInScope: (path) => directoriesInScope().has(path),
  }
}

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
    const baseManifest =
      base === undefined
        ? undefined
        : { hash: base.manifestHash, value: yield* loadManifestLayers(base.manifestHash) }
    const previous: Manifest = baseManifest?.value.map ?? new Map()
    const baseStatCache = yield* loadBaseStatCache(base?.statCacheHash)
    const statCache: StatCache = baseStatCache?.value.map ?? new Map()
    const budget = { maxFiles: settings.maxFiles, deadlineMs: startedAtMs + settings.timeBudgetMs }

    // The live engine: flush the watcher first (what changed before now is then known), and when
    // the tree of this session's last capture can be patched, capture from the change set.
    const live = yield* liveSync(sessionId, base)
    if (live?.watched !== undefined && base !== undefined && baseManifest !== undefined) {
      const watched = yield* captureWatched({
        sessionId,
        pointId,
        turnId,
        state,
        index,
        base,
        baseManifest,
        baseStatCache,
        settings,
        startedAtMs,
        budget,
        options,
        live,
      })
      if (watched !== undefined) {
        options.onProgress?.({ phase: "done", hashed: 0, toHash: 0, directories: 0, entries: 0 })
        return { _tag: "Captured", point: watched, existing: false } as const
      }
    }

    const progress = (p: Omit<CaptureProgress, "directories" | "entries">, scan: ScanProgress) =>
      options.onProgress?.({ ...scan, ...p })
    let scanState: ScanProgress = { directories: 0, entries: 0 }
    const scan = yield* scanWorkspace(
      budget,
      (p) => {
        scanState = p
        progress({ phase: "scan", hashed: 0, toHash: 0 }, p)
      },
      reusableDecisions(previous, baseStatCache?.value.rules),
    )
    const tracker = yield* makeTracker(scan.entries, scan.outOfScope)
    for (const path of previous.keys()) if (!scan.entries.has(path)) yield* tracker.track(path, false)
    for (const c of state.checkpoints)
      if (workspacePathProblem(c.path) === undefined) yield* tracker.track(c.path, false)
    for (const intent of index.writeIntents)
      for (const e of intent.entries) yield* tracker.track(e.path, false)
    yield* tracker.trackDeclared(options.declaredPaths ?? [])

    const built = yield* buildManifest({
      scanned: scan.entries,
      tracked: tracker.tracked,
      previous,
      statCache,
      settings,
      startedAtMs,
      onHashed: (hashed, toHash) => progress({ phase: "hash", hashed, toHash }, scanState),
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
    const point = yield* recordPoint(sessionId, {
      pointId,
      kind: "turn" satisfies PointKind,
      turnId,
      manifestHash,
      statCacheHash,
      reusedManifest: base !== undefined && base.manifestHash === manifestHash,
      ...summarise(built.manifest),
      skipped: [...scan.skipped, ...tracker.skippedDeclared, ...built.skipped] satisfies Array<SkippedPath>,
    })
    if (live !== undefined) yield* offerFullScan(live, sessionId, scan, built, point)
    progress({ phase: "done", hashed: 0, toHash: 0 }, scanState)
    return { _tag: "Captured", point, existing: false } as const
  })

/** Captures the point of (session, turn), or finds the one already captured. Never fails. */
export const capturePoint = (
  sessionId: SessionId,
  turnId: TurnId,
  options: CaptureOptions = {},
): Effect.Effect<CaptureOutcome, never, Workspace | ArtifactStore | SessionStore> =>
  // Another writer may have appended meanwhile (a racing capture of the same turn may even have
  // won): each attempt re-reads the index, finds that point or records its own.
  retryOnVersionConflict(captureOnce(sessionId, turnId, options)).pipe(
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
