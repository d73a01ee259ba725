/**
 * `capturePoint(session, turn)`: records the workspace at a turn boundary as a point.
 *
 * Tracked set = paths of the previous point + paths of checkpoints and write intents + paths the
 * host declares + a bounded scan. A file whose stat (size, mtime ns, inode, mode) matches the stat
 * cache keeps its hash without being read; a file modified within `racyWindowMs` of the capture
 * is hashed but not cached, so it is re-read next time (its mtime cannot tell a later edit apart).
 * A tracked path that is gone becomes a tombstone; one that cannot be read keeps its previous
 * entry and is reported as unreadable: unreadable is never absent. A capture never fails the
 * agent: any failure becomes a `NotCaptured` outcome with the reason.
 */
import {
  type ArtifactStoreError,
  type ContentHash,
  type FileStat,
  PointCaptured,
  type PointKind,
  type SessionId,
  type SkippedPath,
  type TurnId,
  type WorkspacePath,
  workspacePathProblem,
} from "@rewind/contracts"
import { Cause, Clock, Effect, Either, Fiber, Option } from "effect"
import { ArtifactStore } from "../ports/ArtifactStore.js"
import { SessionStore } from "../ports/SessionStore.js"
import { Workspace, type WorkspaceError } from "../ports/Workspace.js"
import { loadSession, retryOnVersionConflict } from "../session/loadSession.js"
import { makeProtectionCheck } from "../workspace/protection.js"
import { latestTurnPoint, pointIdFor, readPointIndex } from "./pointIndex.js"
import {
  loadManifestLayers,
  loadStatCacheLayers,
  type Manifest,
  type ManifestEntry,
  type StatCache,
  type StatCacheEntry,
  storeManifestAndStatCache,
} from "./pointManifest.js"
import { type ScannedPath, type ScanProgress, type ScanReuse, scanWorkspace } from "./workspaceScan.js"

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

/** A capture stores what it read in batches of at most this many bytes or files. */
const BATCH_BYTES = 8 * 1024 * 1024
const BATCH_FILES = 1_024
/** Files read by one `readMany`. */
const READ_GROUP_FILES = 256
/** Batches being stored at once; with the one being read, a capture holds at most 4 × BATCH_BYTES. */
const STORES_IN_FLIGHT = 3

/**
 * Whether the stat cache vouches for the file: size, mtime, ctime, inode and mode all as cached.
 * ctime is what catches an edit whose mtime was put back (`touch -m -d`): a process cannot set it.
 */
export const sameStat = (
  cached: StatCacheEntry,
  stat: Pick<FileStat, "size" | "mtimeNs" | "ctimeNs" | "inode" | "mode">,
) =>
  cached.size === stat.size &&
  cached.mtimeNs === stat.mtimeNs &&
  cached.ctimeNs === stat.ctimeNs &&
  cached.inode === stat.inode &&
  cached.mode === stat.mode

/** Whether a stat failure means nothing is at the path: a directory on the way is a file or a link. */
const isNotThere = (error: WorkspaceError) =>
  (error._tag === "PathRefused" && error.reason === "symlink_in_path") ||
  (error._tag === "WorkspaceIoError" && error.code === "ENOTDIR")

const kindDetail = (kind: FileStat["kind"]) =>
  kind === "other" ? "a FIFO, socket or device, not a regular file" : `a ${kind}, not a regular file`

/** The stat cache of a point (with its layers); undefined when there is none or it cannot be read. */
const loadBaseStatCache = (hash: ContentHash | undefined) =>
  hash === undefined
    ? Effect.succeed(undefined)
    : // A lost or damaged cache only costs re-hashing.
      Effect.orElseSucceed(
        Effect.map(loadStatCacheLayers(hash), (value) => ({ hash, value })),
        () => undefined,
      )

/** The stat cache of a point; empty when there is none or it cannot be read. */
export const loadStatCache = (hash: ContentHash | undefined) =>
  Effect.map(loadBaseStatCache(hash), (loaded) => loaded?.value.map ?? (new Map() as StatCache))

interface Built {
  readonly manifest: Map<WorkspacePath, ManifestEntry>
  readonly statCache: Map<WorkspacePath, StatCacheEntry>
  readonly skipped: Array<SkippedPath>
}

/**
 * Builds a manifest of `paths` (or of the whole scan) against a previous manifest and stat cache.
 * Shared by turn captures and rescue points.
 */
