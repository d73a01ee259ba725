/**
 * Two sessions' trees side by side: what each holds now (`currentTree`: a scan and hash of the
 * session's own tree, its content stored so a merge can write it, recorded in no point; its stat
 * cache kept in memory for the next one), the fork base
 * they share (`commonBase`: through their chains of isolated forks, parent and child or siblings), and `diffSessions`,
 * what differs between them. Every read goes through the session's own workspace
 * (`withSessionWorkspace`), so comparing never writes either tree.
 */
import {
  type ContentHash,
  refuse,
  type SessionId,
  type SkippedPath,
  type WorkspaceAssigned,
  type WorkspacePath,
} from "@rewind/contracts"
import { createTwoFilesPatch } from "diff"
import { Clock, Effect, Either } from "effect"
import { ArtifactStore } from "../ports/ArtifactStore.js"
import { Workspace } from "../ports/Workspace.js"
import { loadSession } from "../session/loadSession.js"
import { withSessionWorkspace } from "../session/sessionWorkspace.js"
import { buildManifest, DEFAULT_CAPTURE_SETTINGS } from "../snapshot/capturePoint.js"
import { loadBaseStatCache } from "../snapshot/pointBuild.js"
import { latestTurnPoint } from "../snapshot/pointIndex.js"
import { loadManifest, type Manifest, type ManifestEntry, type StatCache } from "../snapshot/pointManifest.js"
import { reusableFromStatCache } from "../snapshot/scanReuse.js"
import { treeStatCache } from "../snapshot/treeStatCache.js"
import { scanWorkspace } from "../snapshot/workspaceScan.js"

/** One side of a difference: a file or a link; absent is null. */
export type TreeSide =
  | { readonly kind: "file"; readonly hash: ContentHash; readonly mode: number; readonly size: number }
  | { readonly kind: "link"; readonly target: string }

export const sideOf = (entry: ManifestEntry | undefined): TreeSide | null =>
  entry === undefined || entry.kind === "tombstone" ? null : entry

export const sameSide = (a: TreeSide | null, b: TreeSide | null) =>
  a === null || b === null
    ? a === b
    : a.kind === "file" && b.kind === "file"
      ? a.hash === b.hash && a.mode === b.mode
      : a.kind === "link" && b.kind === "link" && a.target === b.target

/**
 * A session's tree as it is now: scanned, hashed and stored, with what the scan left out. A file is
 * read unless a stat cache vouches for it (`sameStat`): its latest turn point's, or the one the
 * last `currentTree` of this session built (`TreeStatCache`), which it records in turn. Both were
 * built under the racy rule, so either may vouch: a file written since has another stat.
 */
export const currentTree = (sessionId: SessionId) =>
  withSessionWorkspace(
    sessionId,
    Effect.gen(function* () {
      const state = yield* loadSession(sessionId)
      const root = (yield* Workspace).root
      const trees = yield* treeStatCache
      const generation = trees?.generation() ?? 0
      const startedAtMs = yield* Clock.currentTimeMillis
      const settings = DEFAULT_CAPTURE_SETTINGS
      const point = yield* loadBaseStatCache(
        latestTurnPoint({ points: state.points, writeIntents: [] })?.statCacheHash,
      )
      const remembered = trees?.get(sessionId, root)
      const cache = unionOf(point?.value.map, remembered?.statCache)
      // The ignore decisions of the tree as last seen, each offered only with the rules it was made
      // under (the scan checks them against its rules now); never the union's, made under two.
      const reuse =
        remembered === undefined
          ? point === undefined
            ? undefined
            : reusableFromStatCache(point.value.map, point.value.rules)
          : reusableFromStatCache(remembered.statCache, remembered.rules)
      const scan = yield* scanWorkspace(
        { maxFiles: settings.maxFiles, deadlineMs: startedAtMs + settings.timeBudgetMs },
        undefined,
        reuse,
      )
      const built = yield* buildManifest({
        scanned: scan.entries,
        tracked: [],
        previous: new Map(),
        statCache: cache,
        settings,
        startedAtMs,
      })
      trees?.set(sessionId, root, { statCache: built.statCache, rules: scan.rules }, generation)
      return {
        manifest: built.manifest as Manifest,
        skipped: [...scan.skipped, ...built.skipped] as ReadonlyArray<SkippedPath>,
      }
    }),
  )

/** Both caches' entries; where both hold a path, the newer (`remembered`) one. */
const unionOf = (point: StatCache | undefined, remembered: StatCache | undefined): StatCache => {
  if (point === undefined || point.size === 0) return remembered ?? new Map()
  if (remembered === undefined || remembered.size === 0) return point
  const union = new Map(point)
  for (const [path, entry] of remembered) union.set(path, entry)
  return union
}

/** A session's isolated-fork ancestry: itself, then each source, with the fork that left it. */
const MAX_FORK_DEPTH = 64

const forkChain = (sessionId: SessionId) =>
  Effect.gen(function* () {
    const chain: Array<{ readonly sessionId: SessionId; readonly forkedBy: WorkspaceAssigned | undefined }> =
      []
    let at: SessionId | undefined = sessionId
    while (at !== undefined && chain.length < MAX_FORK_DEPTH && !chain.some((c) => c.sessionId === at)) {
      const workspace: WorkspaceAssigned | undefined = (yield* loadSession(at)).workspace
      chain.push({ sessionId: at, forkedBy: workspace })
      at = workspace?.sourceSessionId
    }
    return chain
  })

