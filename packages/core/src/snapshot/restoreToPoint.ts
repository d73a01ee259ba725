/**
 * Restoring the workspace to a point. `previewPointRestore` compares each path of the point's
 * manifest with what is there now (by content hash, mode and link target) and lists the writes,
 * links and deletes a restore would make (a delete only where the point holds a tombstone; files
 * the point does not mention are left alone), plus conflicts (a directory, FIFO or unreadable file
 * in the way, content missing from the store) that forbid it. Paths the protection policy keeps
 * (the store, `.git`, what the ignore rules exclude now) are listed apart and left alone. Without conflicts it issues a
 * preview token bound to the point and a digest of the plan. `applyPointRestore` redeems the token,
 * re-plans and refuses if the workspace changed since the preview, captures a rescue point of
 * every path it will touch, then applies: symlinks in the way are removed, files are written and
 * deleted as one durable operation (`runDurableRestore`: the intent is in the OperationJournal
 * before the first write, each write checks the file still hashes as previewed, and `recover()`
 * lists a restore a crash interrupted), and links are created; a failure at any step undoes the
 * earlier ones. Symlink changes are outside the journal (it holds file versions); the rescue point
 * records the links, so an interrupted restore can still be undone by restoring the rescue point.
 *
 * Planning inspects the point's paths through the bulk `scanDirectories` (one
 * `lstat` per entry instead of a confined walk per path) and trusts the latest capture's stat
 * cache for unchanged files, so a preview of a large point reads only what changed.
 */

import {
  type ContentHash,
  type FileStat,
  type FileVersion,
  type OperationId,
  type PointId,
  PointRestored,
  type ProtectedPath,
  refuse,
  type SessionId,
  type TurnId,
  type WorkspacePath,
} from "@rewind/contracts"
import { Clock, Effect, Either, Option } from "effect"
import { ArtifactStore } from "../ports/ArtifactStore.js"
import { IdGenerator } from "../ports/IdGenerator.js"
import { SessionStore } from "../ports/SessionStore.js"
import { type ScannedEntry, Workspace, type WorkspaceError } from "../ports/Workspace.js"
import { runDurableRestore } from "../restore/durableRestore.js"
import type { PlannedWrite } from "../restore/journaledWrites.js"
import { issuePreviewToken, redeemPreviewToken } from "../restore/previewTokens.js"
import { loadSession, retryOnVersionConflict } from "../session/loadSession.js"
import { hashContent, sha256Hex } from "../workspace/contentHash.js"
import { checkProtection } from "../workspace/protection.js"
import { checkSymlinkTarget } from "../workspace/workspaceConfinement.js"
import {
  buildManifest,
  DEFAULT_CAPTURE_SETTINGS,
  loadStatCache,
  recordPoint,
  sameStat,
  summarise,
} from "./capturePoint.js"
import { latestTurnPoint, pointIdFor, readPointIndex } from "./pointIndex.js"
import { encodeManifest, loadManifest, type ManifestEntry, type StatCache } from "./pointManifest.js"

/** What is at a path now. */
export type CurrentState =
  | { readonly kind: "file"; readonly hash: ContentHash; readonly mode: number }
  | { readonly kind: "link"; readonly target: string }
  | { readonly kind: "absent" }

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

export interface PointRestorePreview {
  readonly pointId: PointId
  /**
   * Paths of the point the protection policy keeps (the store, `.git`, paths the ignore rules
   * exclude now): left alone, never written or deleted, and not a conflict.
   */
  readonly protected: ReadonlyArray<ProtectedPath>
  readonly changes: ReadonlyArray<PlannedChange>
  readonly unchanged: number
  readonly conflicts: ReadonlyArray<RestoreConflict>
  readonly canApply: boolean
  readonly planDigest: string
  /** Present when `canApply`: redeem it with `applyPointRestore` within five minutes. */
  readonly token?: string
  readonly tokenExpiresAt?: number
}

const ABSENT: CurrentState = { kind: "absent" }

/**
 * What the capture's stat cache says is at a path with this `lstat`, when it can vouch for it (it
 * only holds entries outside the racy window), so a large restore reads only what changed.
 */
