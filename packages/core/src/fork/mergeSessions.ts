/**
 * Merging one session's tree into another's (a child into its parent, a parent into its child, or
 * two forks of one session into each other):
 * a three-way merge per file against the fork base they share (`commonBase`). A path changed on one
 * side only takes that side; the same change on both sides is taken once; two different changes of
 * a text file are merged line-wise by `node-diff3` where their hunks do not overlap, and otherwise
 * reported with both sides (written with conflict markers only when `markers` asks). Binary, mode,
 * link and delete/modify conflicts are refused per file: the target's file is left as it is. A
 * path the source's tree may have held unseen (`unseenIn`: at or below what its scan reported
 * leaving out, or excluded by its own ignore rules) is not read as deleted there: the target keeps it.
 *
 * The writes are not done here: the merged paths are recorded in the target as a partial point
 * (kind `merge`) and go through the point restore every restore shares (`restoreToPoint.ts`), so
 * a merge has a preview and a token, a rescue point, journaled writes that re-check every file
 * (a file changed since the preview refuses the apply) and a redo entry that takes it away again.
 */
import {
  type ContentHash,
  PointCaptured,
  type PointId,
  refuse,
  type SessionId,
  type TurnId,
  type WorkspacePath,
} from "@rewind/contracts"
import { Clock, Effect } from "effect"
import { diff3Merge } from "node-diff3"
import { ArtifactStore } from "../ports/ArtifactStore.js"
import { IdGenerator } from "../ports/IdGenerator.js"
import { SessionStore } from "../ports/SessionStore.js"
import { loadSession, retryOnVersionConflict } from "../session/loadSession.js"
import { withSessionWorkspace } from "../session/sessionWorkspace.js"
import { applyPointRestore } from "../snapshot/applyPointRestore.js"
import { summarise } from "../snapshot/capturePoint.js"
import { encodeManifest, type ManifestEntry } from "../snapshot/pointManifest.js"
import { previewPointRestore } from "../snapshot/restoreToPoint.js"
import { unseenIn } from "../snapshot/unseenPaths.js"
import { sha256Hex } from "../workspace/contentHash.js"
import { asText, commonBase, currentTree, sameSide, sideOf, type TreeSide } from "./sessionTrees.js"

export type MergeConflictReason = "text" | "binary" | "mode" | "link" | "delete_modify"

export interface MergeConflict {
  readonly path: WorkspacePath
  readonly reason: MergeConflictReason
  readonly detail: string
  readonly base: TreeSide | null
  readonly source: TreeSide | null
  readonly target: TreeSide | null
  /** For a text conflict: each overlapping hunk, both sides and the base. */
  readonly hunks?: ReadonlyArray<{ readonly base: string; readonly source: string; readonly target: string }>
  /** True when the file was written with conflict markers (`markers`). */
  readonly markers: boolean
}

export interface MergeFile {
  readonly path: WorkspacePath
  /** `source`: the source's version taken as it is; `merged`: both sides' changes; `markers`: a conflict written with markers. */
  readonly from: "source" | "merged" | "markers"
  readonly action: "write" | "link" | "delete"
}

export interface MergeOptions {
  /** Write text conflicts with conflict markers instead of leaving the target's file (default false). */
  readonly markers?: boolean
}

const encoder = new TextEncoder()
const lines = (text: string) => text.split(/(?<=\n)/)
const withNewline = (chunk: ReadonlyArray<string>) => {
  const text = chunk.join("")
  return text.length === 0 || text.endsWith("\n") ? text : `${text}\n`
}

/** The three-way text merge of one file: the merged text, or the overlapping hunks. */
const mergeText = (base: string, source: string, target: string, sourceId: string, targetId: string) => {
  const regions = diff3Merge(lines(target), lines(base), lines(source), { excludeFalseConflicts: true })
  const out: Array<string> = []
  const hunks: Array<{ base: string; source: string; target: string }> = []
  for (const region of regions) {
    if ("ok" in region && region.ok !== undefined) out.push(...region.ok)
    else if (region.conflict !== undefined) {
      const c = region.conflict
      hunks.push({ base: c.o.join(""), source: c.b.join(""), target: c.a.join("") })
      out.push(
        `<<<<<<< ${targetId}\n`,
        withNewline(c.a),
        "=======\n",
        withNewline(c.b),
        `>>>>>>> ${sourceId}\n`,
      )
    }
  }
  return { text: out.join(""), hunks }
}

