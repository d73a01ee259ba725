/**
 * What differs between a point and the workspace now, for `Rewind.diffPoint` and `rewind diff`.
 * The compared set is every path the point's manifest names plus everything a bounded scan of
 * the workspace finds (same ignore rules and budgets as a capture), so a file created since the
 * point shows as added even though a restore would leave it alone. Each difference carries both
 * sides and, for text files, a unified diff (point → now) made with the `diff` package.
 */
import {
  type ContentHash,
  type PointId,
  refuse,
  type SessionId,
  type SkippedPath,
  type WorkspacePath,
} from "@rewind/contracts"
import { createTwoFilesPatch } from "diff"
import { Clock, Effect, Either, Option } from "effect"
import { ArtifactStore } from "../ports/ArtifactStore.js"
import { Workspace } from "../ports/Workspace.js"
import { loadSession } from "../session/loadSession.js"
import { hashContent } from "../workspace/contentHash.js"
import { nothingCanBeThere } from "../workspace/pathAbsence.js"
import { DEFAULT_CAPTURE_SETTINGS, loadStatCache, sameStat } from "./capturePoint.js"
import { kindDetail } from "./pointBuild.js"
import { latestTurnPoint, readPointIndex } from "./pointIndex.js"
import { loadManifest, type ManifestEntry } from "./pointManifest.js"
import { type ScannedPath, scanWorkspace } from "./workspaceScan.js"

/** One side of a difference: a regular file or a symlink (absent is `null`). */
export type DiffSide =
  | { readonly kind: "file"; readonly hash: ContentHash; readonly mode: number; readonly size: number }
  | { readonly kind: "link"; readonly target: string }

/** Why a difference has no unified diff. */
export type NoPatchReason = "binary" | "too_large" | "link" | "mode_only" | "content_missing" | "disabled"

export interface PointDiffEntry {
  readonly path: WorkspacePath
  /** From the point to now: `added` (absent in the point), `deleted` (absent now), `modified`. */
  readonly change: "added" | "modified" | "deleted"
  /** The path in the point; null when the point records it absent or does not mention it. */
  readonly point: DiffSide | null
  /** The path in the workspace now; null when nothing is there. */
  readonly now: DiffSide | null
  /** True when the point does not mention the path at all (a restore would leave it alone). */
  readonly untracked: boolean
  /** The unified diff (point → now) of a text file. */
  readonly patch?: string
  readonly noPatch?: NoPatchReason
}

export interface PointDiff {
  readonly sessionId: SessionId
  readonly pointId: PointId
  readonly capturedAt: number
  /** Sorted by path. */
  readonly entries: ReadonlyArray<PointDiffEntry>
  /** Paths compared and found equal. */
  readonly unchanged: number
  /** What could not be compared (unreadable, not a regular file, scan budget), with why. */
  readonly skipped: ReadonlyArray<SkippedPath>
}

export interface PointDiffOptions {
  /** Make unified diffs for text files (default true). */
  readonly patches?: boolean
  /** Text files larger than this (either side) get no unified diff (`too_large`). Default 1 MiB. */
  readonly maxPatchBytes?: number
}

const DEFAULT_MAX_PATCH_BYTES = 1024 * 1024

const decoder = new TextDecoder("utf-8", { fatal: true })

/** The text of bytes that look like text (valid UTF-8, no NUL byte); undefined for binary. */
const asText = (bytes: Uint8Array): string | undefined => {
  if (bytes.includes(0)) return undefined
  try {
    return decoder.decode(bytes)
  } catch {
    return undefined
  }
}

const sideOf = (entry: ManifestEntry | undefined): DiffSide | null =>
  entry === undefined || entry.kind === "tombstone" ? null : entry

const sameSide = (a: DiffSide, b: DiffSide) =>
  a.kind === "file" && b.kind === "file"
    ? a.hash === b.hash && a.mode === b.mode
    : a.kind === "link" && b.kind === "link" && a.target === b.target

interface Current {
  readonly side: DiffSide | null
  /** The bytes, when they were read to hash them (a stat-cache hit reads nothing). */
  readonly content?: Uint8Array
}

