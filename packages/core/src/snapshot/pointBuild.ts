/**
 * Building a point's manifest from what a scan (or a live engine's change set) found, and
 * recording it: shared by turn captures, the live engine's captures and rescue points. A file
 * whose stat (size, mtime ns, ctime ns, inode, mode) matches the stat cache keeps its hash without
 * being read; a file modified within `racyWindowMs` of the capture is hashed but not cached, so it
 * is re-read next time. A tracked path that is gone becomes a tombstone; one that cannot be read
 * keeps its previous entry and is reported as unreadable: unreadable is never absent. A full scan
 * may have the files it will read read while it lists (`readDuringScan`); the build decides every
 * candidate the same way either way, and takes such a read only for the entry it was made for.
 */
import {
  type ArtifactStoreError,
  aFileKind,
  type ContentHash,
  type FileStat,
  PointCaptured,
  type SessionId,
  type SkippedPath,
  type WorkspacePath,
} from "@rewind/contracts"
import { Clock, Effect, Either, Option, type Scope } from "effect"
import type { ArtifactStore } from "../ports/ArtifactStore.js"
import { SessionStore } from "../ports/SessionStore.js"
import { Workspace } from "../ports/Workspace.js"
import { loadSession } from "../session/loadSession.js"
import { nothingCanBeThere } from "../workspace/pathAbsence.js"
import type { CaptureSettings } from "./capturePoint.js"
import { applyOutcome, type BuildInto, feedReads, type ReadOutcome, readAndStore } from "./contentBatches.js"
import {
  loadStatCacheLayers,
  type Manifest,
  type ManifestEntry,
  type StatCache,
  type StatCacheEntry,
} from "./pointManifest.js"
import type { ScannedPath } from "./workspaceScan.js"

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

/** Why a path of this kind is left out, in the words every report uses. */
export const kindDetail = (kind: FileStat["kind"]) => `${aFileKind(kind)}, not a regular file`

/** The stat cache of a point (with its layers); undefined when there is none or it cannot be read. */
export const loadBaseStatCache = (hash: ContentHash | undefined) =>
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

export interface Built {
  readonly manifest: Map<WorkspacePath, ManifestEntry>
  readonly statCache: Map<WorkspacePath, StatCacheEntry>
  readonly skipped: Array<SkippedPath>
}

/** A file read while the scan was still listing: what it came to, and the stat it was read under. */
export interface ReadAhead {
  readonly stat: FileStat
  readonly outcome: ReadOutcome
}

interface BuildInput {
  readonly scanned: ReadonlyMap<WorkspacePath, ScannedPath>
  /**
   * Files read during the scan (`readDuringScan`): a candidate to read whose entry here was read
   * under its very stat (the same scanned object) takes that outcome instead of a read.
   */
  readonly readAhead?: ReadonlyMap<WorkspacePath, ReadAhead>
  /** Paths to include even where the scan did not reach them; repeats and scanned paths are fine. */
  readonly tracked: Iterable<WorkspacePath>
  readonly previous: Manifest
  readonly statCache: StatCache
  readonly settings: CaptureSettings
  readonly startedAtMs: number
  readonly onHashed?: (hashed: number, toHash: number) => void
}

/**
 * Builds a manifest of `paths` (or of the whole scan) against a previous manifest and stat cache.
 * Shared by turn captures and rescue points.
 */
export const buildManifest = (input: BuildInput) =>
  Effect.gen(function* () {
    const manifest = new Map<WorkspacePath, ManifestEntry>()
    const into: BuildInto = {
      manifest,
      statCache: new Map(),
      skipped: [],
      keepPrevious: (path) => {
        const before = input.previous.get(path)
        if (before !== undefined) manifest.set(path, before)
      },
    }
    const racyFromNs = BigInt(input.startedAtMs - input.settings.racyWindowMs) * 1_000_000n
    const unscanned = yield* statUnscanned(input, into)
    const toRead: Array<[WorkspacePath, FileStat]> = []
    const apply = applyOutcome(into, racyFromNs)
    const readAhead = input.readAhead
    const read = (path: WorkspacePath, stat: FileStat) => {
      const ahead = readAhead?.get(path)
      if (ahead !== undefined && ahead.stat === stat) apply(path, stat, ahead.outcome)
      else toRead.push([path, stat])
    }
    for (const [path, scanned] of input.scanned) consider(input, into, read, path, scanned)
    for (const [path, scanned] of unscanned) consider(input, into, read, path, scanned)
    yield* readAndStore(toRead, into, racyFromNs, input.onHashed)
    return { manifest, statCache: into.statCache, skipped: into.skipped } satisfies Built
  })

