// What the manifest tests compare points with: a manifest in path order, the tree a session records
// (a fresh capture's, plus the tombstones of what the session saw go), and random edit steps over a
// few paths of a memory workspace.
import type { Manifest } from "@rewind/core"
import { FastCheck as fc } from "effect"
import { type Env, ROOT } from "./fileRewindEnv.js"

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
