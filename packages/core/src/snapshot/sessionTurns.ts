/**
 * A hook-mirrored session seen by turn: the timeline (each turn's prompt and the files it
 * changed, through tools or the shell), what `restore --turn N` restores to, the other sessions
 * that wrote those files since. Used by the CLI's `timeline`, `diff --turn` and `restore --turn`,
 * and, as the `Rewind` operation `turnRestoreTarget`, by every host that restores "to before a
 * turn" (the inspector among them), so that all of them delete what the agent created since.
 *
 * Turns are numbered 1… in the order they started, over the active branch (a conversation rewind
 * drops the turns it cut). A turn's own point is captured when its prompt arrives, so it is the
 * workspace as it was before the turn.
 *
 * "As before turn N" needs more than turn N's point: a point restore only deletes paths its point
 * records as absent (tombstones), and a file first created during or after turn N is not in N's
 * point at all. So the restore target is N's manifest plus a tombstone for every path a later point
 * of the session or a later checkpoint has seen and N's point lacks — unless N's capture did not see
 * that path or N's own ignore rules excluded it (core's `unseenIn`: it lies at or below a path the
 * capture reported leaving out, the scan ran out of budget, or an agent un-ignored it, `.env` say,
 * so it appeared later): then it may have existed unrecorded, and it is left alone and reported.
 * What the latest capture left out and N's did not (a file whose name no point can record, a
 * nested repository cloned since: `laterLeftOut`) is in no point, so the restore cannot delete it
 * either: it is left as it is, and reported too, so that a restore is never taken for more than it
 * is.
 * When tombstones are added, the target is recorded as a point of its own (kind `rescue`, so no
 * capture starts from it; turn id `<turn>.before.<digest>`, so the same target is the same point and
 * a preview's token redeems it).
 */
import type {
  Checkpoint,
  ContentHash,
  PointCaptured,
  PointId,
  SessionId,
  SkippedPath,
  TurnId,
  WorkspacePath,
} from "@rewind/contracts"
import { refuse } from "@rewind/contracts"
import { Effect } from "effect"
import { ArtifactStore } from "../ports/ArtifactStore.js"
import { SessionStore } from "../ports/SessionStore.js"
import { branchView } from "../session/branchView.js"
import { loadSession, retryOnVersionConflict } from "../session/loadSession.js"
import type { SessionState } from "../session/sessionState.js"
import { sha256Hex } from "../workspace/contentHash.js"
import { encodeManifest, type Manifest, type ManifestEntry, sameManifestEntry } from "./manifestCodec.js"
import { recordPoint, summarise } from "./pointBuild.js"
import { ignoredInTree, isIgnoreFile } from "./pointIgnoreCheck.js"
import { pointIdFor } from "./pointIndex.js"
import { loadManifest, loadManifestTop } from "./pointManifest.js"
import { type Unseen, unseenIn } from "./unseenPaths.js"

export type TurnFileChange = {
  readonly path: string
  readonly change: "added" | "modified" | "deleted"
  /** `tool`: a file tool's checkpoint; `shell`: seen only by comparing points. */
  readonly by: "tool" | "shell"
}

/** A turn on the session's active branch, numbered from 1, with its own point. */
export interface TurnOnBranch {
  readonly n: number
  readonly turnId: TurnId
  readonly prompt: string
  readonly startedAt: number
  readonly status: "running" | "completed" | "aborted"
  /** The turn's own point (the workspace before it), when one was captured. */
  readonly point: PointCaptured | undefined
}

export interface TurnSummary extends TurnOnBranch {
  readonly files: ReadonlyArray<TurnFileChange>
  /**
   * Whether the shell changes are complete: false for a turn with no later point to compare with
   * (the latest turn before its first shell call), or without a point of its own.
   */
  readonly shellKnown: boolean
}

const ownedBy = (turnId: TurnId, p: PointCaptured) => p.turnId === turnId || p.turnId.startsWith(`${turnId}.`)

const isAbsent = (e: ManifestEntry | undefined) => e === undefined || e.kind === "tombstone"