export const buildManifest = (input: {
  readonly scanned: ReadonlyMap<WorkspacePath, ScannedPath>
  /** Paths to include even where the scan did not reach them; repeats and scanned paths are fine. */
  readonly tracked: Iterable<WorkspacePath>
  readonly previous: Manifest
  readonly statCache: StatCache
  readonly settings: CaptureSettings
  readonly startedAtMs: number
  readonly onHashed?: (hashed: number, toHash: number) => void
}) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const artifacts = yield* ArtifactStore
    const manifest = new Map<WorkspacePath, ManifestEntry>()
    const statCache = new Map<WorkspacePath, StatCacheEntry>()
    const skipped: Array<SkippedPath> = []
    const racyFromNs = BigInt(input.startedAtMs - input.settings.racyWindowMs) * 1_000_000n
    const keepPrevious = (path: WorkspacePath) => {
      const before = input.previous.get(path)
      if (before !== undefined) manifest.set(path, before)
    }

    // Tracked paths the scan did not see: stat each one (it may be gone, ignored or out of budget).
    // Kept apart from the scan's map, which is the bulk of the candidates and is not copied.
    const unscanned = new Map<WorkspacePath, ScannedPath>()
    const statted = new Set<WorkspacePath>()
    for (const path of input.tracked) {
      if (input.scanned.has(path) || statted.has(path)) continue
      statted.add(path)
      const stat = yield* Effect.either(workspace.stat(path))
      if (Either.isLeft(stat)) {
        // A directory on the way is now a file or a link: nothing is at this path in the tree (a
        // link is recorded as a link by the scan, never followed), so it is absent, not unreadable.
        if (isNotThere(stat.left)) {
          manifest.set(path, { kind: "tombstone" })
          continue
        }
        skipped.push({ path, reason: "unreadable", detail: stat.left.message })
        keepPrevious(path)
        continue
      }
      if (Option.isNone(stat.right)) {
        manifest.set(path, { kind: "tombstone" })
        continue
      }
      if (stat.right.value.kind === "symlink") {
        const target = yield* Effect.either(workspace.readLink(path))
        if (Either.isLeft(target)) {
          skipped.push({ path, reason: "unreadable", detail: target.left.message })
          keepPrevious(path)
        } else unscanned.set(path, { stat: stat.right.value, target: target.right })
        continue
      }
      unscanned.set(path, { stat: stat.right.value })
    }

    const toRead: Array<[WorkspacePath, FileStat]> = []
    const consider = (path: WorkspacePath, { stat, target }: ScannedPath) => {
      if (stat.kind === "symlink" && target !== undefined) {
        manifest.set(path, { kind: "link", target })
      } else if (stat.kind !== "file") {
        skipped.push({ path, reason: "not_a_regular_file", detail: kindDetail(stat.kind) })
      } else if (stat.size > input.settings.maxFileBytes) {
        skipped.push({
          path,
          reason: "over_size_limit",
          detail: `${stat.size} bytes > ${input.settings.maxFileBytes}`,
        })
        keepPrevious(path)
      } else {
        const cached = input.statCache.get(path)
        if (cached !== undefined && sameStat(cached, stat)) {
          // The previous entry object when it says the same: an unchanged tree allocates nothing
          // per file, and the delta against the previous manifest is found by identity.
          const before = input.previous.get(path)
          manifest.set(
            path,
            before?.kind === "file" &&
              before.hash === cached.hash &&
              before.mode === stat.mode &&
              before.size === stat.size
              ? before
              : { kind: "file", hash: cached.hash, mode: stat.mode, size: stat.size },
          )
          statCache.set(path, cached)
        } else toRead.push([path, stat])
      }
    }
    for (const [path, scanned] of input.scanned) consider(path, scanned)
    for (const [path, scanned] of unscanned) consider(path, scanned)

    // Files are read one by one and stored in batches (`putMany`: one transaction per batch where
    // the store has them), bounded in bytes. Up to STORES_IN_FLIGHT batches are being stored while
    // the next one is read: a store that compresses off the main thread takes longer per batch than
    // the read of one, and with a single batch in flight the reads stood waiting for it.
    let hashed = 0
    const storing: Array<Fiber.RuntimeFiber<void, ArtifactStoreError>> = []
    let batch: Array<{
      readonly path: WorkspacePath
      readonly stat: FileStat
      readonly mode: number
      readonly content: Uint8Array
    }> = []
    let batchBytes = 0
    const store = (stored: typeof batch) =>
      Effect.gen(function* () {
        const hashes = yield* artifacts.putMany(stored.map((f) => f.content))
        stored.forEach(({ path, stat, mode, content }, i) => {
          const hash = hashes[i]!
          manifest.set(path, { kind: "file", hash, mode, size: content.byteLength })
          // The racy rule: an mtime this close to now may not change on the next edit, so the stat
          // cannot vouch for the content next time; such a file is read again.
          if (stat.mtimeNs < racyFromNs && stat.size === content.byteLength && stat.mode === mode) {
            statCache.set(path, {
              size: stat.size,
              mtimeNs: stat.mtimeNs,
              ctimeNs: stat.ctimeNs,
              inode: stat.inode,
              mode: stat.mode,
              hash,
            })
          }
        })
      })
    const finishStoring = Effect.suspend(() =>
      Effect.forEach(storing.splice(0), Fiber.join, { discard: true }),
    )
    const flush = Effect.gen(function* () {
      if (batch.length === 0) return
      const stored = batch
      batch = []
      batchBytes = 0
      if (storing.length >= STORES_IN_FLIGHT) yield* Fiber.join(storing.shift()!)
      storing.push(yield* Effect.fork(store(stored)))
    })
    // Read in groups (`readMany` checks the directories they share once), each at most
    // READ_GROUP_FILES files or, by the sizes the scan saw, about BATCH_BYTES.
    for (let start = 0; start < toRead.length; ) {
      let end = start
      let expected = 0
      while (end < toRead.length && end - start < READ_GROUP_FILES && expected < BATCH_BYTES) {
        expected += toRead[end]![1].size
        end++
      }
      const group = toRead.slice(start, end)
      start = end
      const reads = yield* workspace.readMany(group.map(([path]) => path))
      for (let i = 0; i < group.length; i++) {
        const [path, stat] = group[i]!
        const read = reads[i]!
        hashed++
        if (hashed % 256 === 0) input.onHashed?.(hashed, toRead.length)
        if (Either.isLeft(read)) {
          const changing = read.left._tag === "WorkspaceIoError" && read.left.code === "ECHANGED"
          skipped.push({
            path,
            reason: changing ? "changed_during_read" : "unreadable",
            detail: read.left.message,
          })
          keepPrevious(path)
          continue
        }
        if (Option.isNone(read.right)) {
          // Gone between the scan and the read: absent now.
          manifest.set(path, { kind: "tombstone" })
          continue
        }
        const file = read.right.value
        batch.push({ path, stat, mode: file.mode, content: file.content })
        batchBytes += file.content.byteLength
        if (batchBytes >= BATCH_BYTES || batch.length >= BATCH_FILES) yield* flush
      }
    }
    yield* flush
    yield* finishStoring
    input.onHashed?.(hashed, toRead.length)
    return { manifest, statCache, skipped } satisfies Built
  })

