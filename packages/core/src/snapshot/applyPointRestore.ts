/**
 * Restoring the workspace to a point, the apply half. `applyPointRestore` redeems the preview's
 * token, plans again and refuses if the workspace changed since the preview, saves a rescue point
 * of every path it will touch, then hands the files and the symlink changes to one durable
 * operation (`runDurableRestore`: links in the way removed, the intent in the OperationJournal
 * before the first write, each write checking the file still hashes as previewed, the new links
 * made at the commit, everything undone when a later step fails, and `recover()` listing a restore
 * a crash interrupted), whose commit appends the session record. The link changes are journaled
 * with the files (`JournaledLink`), so a redo takes away a link a restore made and puts back one
 * it removed, exactly. Every point restore that changes something is undone by the engine's one
 * `redo` (its journaled redo entry), never by a second restore of its rescue point.
 */
import {
  type FileVersion,
  type JournaledLink,
  type OperationId,
  type PointId,
  PointRestored,
  refuse,
  type SessionId,
  type TurnId,
  type WorkspacePath,
} from "@rewind/contracts"
import { Clock, Effect, Either } from "effect"
import { ArtifactStore } from "../ports/ArtifactStore.js"
import { IdGenerator } from "../ports/IdGenerator.js"
import { SessionStore } from "../ports/SessionStore.js"
import { runDurableRestore } from "../restore/durableRestore.js"
import type { PlannedWrite } from "../restore/journaledWrites.js"
import { redeemPreviewToken } from "../restore/previewTokens.js"
import { loadSession, retryOnVersionConflict } from "../session/loadSession.js"
import { buildManifest, DEFAULT_CAPTURE_SETTINGS, recordPoint, summarise } from "./capturePoint.js"
import { pointIdFor } from "./pointIndex.js"
import type { KeptContents } from "./pointInspection.js"
import { encodeManifest, type ManifestEntry } from "./pointManifest.js"
import { type PointRestorePlan, planPointRestore } from "./pointRestorePlan.js"

export interface PointRestoreResult {
  readonly operationId: OperationId
  readonly rescuePointId: PointId
  readonly event: PointRestored
}

/** The plan's symlink changes, as the journal records them. */
const linkChanges = (p: PointRestorePlan): ReadonlyArray<JournaledLink> =>
  p.changes.flatMap((c) =>
    c.current.kind === "link" || c.wanted.kind === "link"
      ? [
          {
            path: c.path,
            rescue: c.current.kind === "link" ? c.current.target : null,
            planned: c.wanted.kind === "link" ? c.wanted.target : null,
          },
        ]
      : [],
  )

/**
 * The rescue point: the current state of every path the restore will touch, recorded before the
 * first write. The plan has just looked at each: links and absent paths are known, and the files
 * it read are stored from what it kept. The rest (vouched for by the stat cache, or beyond the keep
 * budget) are captured. Refuses when some current state cannot be saved: the restore could not be
 * undone then.
 */
const saveRescuePoint = (
  sessionId: SessionId,
  operationId: OperationId,
  p: PointRestorePlan,
  keep: KeptContents,
) =>
  Effect.gen(function* () {
    const artifacts = yield* ArtifactStore
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
    return { rescuePointId, rescueManifest }
  })

/**
 * The file half as journaled writes (every blob was read and verified by the plan, before anything
 * is touched), and what each written or deleted path holds when the files are written: its rescue
 * version (a link in the way has been removed by then), already stored.
 */