/**
 * What changed from `before` to `after`. Two manifests of one chain share the entry objects of the
 * paths neither layer touched, so an identical entry is skipped without comparing its fields; no
 * union of the two key sets is built (at 27.7k paths that union was most of a turn's cost).
 */
export const manifestChanges = (before: Manifest, after: Manifest) => {
  const changes = new Map<string, TurnFileChange["change"]>()
  for (const [path, a] of before) {
    const b = after.get(path)
    const change = a === b ? undefined : changeOf(a, b)
    if (change !== undefined) changes.set(path, change)
  }
  for (const [path, b] of after) if (!before.has(path) && !isAbsent(b)) changes.set(path, "added")
  return changes
}

/** What became of a path whose entry went from `a` to `b`; undefined when nothing did. */
const changeOf = (
  a: ManifestEntry | undefined,
  b: ManifestEntry | undefined,
): TurnFileChange["change"] | undefined =>
  isAbsent(a)
    ? isAbsent(b)
      ? undefined
      : "added"
    : isAbsent(b)
      ? "deleted"
      : sameManifestEntry(a!, b!)
        ? undefined
        : "modified"

/** The session's turns on its active branch, oldest first, with their points; no file is compared. */
const turnsOnBranch = (state: SessionState) => {
  const view = branchView(state)
  const turnPoints = state.points.filter((p) => p.kind === "turn")
  const own = new Map<string, PointCaptured>()
  for (const p of turnPoints) if (!own.has(p.turnId)) own.set(p.turnId, p)
  const turns = [...state.turns.values()]
    .filter((t) => view.positions.has(t.userMessageId))
    .map(
      (turn, i): TurnOnBranch => ({
        n: i + 1,
        turnId: turn.id,
        prompt: (state.parts.get(turn.userMessageId) ?? []).map((p) => p.text ?? "").join(""),
        startedAt: turn.startedAt,
        status: turn.status,
        point: own.get(turn.id),
      }),
    )
  return { turns, turnPoints, own }
}

/**
 * The manifests of a session walked forward, turn by turn: one private map holds the tree at the
 * last manifest reached, and a manifest stored as a delta over it moves it on by that delta alone
 * (what changed is then the delta, checked against the map), so a long session costs a few small
 * layers per turn instead of a whole-tree copy and comparison per turn. Anything else is loaded and
 * compared whole.
 */
export const manifestWalk = () => {
  let tree: Map<WorkspacePath, ManifestEntry> | undefined
  let at: ContentHash | undefined
  /** The tree's ignore files (`isIgnoreFile`), kept beside it: whether a step changed the rules. */
  let rules = new Map<WorkspacePath, ManifestEntry>()
  let rulesChanged = false
  /** Moves to `to`, with what changed since the tree it stood at (`undefined`: it stood nowhere). */
  const advance = (to: ContentHash) =>
    Effect.gen(function* () {
      rulesChanged = false
      if (tree !== undefined && at === to) return new Map<string, TurnFileChange["change"]>()
      const top = tree === undefined ? undefined : yield* loadManifestTop(to)
      if (tree === undefined || top === undefined || top.base !== at) {
        // A full manifest is its own top layer; a delta over another one is loaded down its chain.
        const whole = top !== undefined && top.base === undefined ? top.entries : yield* loadManifest(to)
        const changes = tree === undefined ? undefined : manifestChanges(tree, whole)
        tree = new Map(whole)
        at = to
        const before = rules
        rules = new Map([...tree].filter(([path, entry]) => isIgnoreFile(path) && !isAbsent(entry)))
        rulesChanged = before.size !== rules.size || [...rules].some(([p, e]) => !sameRule(before.get(p), e))
        return changes
      }
      // The delta's final word per path (removed, then set, as a load applies it), each checked
      // against the tree before it.
      const touched = new Map<WorkspacePath, ManifestEntry | undefined>()
      for (const path of top.removed) touched.set(path, undefined)
      for (const [path, entry] of top.entries) touched.set(path, entry)
      const changes = new Map<string, TurnFileChange["change"]>()
      for (const [path, b] of touched) {
        if (isIgnoreFile(path)) {
          const kept = isAbsent(b) ? undefined : b
          if (!sameRule(rules.get(path), kept)) {
            rulesChanged = true
            rules = new Map(rules)
            if (kept === undefined) rules.delete(path)
            else rules.set(path, kept)
          }
        }
        const change = changeOf(tree.get(path), b)
        if (change !== undefined) changes.set(path, change)
        if (b === undefined) tree.delete(path)
        else tree.set(path, b)
      }
      at = to
      return changes
    })
  /**
   * What changed from `from` to `to`; `rulesBefore`: the ignore files at `from`, when the step
   * changed them (a path added under changed rules may have been there, ignored, all along).
   */
  return (from: ContentHash, to: ContentHash) =>
    Effect.gen(function* () {
      yield* advance(from)
      const before = rules
      const changes = (yield* advance(to)) ?? new Map<string, TurnFileChange["change"]>()
      return { changes, rulesBefore: rulesChanged ? before : undefined }
    })
}