const vouched = (path: WorkspacePath, stat: FileStat, cache: StatCache): CurrentState | undefined => {
  const cached = cache.get(path)
  return cached !== undefined && stat.kind === "file" && sameStat(cached, stat)
    ? { kind: "file", hash: cached.hash, mode: cached.mode }
    : undefined
}

/**
 * Contents an apply's plan read, kept (up to a byte budget) so its rescue point can store them
 * without reading the files again.
 */
interface KeptContents {
  readonly contents: Map<WorkspacePath, Uint8Array>
  bytes: number
}

/** What an apply keeps of the contents its plan read; beyond this the rescue point reads again. */
const KEEP_BYTES = 64 * 1024 * 1024

/** What is at a path whose `lstat` (and link target) is known; reads only what the cache cannot vouch for. */
const classify = (
  path: WorkspacePath,
  stat: FileStat,
  target: string | undefined,
  cache: StatCache,
  keep: KeptContents | undefined,
) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const known = vouched(path, stat, cache)
    if (known !== undefined) return known
    switch (stat.kind) {
      case "symlink":
        return {
          kind: "link",
          target: target ?? (yield* workspace.readLink(path)),
        } as CurrentState
      case "file": {
        const file = yield* workspace.read(path)
        if (Option.isNone(file)) return ABSENT
        const content = file.value.content
        if (keep !== undefined && keep.bytes + content.byteLength <= KEEP_BYTES) {
          keep.contents.set(path, content)
          keep.bytes += content.byteLength
        }
        return { kind: "file", hash: hashContent(content), mode: file.value.mode } as CurrentState
      }
      default:
        return `a ${stat.kind}` as const
    }
  })

type Inspected = Either.Either<CurrentState | `a ${string}`, WorkspaceError>

/** One path on its own: a confined `lstat`, then `classify`. */
const inspect = (path: WorkspacePath, cache: StatCache, keep: KeptContents | undefined) =>
  Effect.gen(function* () {
    const stat = yield* (yield* Workspace).stat(path)
    if (Option.isNone(stat)) return ABSENT
    return yield* classify(path, stat.value, undefined, cache, keep)
  })

/** Below this many paths in one directory, stat them one by one rather than list the directory. */
const SCAN_FROM_PATHS = 8

const parentOf = (path: string) => {
  const slash = path.lastIndexOf("/")
  return slash < 0 ? "" : path.slice(0, slash)
}

/**
 * Inspects every path: directories holding several of them are listed once with their `lstat`s;
 * a directory that cannot be listed (missing, a file, refused) falls back to per-path inspection,
 * which gives each path its own answer (absent, or its own error).
 */
const inspectAll = (paths: Iterable<WorkspacePath>, cache: StatCache, keep: KeptContents | undefined) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const byDirectory = new Map<string, Array<WorkspacePath>>()
    for (const path of paths) {
      const dir = parentOf(path)
      const group = byDirectory.get(dir)
      if (group === undefined) byDirectory.set(dir, [path])
      else group.push(path)
    }
    const out = new Map<WorkspacePath, Inspected>()
    // Directories holding enough paths are listed together in one bulk call (one `lstat` per
    // entry, overlapped where the workspace can); the rest are inspected path by path.
    const listedDirectories = [...byDirectory].filter(([, group]) => group.length >= SCAN_FROM_PATHS)
    const listings = yield* workspace.scanDirectories(
      listedDirectories.map(([dir]) => (dir === "" ? undefined : (dir as WorkspacePath))),
    )
    const listedBy = new Map<string, ReadonlyMap<string, ScannedEntry>>()
    listedDirectories.forEach(([dir], i) => {
      const scan = listings[i]!
      if (Either.isRight(scan)) listedBy.set(dir, new Map(scan.right.map((e) => [e.name, e])))
    })
    for (const [dir, group] of byDirectory) {
      const listed = listedBy.get(dir)
      for (const path of group) {
        if (listed === undefined) {
          out.set(path, yield* Effect.either(inspect(path, cache, keep)))
          continue
        }
        const entry = listed.get(path.slice(dir === "" ? 0 : dir.length + 1))
        // Most paths of a large point are unchanged: decided here, without an effect per path.
        const known = entry === undefined ? ABSENT : vouched(path, entry.stat, cache)
        out.set(
          path,
          known !== undefined
            ? Either.right(known)
            : yield* Effect.either(classify(path, entry!.stat, entry!.target, cache, keep)),
        )
      }
    }
    return out
  })

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