export const diffPoint = (sessionId: SessionId, pointId: PointId, options: PointDiffOptions = {}) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const artifacts = yield* ArtifactStore
    yield* loadSession(sessionId)
    const index = yield* readPointIndex(sessionId)
    const point = index.points.find((p) => p.pointId === pointId)
    if (point === undefined) return yield* refuse("not_found", `session ${sessionId} has no point ${pointId}`)
    const manifest = yield* Effect.catchAll(loadManifest(point.manifestHash), (e) =>
      refuse("unavailable", `the manifest of point ${pointId} cannot be read: ${e.message}`),
    )
    const cache = yield* loadStatCache(latestTurnPoint(index)?.statCacheHash)
    const startedAt = yield* Clock.currentTimeMillis
    const scan = yield* scanWorkspace({
      maxFiles: DEFAULT_CAPTURE_SETTINGS.maxFiles,
      deadlineMs: startedAt + DEFAULT_CAPTURE_SETTINGS.timeBudgetMs,
    })
    const skipped: Array<SkippedPath> = [...scan.skipped]
    const maxPatchBytes = options.maxPatchBytes ?? DEFAULT_MAX_PATCH_BYTES

    const skip = (reason: "not_a_regular_file" | "over_size_limit", detail: string) => ({ reason, detail })
    /** What is at `path` now, or why it cannot be compared (the reason goes to `skipped`). */
    const current = (path: WorkspacePath, scanned: ScannedPath | undefined) =>
      Effect.gen(function* () {
        // A file or a link standing where a directory on the way should be (a directory the point
        // had, replaced by a file or by a link to elsewhere): nothing is at the path, as a capture
        // records it.
        const stat =
          scanned?.stat ??
          Option.getOrUndefined(
            yield* Effect.catchIf(workspace.stat(path), nothingCanBeThere, () =>
              Effect.succeed(Option.none()),
            ),
          )
        if (stat === undefined) return { side: null } as Current
        if (stat.kind === "symlink") {
          const target = scanned?.target ?? (yield* workspace.readLink(path))
          return { side: { kind: "link", target } } as Current
        }
        // A directory where the point had a file or link: that entry is gone (what the directory
        // holds is compared path by path, as added files).
        if (stat.kind === "directory") return { side: null } as Current
        if (stat.kind !== "file") return skip("not_a_regular_file", kindDetail(stat.kind))
        // Over the capture's per-file cap: the capture leaves it out, so the diff does not read it.
        if (stat.size > DEFAULT_CAPTURE_SETTINGS.maxFileBytes) {
          return skip("over_size_limit", `${stat.size} bytes > ${DEFAULT_CAPTURE_SETTINGS.maxFileBytes}`)
        }
        // The latest capture's stat cache vouches for a file it saw unchanged, as it does for a capture.
        const cached = cache.get(path)
        if (cached !== undefined && sameStat(cached, stat)) {
          return {
            side: { kind: "file", hash: cached.hash, mode: cached.mode, size: cached.size },
          } as Current
        }
        const file = yield* workspace.read(path)
        if (Option.isNone(file)) return { side: null } as Current
        const { content, mode } = file.value
        return {
          side: { kind: "file", hash: hashContent(content), mode, size: content.byteLength },
          content,
        } as Current
      })

    const patchFor = (
      path: WorkspacePath,
      before: DiffSide | null,
      after: DiffSide | null,
      afterContent: Uint8Array | undefined,
    ) =>
      Effect.gen(function* () {
        if (options.patches === false) return { noPatch: "disabled" as const }
        if (before?.kind === "link" || after?.kind === "link") return { noPatch: "link" as const }
        if (before !== null && after !== null && before.hash === after.hash)
          return { noPatch: "mode_only" as const }
        if ((before?.size ?? 0) > maxPatchBytes || (after?.size ?? 0) > maxPatchBytes) {
          return { noPatch: "too_large" as const }
        }
        const load = (side: DiffSide | null, inHand: Uint8Array | undefined) =>
          side === null
            ? Effect.succeed(Either.right(new Uint8Array()))
            : inHand !== undefined
              ? Effect.succeed(Either.right(inHand))
              : Effect.either(
                  side.kind === "file" ? artifacts.get(side.hash) : Effect.succeed(new Uint8Array()),
                )
        const old = yield* load(before, undefined)
        // The current bytes: in hand, or read again when the stat cache answered for them.
        const now =
          after === null || afterContent !== undefined
            ? Either.right(afterContent ?? new Uint8Array())
            : yield* Effect.either(
                Effect.map(workspace.read(path), (f) =>
                  Option.match(f, { onNone: () => new Uint8Array(), onSome: (x) => x.content }),
                ),
              )
        if (Either.isLeft(old) || Either.isLeft(now)) return { noPatch: "content_missing" as const }
        const oldText = asText(old.right)
        const newText = asText(now.right)
        if (oldText === undefined || newText === undefined) return { noPatch: "binary" as const }
        return {
          patch: createTwoFilesPatch(
            before === null ? "/dev/null" : `a/${path}`,
            after === null ? "/dev/null" : `b/${path}`,
            oldText,
            newText,
            `point ${pointId}`,
            "workspace",
          ),
        }
      })

    const paths = [...new Set<WorkspacePath>([...manifest.keys(), ...scan.entries.keys()])].sort((a, b) =>
      a < b ? -1 : a > b ? 1 : 0,
    )
    const entries: Array<PointDiffEntry> = []
    let unchanged = 0
    for (const path of paths) {
      const wanted = manifest.get(path)
      const now = yield* Effect.either(current(path, scan.entries.get(path)))
      if (Either.isLeft(now)) {
        skipped.push({ path, reason: "unreadable", detail: now.left.message })
        continue
      }
      if ("reason" in now.right) {
        skipped.push({ path, ...now.right })
        continue
      }
      const before = sideOf(wanted)
      const after = now.right.side
      if (before === null && after === null) continue
      if (before !== null && after !== null && sameSide(before, after)) {
        unchanged++
        continue
      }
      const change = before === null ? "added" : after === null ? "deleted" : "modified"
      const patch = yield* patchFor(path, before, after, now.right.content)
      entries.push({ path, change, point: before, now: after, untracked: wanted === undefined, ...patch })
    }
    return {
      sessionId,
      pointId,
      capturedAt: point.capturedAt,
      entries,
      unchanged,
      skipped,
    } satisfies PointDiff
  })