const sameRule = (a: ManifestEntry | undefined, b: ManifestEntry | undefined) =>
  a === b || (a !== undefined && b !== undefined && sameManifestEntry(a, b))

/** The session's turns on its active branch, oldest first, each with the files it changed. */
export const listTurns = (sessionId: SessionId) =>
  Effect.gen(function* () {
    const state = yield* loadSession(sessionId)
    const { turns, turnPoints, own } = turnsOnBranch(state)
    const changesBetween = manifestWalk()
    const out: Array<TurnSummary> = []
    for (const [i, turn] of turns.entries()) {
      const { point } = turn
      const next = turns[i + 1]
      // The end of the turn: the next turn's own point, else the last point taken during it.
      const end =
        (next === undefined ? undefined : own.get(next.turnId)) ??
        turnPoints.findLast((p) => p.turnId !== turn.turnId && ownedBy(turn.turnId, p))
      const files = new Map<string, TurnFileChange>()
      if (point !== undefined && end !== undefined && end.manifestHash !== point.manifestHash) {
        const { changes, rulesBefore } = yield* changesBetween(point.manifestHash, end.manifestHash)
        // Under rules the turn changed, a path that appeared may have been there all along, ignored
        // (an agent that un-ignores `.env`): that is not a file the turn created.
        const appeared = [...changes].filter(([, c]) => c === "added").map(([p]) => p as WorkspacePath)
        const unignored =
          rulesBefore === undefined || appeared.length === 0
            ? new Map()
            : yield* ignoredInTree(rulesBefore, appeared)
        for (const [path, change] of changes)
          if (!unignored.has(path as WorkspacePath)) files.set(path, { path, change, by: "shell" })
      }
      for (const c of state.checkpoints.filter((c) => c.turnId === turn.turnId)) {
        const first = files.get(c.path)
        const change =
          c.before._tag === "absent" ? "added" : c.after?._tag === "absent" ? "deleted" : "modified"
        files.set(c.path, { path: c.path, change: first?.change ?? change, by: "tool" })
      }
      out.push({
        ...turn,
        files: [...files.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
        shellKnown: point !== undefined && end !== undefined,
      })
    }
    return out
  })

/** A turn on the branch with its point, or `no_checkpoint` when its capture never ran. */
const withPoint = (turn: TurnOnBranch) =>
  turn.point === undefined
    ? refuse(
        "no_checkpoint",
        `turn ${turn.n} has no point (its capture did not run or failed; see rewind status)`,
      )
    : Effect.succeed({ turn, point: turn.point })

/** Turn `n` (1-based) on `state`'s active branch with its point, or a refusal naming the range. */
const turnNumbered = (sessionId: SessionId, state: SessionState, n: number) => {
  const { turns } = turnsOnBranch(state)
  const turn = turns[n - 1]
  if (turn === undefined) {
    return refuse(
      "not_found",
      turns.length === 0
        ? `session ${sessionId} has no turn yet`
        : `session ${sessionId} has turns 1 to ${turns.length}; there is no turn ${n}`,
    )
  }
  return withPoint(turn)
}

export interface TurnTarget {
  readonly turn: TurnOnBranch
  /** The point a restore of "before turn N" restores: N's own, or N's plus tombstones. */
  readonly pointId: PointId
  /** Paths the target records as absent beyond N's own tombstones (created later). */
  readonly added: ReadonlyArray<WorkspacePath>
  /**
   * Paths created later that are left alone: N's capture did not see them, so they may have
   * existed then — `at` and `reason`: what it reported leaving out at or above the path (its
   * budget: `at` is where the scan stopped), or the directory whose ignore rules, as N's tree had
   * them, excluded the path (`ignored`).
   */
  readonly leftAlone: ReadonlyArray<{ readonly path: WorkspacePath } & Unseen>
  /**
   * What the session's latest capture left out that N's did not and the target does not hold at
   * or beneath (a name no point can record, a nested repository, a file over the size limit...):
   * no point holds it, so the restore leaves it as it is.
   */
  readonly laterLeftOut: ReadonlyArray<SkippedPath>
}

/** The latest capture's `skipped` that N's point neither reported nor holds at or beneath. */
const leftOutSince = (
  points: ReadonlyArray<PointCaptured>,
  index: number,
  point: PointCaptured,
  manifest: Manifest,
): ReadonlyArray<SkippedPath> => {
  const latest = points.slice(index + 1).findLast((p) => p.kind === "turn")
  const before = new Set(point.skipped.map((s) => s.path))
  const fresh = (latest?.skipped ?? []).filter((s) => !before.has(s.path))
  if (fresh.length === 0) return []
  const held = new Set<string>()
  for (const [path, entry] of manifest) {
    if (entry.kind === "tombstone") continue
    held.add(path)
    for (let cut = path.lastIndexOf("/"); cut > 0; cut = path.lastIndexOf("/", cut - 1)) {
      const dir = path.slice(0, cut)
      if (held.has(dir)) break
      held.add(dir)
    }
  }
  return fresh.filter((s) => !held.has(s.path))
}

const digest = (bytes: Uint8Array) => sha256Hex(bytes).slice(0, 24)

/**
 * The paths N's manifest lacks that a later point of the session holds or a checkpoint of a later
 * turn names, sorted. Each distinct manifest is read once, and one stored as a delta over a manifest
 * already read contributes only the entries its delta sets (the paths it adds are among them), so
 * a long session costs a few small layers per turn rather than a whole tree per turn.
 */
const freshAfter = (
  manifest: Manifest,
  points: ReadonlyArray<PointCaptured>,
  from: number,
  checkpoints: ReadonlyArray<Checkpoint>,
  laterTurns: ReadonlySet<TurnId>,
) =>
  Effect.gen(function* () {
    const paths = new Set<WorkspacePath>()
    const read = new Set<string>([points[from]!.manifestHash])
    for (const p of points.slice(from + 1)) {
      if (p.kind !== "turn" || read.has(p.manifestHash)) continue
      // A full manifest is read once, whole; a delta over one read already, by its entries alone.
      const top = yield* loadManifestTop(p.manifestHash)
      const entries =
        top.base === undefined || read.has(top.base) ? top.entries : yield* loadManifest(p.manifestHash)
      read.add(p.manifestHash)
      for (const [path, entry] of entries)
        if (entry.kind !== "tombstone" && !manifest.has(path)) paths.add(path)
    }
    for (const c of checkpoints) if (laterTurns.has(c.turnId) && !manifest.has(c.path)) paths.add(c.path)
    return [...paths].sort()
  })

/**
 * The restore target of "before turn n", recorded when it is not N's own point. `record: false`
 * computes it without writing (for `diff --turn`): `pointId` is then N's own point.
 */
export const turnTarget = (sessionId: SessionId, n: number, options: { readonly record: boolean }) =>
  Effect.gen(function* () {
    const state = yield* loadSession(sessionId)
    const { turn, point } = yield* turnNumbered(sessionId, state, n)
    return yield* targetOf(sessionId, state, turn, point, options)
  })

/** `turnTarget` of a turn already found on `state`, the session as loaded once. */
const targetOf = (
  sessionId: SessionId,
  state: SessionState,
  turn: TurnOnBranch,
  point: PointCaptured,
  options: { readonly record: boolean },
) =>
  Effect.gen(function* () {
    const manifest = yield* loadManifest(point.manifestHash)
    const index = state.points.findIndex((p) => p.pointId === point.pointId)
    const laterTurns = new Set(
      [...state.turns.values()].filter((t) => t.startedAt >= turn.startedAt).map((t) => t.id),
    )
    const fresh = yield* freshAfter(manifest, state.points, index, state.checkpoints, laterTurns)
    // Created later unless N's tree may have held it unseen (left out by its capture, or ignored).
    const unseen = yield* unseenIn({ manifest, skipped: point.skipped }, fresh)
    const added = fresh.filter((p) => !unseen.has(p))
    const leftAlone = fresh.flatMap((path): TurnTarget["leftAlone"] => {
      const by = unseen.get(path)
      return by === undefined ? [] : [{ path, ...by }]
    })
    const laterLeftOut = leftOutSince(state.points, index, point, manifest)
    if (added.length === 0 || !options.record) {
      return { turn, pointId: point.pointId, added, leftAlone, laterLeftOut } satisfies TurnTarget
    }
    const target = new Map<WorkspacePath, ManifestEntry>(manifest)
    for (const p of added) target.set(p, { kind: "tombstone" })
    const bytes = encodeManifest(target)
    const targetTurn = `${turn.turnId}.before.${digest(bytes)}` as TurnId
    const pointId = pointIdFor(sessionId, targetTurn, "rescue")
    if (!state.points.some((p) => p.pointId === pointId)) {
      const manifestHash = yield* Effect.flatMap(ArtifactStore, (a) => a.put(bytes))
      yield* retryOnVersionConflict(
        Effect.gen(function* () {
          // A racing `restore --turn` may have recorded the same target meanwhile.
          const now = yield* loadSession(sessionId)
          if (now.points.some((p) => p.pointId === pointId)) return
          yield* recordPoint(sessionId, {
            pointId,
            kind: "rescue",
            turnId: targetTurn,
            manifestHash,
            reusedManifest: false,
            ...summarise(target),
            // What N's capture left out, the target leaves out too: its preview names it (`leftOut`).
            skipped: point.skipped,
          })
        }),
      )
    }
    return { turn, pointId, added, leftAlone, laterLeftOut } satisfies TurnTarget
  })

export interface OtherWriter {
  readonly path: string
  readonly sessionId: SessionId
  readonly toolName: string
}

/** Checkpoints of other sessions on `paths` in turns that started at or after `since`. */
export const otherWriters = (sessionId: SessionId, since: number, paths: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const wanted = new Set(paths)
    if (wanted.size === 0) return []
    const store = yield* SessionStore
    const out: Array<OtherWriter> = []
    for (const summary of yield* store.listSessions()) {
      if (summary.sessionId === sessionId || summary.updatedAt < since) continue
      const other = yield* loadSession(summary.sessionId)
      for (const c of other.checkpoints) {
        const started = other.turns.get(c.turnId)?.startedAt ?? 0
        if (started >= since && wanted.has(c.path)) {
          out.push({ path: c.path, sessionId: summary.sessionId, toolName: c.toolName })
        }
      }
    }
    return out
  })

/**
 * The target of "restore the files to before turn `turnId`" (`turnTarget`, recorded), for a host
 * that knows the turn by its id: where it stands on the active branch, the point to preview and
 * restore (`previewPointRestore`, `restorePoint`), and what that restore deletes and leaves alone.
 */
export const turnRestoreTarget = (sessionId: SessionId, turnId: TurnId) =>
  Effect.gen(function* () {
    const state = yield* loadSession(sessionId)
    const found = turnsOnBranch(state).turns.find((t) => t.turnId === turnId)
    if (found === undefined) {
      return yield* refuse("not_found", `session ${sessionId} has no turn ${turnId} on its active branch`)
    }
    const { turn, point } = yield* withPoint(found)
    const target = yield* Effect.catchTag(
      targetOf(sessionId, state, turn, point, { record: true }),
      "ManifestUnreadable",
      (e) => refuse("unavailable", `the points of turn ${turn.n} cannot be read: ${e.message}`),
    )
    return {
      turn: turn.n,
      turnId,
      pointId: target.pointId,
      added: target.added,
      leftAlone: target.leftAlone,
      laterLeftOut: target.laterLeftOut,
    }
  })