/**
 * Tracked paths the scan did not see: stat each one (it may be gone, ignored or out of budget).
 * Kept apart from the scan's map, which is the bulk of the candidates and is not copied.
 */
const statUnscanned = (input: BuildInput, into: BuildInto) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const { manifest, skipped, keepPrevious } = into
    const unscanned = new Map<WorkspacePath, ScannedPath>()
    const statted = new Set<WorkspacePath>()
    for (const path of input.tracked) {
      if (input.scanned.has(path) || statted.has(path)) continue
      statted.add(path)
      const stat = yield* Effect.either(workspace.stat(path))
      if (Either.isLeft(stat)) {
        // A directory on the way is now a file or a link: nothing is at this path in the tree (a
        // link is recorded as a link by the scan, never followed), so it is absent, not unreadable.
        if (nothingCanBeThere(stat.left)) {
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
    return unscanned
  })

/** The stat cache's entry for a file whose stat it vouches for (see `sameStat`). */
const vouchedFor = (statCache: StatCache, path: WorkspacePath, stat: FileStat) => {
  const cached = statCache.get(path)
  return cached !== undefined && sameStat(cached, stat) ? cached : undefined
}

/**
 * Reads, while a full scan is still listing, the files its build will read (a regular file within
 * the size limit that the stat cache does not vouch for: what `consider` reads), so the reads,
 * hashes and stores of a first capture run beside the listing instead of after it. The build
 * takes an outcome only for the very entry it was read for (`BuildInput.readAhead`); a file read
 * for an entry the scan's answer does not hold (a scan run again) is read again, and its stored
 * content is only unreferenced (the GC's to sweep). The reading runs in the caller's scope: a
 * capture that ends without `finish` (its scan failed, or it found the tree unchanged) stops it.
 */
export const readDuringScan = (
  statCache: StatCache,
  settings: CaptureSettings,
  /** Told how many of the files offered so far were read and stored (every 256, and at `finish`). */
  onHashed?: (hashed: number, offered: number) => void,
): Effect.Effect<
  {
    /** Told each entry the scan takes in scope (`scanWorkspace`'s `onEntry`). */
    readonly onEntry: (path: WorkspacePath, entry: ScannedPath) => void
    /** No more entries: every outcome of what was offered, by path, once it is stored. */
    readonly finish: Effect.Effect<ReadonlyMap<WorkspacePath, ReadAhead>, ArtifactStoreError>
  },
  never,
  Workspace | ArtifactStore | Scope.Scope
> =>
  Effect.gen(function* () {
    const outcomes = new Map<WorkspacePath, ReadAhead>()
    const reads = yield* feedReads((path, stat, outcome) => outcomes.set(path, { stat, outcome }), onHashed)
    return {
      onEntry: (path, { stat }) => {
        if (stat.kind !== "file" || stat.size > settings.maxFileBytes) return
        if (vouchedFor(statCache, path, stat) === undefined) reads.offer(path, stat)
      },
      finish: Effect.as(reads.finish, outcomes),
    }
  })

/** Decides a candidate: a link, skipped, vouched for by the stat cache, or to be read. */
const consider = (
  input: BuildInput,
  into: BuildInto,
  read: (path: WorkspacePath, stat: FileStat) => void,
  path: WorkspacePath,
  { stat, target }: ScannedPath,
) => {
  const { manifest, statCache, skipped, keepPrevious } = into
  if (stat.kind === "symlink" && target !== undefined) {
    manifest.set(path, { kind: "link", target })
  } else if (stat.kind === "directory" && input.previous.has(path)) {
    // A tracked path the previous point had as a file (replaced by a directory of the same name),
    // a link (a linked package vendored in place) or as absent is a directory now: no file or
    // link is there, as a file under a directory that became a link is not (`nothingCanBeThere`),
    // so a restore to this point takes a file or link there away before writing beneath it (the
    // writer deletes before it writes; its rollback undoes that in reverse). Nothing was left
    // out: what the directory holds is the scan's.
    manifest.set(path, { kind: "tombstone" })
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
    const cached = vouchedFor(input.statCache, path, stat)
    if (cached !== undefined) {
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
    } else read(path, stat)
  }
}

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