/** Records a manifest as a point of the session (used by turn captures and rescue points). */
export const recordPoint = (sessionId: SessionId, point: Omit<PointCaptured, "_tag" | "capturedAt">) =>
  Effect.gen(function* () {
    const state = yield* loadSession(sessionId)
    const store = yield* SessionStore
    const at = yield* Clock.currentTimeMillis
    const event = new PointCaptured({ ...point, capturedAt: at })
    yield* store.append({ sessionId, expectedVersion: state.version, events: [event], at })
    return event
  })

export const summarise = (manifest: Manifest) => {
  let files = 0
  let links = 0
  let tombstones = 0
  let bytes = 0
  for (const e of manifest.values()) {
    if (e.kind === "file") {
      files++
      bytes += e.size
    } else if (e.kind === "link") links++
    else tombstones++
  }
  return { files, links, tombstones, bytes }
}

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

    const progress = (p: Omit<CaptureProgress, "directories" | "entries">, scan: ScanProgress) =>
      options.onProgress?.({ ...scan, ...p })
    let scanState: ScanProgress = { directories: 0, entries: 0 }
    const scan = yield* scanWorkspace(
      { maxFiles: settings.maxFiles, deadlineMs: startedAtMs + settings.timeBudgetMs },
      (p) => {
        scanState = p
        progress({ phase: "scan", hashed: 0, toHash: 0 }, p)
      },
      reusableDecisions(previous, baseStatCache?.value.rules),
    )
    // Tracked beyond the scan: the previous point's paths, checkpoints, write intents and what the
    // host declares — each only while the protection policy leaves it in scope (a path that became
    // ignored drops out; one under `.git` or the store never enters). The scan already decided
    // every path in a directory it listed; the rest are asked of the policy. What the host declared
    // and cannot be taken is reported, never dropped silently.
    const skippedDeclared: Array<SkippedPath> = []
    const tracked = new Set<WorkspacePath>()
    const protectionOf = yield* makeProtectionCheck()
    const track = (path: WorkspacePath, declaredByHost: boolean) =>
      Effect.gen(function* () {
        if (scan.entries.has(path) || tracked.has(path)) return
        const decided = scan.outOfScope(path)
        const protection = decided === false ? Option.none() : yield* protectionOf(path)
        if (Option.isSome(protection)) {
          if (declaredByHost)
            skippedDeclared.push({ path, reason: "protected", detail: protection.value.message })
          return
        }
        if (declaredByHost) {
          // What the host names under a linked directory is not a path of this tree (links are
          // recorded as links, never followed): say so rather than record it absent.
          const at = yield* Effect.either((yield* Workspace).stat(path))
          if (Either.isLeft(at) && at.left._tag === "PathRefused") {
            skippedDeclared.push({ path, reason: "not_a_regular_file", detail: at.left.message })
            return
          }
        }
        tracked.add(path)
      })
    for (const path of previous.keys()) if (!scan.entries.has(path)) yield* track(path, false)
    for (const c of state.checkpoints)
      if (workspacePathProblem(c.path) === undefined) yield* track(c.path, false)
    for (const intent of index.writeIntents) for (const e of intent.entries) yield* track(e.path, false)
    for (const p of options.declaredPaths ?? []) {
      const problem = typeof p === "string" ? workspacePathProblem(p) : "a declared path must be a string"
      if (problem === undefined) yield* track(p as WorkspacePath, true)
      else skippedDeclared.push({ path: String(p), reason: "invalid_path", detail: problem })
    }

    const built = yield* buildManifest({
      scanned: scan.entries,
      tracked,
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
      skipped: [...scan.skipped, ...skippedDeclared, ...built.skipped],
    })
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