const fileWrites = (p: PointRestorePlan, rescueManifest: ReadonlyMap<WorkspacePath, ManifestEntry>) => {
  const writes: Array<PlannedWrite> = []
  for (const c of p.changes) {
    const expectedCurrentHash = c.current.kind === "file" ? c.current.hash : null
    if (c.wanted.kind === "file") {
      writes.push({
        path: c.path,
        content: p.contents.get(c.wanted.hash)!,
        mode: c.wanted.mode,
        expectedCurrentHash,
        storedHash: c.wanted.hash,
      })
    } else if (c.current.kind === "file") {
      writes.push({ path: c.path, content: null, expectedCurrentHash })
    }
  }
  const rescued = new Map<WorkspacePath, FileVersion>(
    writes.map(({ path }) => {
      const entry = rescueManifest.get(path)
      return [
        path,
        entry?.kind === "file" ? { _tag: "present", hash: entry.hash, mode: entry.mode } : { _tag: "absent" },
      ]
    }),
  )
  return { writes, rescued }
}

/**
 * Step 2, run by the durable restore as its commit once the files are written and the new links
 * made: the session record. A failure fails the commit, so files and links are put back too:
 * files and history must agree.
 */
const appendRestored = (sessionId: SessionId, event: PointRestored) =>
  Effect.mapError(
    // Another writer (a capture, a checkpoint) may append meanwhile: re-read and append again.
    retryOnVersionConflict(
      Effect.gen(function* () {
        const state = yield* loadSession(sessionId)
        const store = yield* SessionStore
        const at = yield* Clock.currentTimeMillis
        return yield* store.append({ sessionId, expectedVersion: state.version, events: [event], at })
      }),
    ),
    (error) => `the restore could not be recorded: ${error.message}`,
  )

/**
 * Applies a previewed restore. Refuses when the token is not valid for this point, when the
 * workspace no longer matches the preview (`conflict`: preview again), or on conflicts.
 */
export const applyPointRestore = (sessionId: SessionId, pointId: PointId, token: string) =>
  Effect.gen(function* () {
    const record = yield* redeemPreviewToken(sessionId, pointId, token)
    const keep: KeptContents = { contents: new Map(), bytes: 0 }
    const p = yield* planPointRestore(sessionId, pointId, keep)
    if (p.conflicts.length > 0) {
      return yield* refuse("unsafe_files", "the restore has conflicts; nothing was written", p.conflicts)
    }
    if (p.planDigest !== record.planDigest) {
      return yield* refuse(
        "conflict",
        "the workspace changed since the preview; nothing was written, preview again",
      )
    }
    const operationId = (yield* (yield* IdGenerator).next("op")) as OperationId
    const { rescuePointId, rescueManifest } = yield* saveRescuePoint(sessionId, operationId, p, keep)

    const failed = (message: string) => refuse("unavailable", `the restore failed and was undone: ${message}`)
    // 1. Files and links, as one durable operation: journaled before the first write, rolled back
    //    by the writer itself when a step fails, and by runDurableRestore when the commit (2) fails.
    const { writes, rescued } = fileWrites(p, rescueManifest)
    const event = new PointRestored({
      operationId,
      pointId,
      rescuePointId,
      files: p.changes.map((c) => ({
        path: c.path,
        action: c.action === "write" ? "written" : c.action === "link" ? "linked" : "deleted",
      })),
    })
    // Every point restore that changes something leaves a redo entry, so `redo` takes it away
    // again: files and links back to the rescue versions, checked to still hold what this restore
    // wrote. A point restore never moves the conversation, so the entry names no branch (neither
    // `branchAtVersion` nor `activeBranch`): the redo leaves the conversation as it is then, with
    // every message added since. A restore that changed nothing leaves nothing to undo.
    const redoable = p.changes.length === 0 ? {} : { redo: { spentCheckpointIds: [] } }
    const applied = yield* Effect.either(
      runDurableRestore(
        {
          sessionId,
          operationId,
          kind: "point_restore",
          writes,
          rescued,
          links: linkChanges(p),
          ...redoable,
        },
        () => appendRestored(sessionId, event),
      ),
    )
    if (Either.isLeft(applied)) {
      const error = applied.left
      return yield* failed(typeof error === "string" ? error : error.message)
    }
    if (applied.right._tag === "RolledBack") return yield* failed(applied.right.message)
    return { operationId, rescuePointId, event } satisfies PointRestoreResult
  })
