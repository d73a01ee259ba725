// What the manifest tests capture points with and compare them to: turn captures once the racy
// window has passed, a manifest in path order, the tree a session records (a fresh capture's, plus
// the tombstones of what the session saw go), random edit steps over a few paths of a memory
// workspace, and a session walked through such steps beside fresh sessions of the same trees.
import type { ContentHash, PointCaptured, SessionId, TurnId } from "@rewind/contracts"
import { ArtifactStore, capturePoint, loadManifest, type Manifest, type Paging } from "@rewind/core"
import { Effect, FastCheck as fc, TestClock } from "effect"
import { type Env, newSession, ROOT } from "./fileRewindEnv.js"

/** Manifests and stat caches of more than 8 entries stored as pages of about 4 (core layerPages.ts). */
export const SMALL_PAGING: Paging = { from: 8, average: 4, most: 16 }

/** Turn `n`'s id. */
export const turn = (n: number) => `turn-${n}` as TurnId

/** Turn `n`'s point of the session. */
export const capture = (sessionId: SessionId, n: number) =>
  Effect.gen(function* () {
    const outcome = yield* capturePoint(sessionId, turn(n))
    if (outcome._tag !== "Captured") return yield* Effect.dieMessage(outcome.reason)
    return outcome.point
  })

/** Captures after each step; files older than the racy window are cached, as in a long session. */
export const later = TestClock.adjust("10 seconds")

/** Turn `n`'s point, captured once the racy window has passed since the last change. */
export const captureLater = (sessionId: SessionId, n: number) => Effect.zipRight(later, capture(sessionId, n))

/** A new session over the tree and its first point, taken once the racy window passed. */
export const firstPoint = Effect.gen(function* () {
  const sessionId = yield* newSession
  yield* later
  return { sessionId, first: yield* capture(sessionId, 1) }
})

/** Where a stored manifest or stat cache layer sits: its base and depth (none for a full layer). */
export const storedDepth = (hash: ContentHash) =>
  Effect.gen(function* () {
    const bytes = yield* (yield* ArtifactStore).get(hash)
    const layer = JSON.parse(new TextDecoder().decode(bytes)) as { base?: string; depth?: number }
    return { base: layer.base, depth: layer.depth ?? 0 }
  })

const byPath = ([a]: readonly [string, unknown], [b]: readonly [string, unknown]) =>
  a < b ? -1 : a > b ? 1 : 0

/** A manifest in path order (`toEqual` on two maps compares their order too). */
export const sorted = (tree: Manifest): Manifest => new Map([...tree].sort(byPath))

/**
 * The manifest a session records of the tree a fresh session's first capture records as `fresh`:
 * the same, plus a tombstone at every path the session has seen (`seen`, which this adds to) and
 * the tree no longer holds.
 */
export const sessionTree = (fresh: Manifest, seen: Set<string>): Manifest => {
  const tree = new Map(fresh)
  for (const path of fresh.keys()) seen.add(path)
  for (const path of seen) if (!tree.has(path as never)) tree.set(path as never, { kind: "tombstone" })
  return sorted(tree)
}

export interface EditOp {
  readonly path: string
  readonly write: boolean
  readonly content: number
}

/** A step: one to `most` writes or removals among `paths`. */
export const editStep = (paths: ReadonlyArray<string>, most: number): fc.Arbitrary<Array<EditOp>> =>
  fc.array(fc.record({ path: fc.constantFrom(...paths), write: fc.boolean(), content: fc.nat({ max: 3 }) }), {
    minLength: 1,
    maxLength: most,
  })

/** A step made in the workspace. */
export const applyStep = (env: Env, ops: ReadonlyArray<EditOp>) => {
  for (const op of ops)
    if (op.write) env.fs.writeFile(`${ROOT}/${op.path}`, `v${op.content}`)
    else env.fs.remove(`${ROOT}/${op.path}`)
}

/**
 * Each step made in `env`, then the session's point of it (turn 2 on); beside each, a fresh
 * session's first point of the same tree and the tree the session records (`sessionTree`).
 */
export const walkSteps = (
  env: Env,
  sessionId: SessionId,
  first: PointCaptured,
  steps: ReadonlyArray<ReadonlyArray<EditOp>>,
) =>
  Effect.gen(function* () {
    const seen = new Set<string>((yield* loadManifest(first.manifestHash)).keys())
    const points: Array<PointCaptured> = []
    const fresh: Array<PointCaptured> = []
    const trees: Array<Manifest> = []
    for (const [i, ops] of steps.entries()) {
      applyStep(env, ops)
      points.push(yield* captureLater(sessionId, i + 2))
      const again = yield* capture(yield* newSession, i + 2)
      fresh.push(again)
      trees.push(sessionTree(yield* loadManifest(again.manifestHash), seen))
    }
    return { points, fresh, trees }
  })

/**
 * How many of `points` past the first 16 steps are a delta at depth 1 over `first`'s manifest: a
 * chain squashed at its depth limit (a property run without any proves nothing of the squash).
 */
export const squashesOver = (first: PointCaptured, points: ReadonlyArray<PointCaptured>) =>
  Effect.gen(function* () {
    let squashes = 0
    for (const [i, point] of points.entries()) {
      const layer = yield* storedDepth(point.manifestHash)
      if (layer.depth === 1 && layer.base === first.manifestHash && i >= 16) squashes++
    }
    return squashes
  })