const plan = (sessionId: SessionId, pointId: PointId, keep?: KeptContents) =>
  Effect.gen(function* () {
    const artifacts = yield* ArtifactStore
    const point = yield* findPoint(sessionId, pointId)
    const manifest = yield* Effect.catchAll(loadManifest(point.manifestHash), (e) =>
      refuse("unavailable", `the manifest of point ${pointId} cannot be read: ${e.message}`),
    )
    const latest = latestTurnPoint(yield* readPointIndex(sessionId))
    const cache = yield* loadStatCache(latest?.statCacheHash)
    const changes: Array<PlannedChange> = []
    const conflicts: Array<RestoreConflict> = []
    let unchanged = 0
    const protectedPaths = yield* checkProtection(manifest.keys())
    // A manifest holds a whole tree: not copied when nothing in it is protected (the common case).
    const inScope =
      protectedPaths.size === 0 ? manifest.keys() : [...manifest.keys()].filter((p) => !protectedPaths.has(p))
    const inspected = yield* inspectAll(inScope, cache, keep)
    const missing = new Set<ContentHash>()
    for (const [path, wanted] of manifest) {
      if (protectedPaths.has(path)) continue
      const current = inspected.get(path)!
      if (Either.isLeft(current)) {
        if (current.left._tag === "PathRefused" && current.left.reason === "symlink_in_path") {
          // Through a link nothing is at this path in the tree: a tombstone holds already.
          if (wanted.kind === "tombstone") unchanged++
          else conflicts.push({ path, reason: "symlink_in_path", detail: current.left.message })
          continue
        }
        conflicts.push({ path, reason: "unreadable", detail: current.left.message })
        continue
      }
      if (typeof current.right === "string") {
        conflicts.push({ path, reason: "not_a_regular_file", detail: `${current.right} is in the way` })
        continue
      }
      if (satisfied(current.right, wanted)) {
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
        current: current.right,
        wanted,
      })
    }
    // Every content the restore writes is read and verified now, so a corrupt blob refuses the
    // preview rather than the apply; the apply writes these very bytes (preview = apply).
    const contents = new Map<ContentHash, Uint8Array>()
    const wantedHashes = [
      ...new Set(changes.flatMap((c) => (c.wanted.kind === "file" ? [c.wanted.hash] : []))),
    ]
    const batch = yield* Effect.either(artifacts.getMany(wantedHashes))
    if (Either.isRight(batch)) {
      for (const [i, h] of wantedHashes.entries()) contents.set(h, batch.right[i]!)
    } else {
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
    }
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

/** Lists what restoring `pointId` would change and, when it can be applied, issues a token. */
export const previewPointRestore = (sessionId: SessionId, pointId: PointId) =>
  Effect.gen(function* () {
    const p = yield* plan(sessionId, pointId)
    const canApply = p.conflicts.length === 0
    const base: PointRestorePreview = {
      pointId,
      protected: p.protected,
      changes: p.changes,
      unchanged: p.unchanged,
      conflicts: p.conflicts,
      canApply,
      planDigest: p.planDigest,
    }
    if (!canApply) return base
    const issued = yield* issuePreviewToken(sessionId, pointId, p.planDigest)
    const withToken: PointRestorePreview = { ...base, token: issued.token, tokenExpiresAt: issued.expiresAt }
    return withToken
  })

export interface PointRestoreResult {
  readonly operationId: OperationId
  readonly rescuePointId: PointId
  readonly event: PointRestored
}

/** Undo steps for what is outside the file journal (symlinks), run in reverse on failure. */
type Undo = Effect.Effect<void, unknown, Workspace>

const runUndo = (undo: ReadonlyArray<Undo>) =>
  Effect.forEach([...undo].reverse(), (u) => Effect.either(u), { discard: true })

/**
 * Applies a previewed restore. Refuses when the token is not valid for this point, when the
 * workspace no longer matches the preview (`conflict`: preview again), or on conflicts.
 */
export const applyPointRestore = (sessionId: SessionId, pointId: PointId, token: string) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const artifacts = yield* ArtifactStore
    const record = yield* redeemPreviewToken(sessionId, pointId, token)
    const keep: KeptContents = { contents: new Map(), bytes: 0 }
    const p = yield* plan(sessionId, pointId, keep)
    if (p.conflicts.length > 0) {
      return yield* refuse("unsafe_files", "the restore has conflicts; nothing was written", p.conflicts)
    }
    if (p.planDigest !== record.planDigest) {
      return yield* refuse(
        "conflict",
        "the workspace changed since the preview; nothing was written, preview again",
      )
    }
    const ids = yield* IdGenerator
    const operationId = (yield* ids.next("op")) as OperationId

    // Every blob was read and verified by the plan, before anything is touched.
    const fileChanges = p.changes.filter((c) => c.wanted.kind === "file")
    const contents = new Map<WorkspacePath, Uint8Array>(
      fileChanges.map((c) => [c.path, p.contents.get((c.wanted as { readonly hash: ContentHash }).hash)!]),
    )

    // The rescue point: the current state of every path the restore will touch. The plan has just
    // looked at each: links and absent paths are known, and the files it read are stored from what
    // it kept. The rest (vouched for by the stat cache, or beyond the keep budget) are captured.
    const startedAtMs = yield* Clock.currentTimeMillis
    const fromPlan = new Map<WorkspacePath, ManifestEntry>()
    const kept: Array<{ readonly path: WorkspacePath; readonly content: Uint8Array; readonly mode: number }> =
      []
    const captured = new Set<WorkspacePath>()
    for (const c of p.changes) {
      if (c.current.kind === "absent") fromPlan.set(c.path, { kind: "tombstone" })
      else if (c.current.kind === "link") fromPlan.set(c.path, { kind: "link", target: c.current.target })
      else {
        const content = keep.contents.get(c.path)
        if (content === undefined) captured.add(c.path)
        else kept.push({ path: c.path, content, mode: c.current.mode })
      }
    }
    const keptHashes = kept.length === 0 ? [] : yield* artifacts.putMany(kept.map((k) => k.content))
    kept.forEach(({ path, content, mode }, i) => {
      fromPlan.set(path, { kind: "file", hash: keptHashes[i]!, mode, size: content.byteLength })
    })
    const rescue = yield* buildManifest({
      scanned: new Map(),
      tracked: captured,
      previous: new Map(),
      // The stat cache vouches for unchanged files here as in the plan; changed ones are read.
      statCache: p.cache,
      settings: { ...DEFAULT_CAPTURE_SETTINGS, maxFileBytes: Number.MAX_SAFE_INTEGER },
      startedAtMs,
    })
    if (rescue.skipped.length > 0) {
      return yield* refuse(
        "unsafe_files",
        "the current state of some files cannot be saved, so the restore could not be undone; nothing was written",
        rescue.skipped,
      )
    }
    const rescueManifest = new Map([...fromPlan, ...rescue.manifest])
    const rescuePointId = pointIdFor(sessionId, operationId as string as TurnId, "rescue")
    const rescueManifestHash = yield* artifacts.put(encodeManifest(rescueManifest))
    // The rescue point's id is this operation's own, so appending it again after a conflict
    // cannot record it twice.
    yield* retryOnVersionConflict(
      recordPoint(sessionId, {
        pointId: rescuePointId,
        kind: "rescue",
        turnId: p.point.turnId,
        manifestHash: rescueManifestHash,
        reusedManifest: false,
        ...summarise(rescueManifest),
        skipped: [],
      }),
    )

    const undo: Array<Undo> = []
    const failed = (message: string) =>
      Effect.gen(function* () {
        yield* runUndo(undo)
        return yield* refuse("unavailable", `the restore failed and was undone: ${message}`)
      })

    // 1. Symlinks in the way of anything else are removed (and put back on failure).
    for (const c of p.changes) {
      if (c.current.kind !== "link") continue
      const target = c.current.target
      const removed = yield* Effect.either(workspace.delete(c.path))
      if (Either.isLeft(removed)) return yield* failed(removed.left.message)
      undo.push(Effect.asVoid(workspace.symlink(c.path, target)))
    }
    // 2. Files, as one durable operation: journaled before the first write, rolled back by the
    //    writer itself when a step fails, and by runDurableRestore when the commit (3) fails.
    const writes: Array<PlannedWrite> = []
    for (const c of p.changes) {
      const expectedCurrentHash = c.current.kind === "file" ? c.current.hash : null
      if (c.wanted.kind === "file") {
        writes.push({
          path: c.path,
          content: contents.get(c.path)!,
          mode: c.wanted.mode,
          expectedCurrentHash,
          storedHash: c.wanted.hash,
        })
      } else if (c.current.kind === "file") {
        writes.push({ path: c.path, content: null, expectedCurrentHash })
      }
    }
    // What each written or deleted path holds when the files are written: its rescue version (a
    // link in the way has been removed by then), already stored.
    const rescued = new Map<WorkspacePath, FileVersion>(
      writes.map(({ path }) => {
        const entry = rescueManifest.get(path)
        return [
          path,
          entry?.kind === "file"
            ? { _tag: "present", hash: entry.hash, mode: entry.mode }
            : { _tag: "absent" },
        ]
      }),
    )
    const event = new PointRestored({
      operationId,
      pointId,
      rescuePointId,
      files: p.changes.map((c) => ({
        path: c.path,
        action: c.action === "write" ? "written" : c.action === "link" ? "linked" : "deleted",
      })),
    })
    // 3. Links, then the session record; a failure undoes the links made so far and fails the
    //    commit, so the files are put back too: files and history must agree.
    const commit = Effect.gen(function* () {
      const linked: Array<WorkspacePath> = []
      const unlink = Effect.suspend(() =>
        Effect.forEach([...linked].reverse(), (path) => Effect.either(workspace.delete(path)), {
          discard: true,
        }),
      )
      for (const c of p.changes) {
        if (c.wanted.kind !== "link") continue
        const made = yield* Effect.either(workspace.symlink(c.path, c.wanted.target))
        if (Either.isLeft(made)) {
          yield* unlink
          return yield* Effect.fail(made.left.message)
        }
        linked.push(c.path)
      }
      // Another writer (a capture, a checkpoint) may append meanwhile: re-read and append again.
      const recorded = yield* Effect.either(
        retryOnVersionConflict(
          Effect.gen(function* () {
            const state = yield* loadSession(sessionId)
            const store = yield* SessionStore
            const at = yield* Clock.currentTimeMillis
            return yield* store.append({ sessionId, expectedVersion: state.version, events: [event], at })
          }),
        ),
      )
      if (Either.isLeft(recorded)) {
        yield* unlink
        return yield* Effect.fail(`the restore could not be recorded: ${recorded.left.message}`)
      }
    })
    // A merge (a partial point of kind `merge`, `mergeSessions.ts`) can be taken away again by
    // `redo`: its files go back to the rescue versions; the conversation it leaves as it is.
    const before = p.point.kind === "merge" ? yield* loadSession(sessionId) : undefined
    const redoable =
      before === undefined
        ? {}
        : { redo: { branchAtVersion: before.version, spentCheckpointIds: [...before.spentCheckpointIds] } }
    const applied = yield* Effect.either(
      runDurableRestore(
        { sessionId, operationId, kind: "point_restore", writes, rescued, ...redoable },
        () => commit,
      ),
    )
    if (Either.isLeft(applied)) {
      const error = applied.left
      return yield* failed(typeof error === "string" ? error : error.message)
    }
    if (applied.right._tag === "RolledBack") return yield* failed(applied.right.message)
    return { operationId, rescuePointId, event } satisfies PointRestoreResult
  })