type Decision =
  | { readonly kind: "keep" }
  | { readonly kind: "take"; readonly entry: ManifestEntry; readonly from: MergeFile["from"] }
  | {
      readonly kind: "conflict"
      readonly conflict: Omit<MergeConflict, "path" | "base" | "source" | "target" | "markers">
      readonly markersEntry?: ManifestEntry
    }

const mergeId = (target: SessionId, source: SessionId, at: string) =>
  `pt-m${sha256Hex(`${target}\u0000merge\u0000${source}\u0000${at}`).slice(0, 39)}` as PointId

/**
 * Plans the merge of `source`'s tree into `target`'s and, when anything is to be written, records
 * it as a merge point of the target and previews its restore (with the token `applyMerge` redeems).
 */
export const previewMerge = (target: SessionId, source: SessionId, options: MergeOptions = {}) =>
  Effect.gen(function* () {
    if (target === source) return yield* refuse("invalid_input", "a session cannot be merged into itself")
    const artifacts = yield* ArtifactStore
    const base = yield* commonBase(source, target)
    const ts = yield* currentTree(source)
    const tt = yield* currentTree(target)
    // A tree the scan did not reach whole would read as deletions: refuse rather than merge those.
    const cut = [...ts.skipped, ...tt.skipped].find((k) => k.reason === "budget")
    if (cut !== undefined) {
      return yield* refuse(
        "unavailable",
        `the scan of a tree stopped at its budget (${cut.path}), so the merge cannot tell what was deleted; nothing was planned`,
      )
    }
    const text = (side: TreeSide | null) =>
      side === null
        ? Effect.succeed("" as string | undefined)
        : Effect.map(artifacts.get((side as { hash: ContentHash }).hash), asText)
    const decide = (b: TreeSide | null, s: TreeSide | null, t: TreeSide | null) =>
      Effect.gen(function* () {
        if (sameSide(s, t) || sameSide(s, b)) return { kind: "keep" } as Decision
        if (sameSide(t, b)) {
          return s === null
            ? ({ kind: "take", entry: { kind: "tombstone" }, from: "source" } as Decision)
            : ({ kind: "take", entry: s, from: "source" } as Decision)
        }
        if (s === null || t === null) {
          return {
            kind: "conflict",
            conflict: { reason: "delete_modify", detail: "deleted on one side, changed on the other" },
          } as Decision
        }
        if (s.kind === "link" || t.kind === "link" || b?.kind === "link") {
          return {
            kind: "conflict",
            conflict: { reason: "link", detail: "a symlink changed differently on both sides" },
          } as Decision
        }
        const bm = b?.kind === "file" ? b.mode : undefined
        const mode = s.mode === t.mode ? s.mode : s.mode === bm ? t.mode : t.mode === bm ? s.mode : undefined
        if (mode === undefined) {
          return {
            kind: "conflict",
            conflict: { reason: "mode", detail: `mode ${s.mode.toString(8)} against ${t.mode.toString(8)}` },
          } as Decision
        }
        const bh = b?.kind === "file" ? b.hash : undefined
        if (s.hash === t.hash || s.hash === bh || t.hash === bh) {
          const content = s.hash === bh ? t : s
          return { kind: "take", entry: { ...content, mode }, from: "merged" } as Decision
        }
        const [bt, st, tt2] = [yield* text(b), yield* text(s), yield* text(t)]
        if (bt === undefined || st === undefined || tt2 === undefined) {
          return {
            kind: "conflict",
            conflict: { reason: "binary", detail: "a binary file changed differently on both sides" },
          } as Decision
        }
        const merged = mergeText(bt, st, tt2, `source ${source}`, `target ${target}`)
        const bytes = encoder.encode(merged.text)
        const hash = yield* artifacts.put(bytes)
        const entry: ManifestEntry = { kind: "file", hash, mode, size: bytes.byteLength }
        if (merged.hunks.length === 0) return { kind: "take", entry, from: "merged" } as Decision
        return {
          kind: "conflict",
          conflict: {
            reason: "text",
            detail: `${merged.hunks.length} overlapping hunk(s)`,
            hunks: merged.hunks,
          },
          markersEntry: entry,
        } as Decision
      })
    const paths = [...new Set([...base.manifest.keys(), ...ts.manifest.keys(), ...tt.manifest.keys()])].sort()
    // A path missing from the source's tree that its scan did not see (a directory that became a
    // nested repository, a file that became a FIFO) or that its own ignore rules exclude (the fork's
    // agent added `*.log` to its `.gitignore`) was not deleted there: the target keeps its version,
    // and the source's skips are reported below.
    const unseenInSource = yield* withSessionWorkspace(
      source,
      unseenIn(
        ts,
        paths.filter(
          (p) =>
            sideOf(ts.manifest.get(p)) === null &&
            (sideOf(base.manifest.get(p)) !== null || sideOf(tt.manifest.get(p)) !== null),
        ),
      ),
    )
    const point = new Map<WorkspacePath, ManifestEntry>()
    const files: Array<MergeFile> = []
    const conflicts: Array<MergeConflict> = []
    for (const path of paths) {
      const b = sideOf(base.manifest.get(path))
      const s = sideOf(ts.manifest.get(path))
      if (s === null && unseenInSource.has(path)) continue
      const t = sideOf(tt.manifest.get(path))
      const d = yield* decide(b, s, t)
      if (d.kind === "keep") continue
      const action = (e: ManifestEntry) =>
        (e.kind === "file" ? "write" : e.kind === "link" ? "link" : "delete") as MergeFile["action"]
      if (d.kind === "take") {
        point.set(path, d.entry)
        files.push({ path, from: d.from, action: action(d.entry) })
        continue
      }
      const markers = options.markers === true && d.markersEntry !== undefined
      conflicts.push({ path, ...d.conflict, base: b, source: s, target: t, markers })
      if (markers) {
        point.set(path, d.markersEntry!)
        files.push({ path, from: "markers", action: "write" })
      }
    }
    const summary = {
      sourceSessionId: source,
      targetSessionId: target,
      basePointId: base.pointId,
      files,
      conflicts,
      skipped: [...ts.skipped, ...tt.skipped],
    }
    if (point.size === 0) return { ...summary, canApply: false }
    const at = yield* Clock.currentTimeMillis
    const pointId = mergeId(target, source, `${yield* (yield* IdGenerator).next("merge")}`)
    const manifestHash = yield* artifacts.put(encodeManifest(point))
    const targetState = yield* loadSession(target)
    const lastTurn = [...targetState.turns.keys()].at(-1)
    yield* retryOnVersionConflict(
      Effect.gen(function* () {
        const state = yield* loadSession(target)
        yield* (yield* SessionStore).append({
          sessionId: target,
          expectedVersion: state.version,
          events: [
            new PointCaptured({
              pointId,
              kind: "merge",
              turnId: (lastTurn ?? (pointId as string)) as TurnId,
              manifestHash,
              reusedManifest: false,
              ...summarise(point),
              skipped: [],
              capturedAt: at,
            }),
          ],
          at,
        })
      }),
    )
    const restore = yield* previewPointRestore(target, pointId)
    return { ...summary, mergePointId: pointId, restore, canApply: restore.canApply }
  })

/** Applies a previewed merge: the point restore of its merge point, redeeming the preview's token. */
export const applyMerge = (target: SessionId, mergePointId: PointId, token: string) =>
  Effect.gen(function* () {
    const state = yield* loadSession(target)
    const point = state.points.find((p) => p.pointId === mergePointId)
    if (point === undefined || point.kind !== "merge") {
      return yield* refuse("not_found", `session ${target} has no merge ${mergePointId}`)
    }
    return yield* applyPointRestore(target, mergePointId, token)
  })