const noBase = (a: SessionId, b: SessionId, why: string) =>
  refuse("unavailable", `sessions ${a} and ${b} share no fork base: ${why}`, {
    reason: "no_common_base",
    sessions: [a, b],
  })

/**
 * The fork base two sessions share: the state both trees descend from. Walking each one's chain of
 * isolated forks up to the nearest session N both descend from (or are):
 * - one is N (an ancestor of the other): the base of the other's fork out of N;
 * - both descend from N by different forks (siblings, cousins): of those two forks' bases, the one
 *   made from N's older state (`sourceAt`, its place in N's stream); the newer one descends from it
 *   through N's own work, which the merge then sees as that side's change.
 * Refuses `unavailable` (`details.reason: "no_common_base"`) when there is no such N, or when two
 * forks' order cannot be told (made before `sourceAt` was recorded, with different bases).
 */
export const commonBase = (a: SessionId, b: SessionId) =>
  Effect.gen(function* () {
    const ca = yield* forkChain(a)
    const cb = yield* forkChain(b)
    const ia = ca.findIndex((x) => cb.some((y) => y.sessionId === x.sessionId))
    if (ia < 0)
      return yield* noBase(a, b, "neither descends from the other or from a session both were forked from")
    const ib = cb.findIndex((y) => y.sessionId === ca[ia]!.sessionId)
    // The forks out of N on each side (undefined on the side that is N itself).
    const fa = ia === 0 ? undefined : ca[ia - 1]!.forkedBy
    const fb = ib === 0 ? undefined : cb[ib - 1]!.forkedBy
    let of: WorkspaceAssigned | undefined
    if (fa === undefined || fb === undefined) of = fa ?? fb
    else if (fa.baseManifestHash === fb.baseManifestHash) of = fa
    else if (fa.sourceAt !== undefined && fb.sourceAt !== undefined) of = fa.sourceAt <= fb.sourceAt ? fa : fb
    else
      return yield* noBase(a, b, "they were forked from one session at points whose order was not recorded")
    if (of === undefined) return yield* noBase(a, b, "they are the same session")
    const base = of
    const manifest = yield* Effect.catchAll(loadManifest(base.baseManifestHash), (e) =>
      refuse("unavailable", `the fork base ${base.basePointId} cannot be read: ${e.message}`),
    )
    return { pointId: base.basePointId, manifest }
  })

const decoder = new TextDecoder("utf-8", { fatal: true })

/** The text of bytes that look like text (valid UTF-8, no NUL byte); undefined for binary. */
export const asText = (bytes: Uint8Array): string | undefined => {
  if (bytes.includes(0)) return undefined
  try {
    return decoder.decode(bytes)
  } catch {
    return undefined
  }
}

export interface SessionsDiffEntry {
  readonly path: WorkspacePath
  /** From `a` to `b`. */
  readonly change: "added" | "modified" | "deleted"
  readonly a: TreeSide | null
  readonly b: TreeSide | null
  readonly patch?: string
}

const MAX_PATCH_BYTES = 1024 * 1024

/** What differs between the trees of two sessions now (a → b), with unified diffs of text files. */
export const diffSessions = (a: SessionId, b: SessionId, options: { readonly patches?: boolean } = {}) =>
  Effect.gen(function* () {
    const artifacts = yield* ArtifactStore
    const ta = yield* currentTree(a)
    const tb = yield* currentTree(b)
    const paths = [...new Set([...ta.manifest.keys(), ...tb.manifest.keys()])].sort()
    const entries: Array<SessionsDiffEntry> = []
    let unchanged = 0
    for (const path of paths) {
      const sa = sideOf(ta.manifest.get(path))
      const sb = sideOf(tb.manifest.get(path))
      if (sameSide(sa, sb)) {
        if (sa !== null) unchanged++
        continue
      }
      const change = sa === null ? "added" : sb === null ? "deleted" : "modified"
      let patch: string | undefined
      const small = (s: TreeSide | null) => s === null || (s.kind === "file" && s.size <= MAX_PATCH_BYTES)
      if (
        options.patches !== false &&
        small(sa) &&
        small(sb) &&
        !(sa?.kind === "file" && sb?.kind === "file" && sa.hash === sb.hash)
      ) {
        const load = (s: TreeSide | null) =>
          s === null ? Effect.succeed(new Uint8Array()) : artifacts.get((s as { hash: ContentHash }).hash)
        const before = yield* Effect.either(load(sa))
        const after = yield* Effect.either(load(sb))
        const x = Either.isRight(before) ? asText(before.right) : undefined
        const y = Either.isRight(after) ? asText(after.right) : undefined
        if (x !== undefined && y !== undefined) {
          patch = createTwoFilesPatch(
            sa === null ? "/dev/null" : `a/${path}`,
            sb === null ? "/dev/null" : `b/${path}`,
            x,
            y,
            `session ${a}`,
            `session ${b}`,
          )
        }
      }
      entries.push({ path, change, a: sa, b: sb, ...(patch === undefined ? {} : { patch }) })
    }
    return { a, b, entries, unchanged, skipped: [...ta.skipped, ...tb.skipped] }
  })
