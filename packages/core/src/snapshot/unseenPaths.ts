/**
 * Which paths a point's capture may not have seen, read from what it reports leaving out: a path
 * it did not see may have existed unrecorded then, so a restore "as before" must not record it as
 * absent (that would delete it), and a merge must not read its absence as a deletion.
 *
 * A capture that reports a path left out saw nothing at or below it (an unreadable or skip-listed
 * directory, a nested repository, a file it could not take); one cut short by its budget may have
 * missed anything. Every other path of the tree was seen: where the manifest lacks it, it was
 * absent or ignored then. Before this, any left-out path at all made every path count as unseen,
 * and a real tree nearly always reports one (a nested repository, a `.svn` fixture, a non-UTF-8
 * name), so "restore before turn N" left every file the agent created in place.
 *
 * A path none of those hides may still have been there unseen when the tree's own ignore rules
 * excluded it (an agent that un-ignores `.env`): `unseenIn` asks both.
 *
 * Invariant: conservative — a reason is read as "at or below its path" unless it is the budget's
 * (everything); a reason added later falls under the first rule, never under "nothing missed".
 */
import type { SkippedPath, SkipReason, WorkspacePath } from "@rewind/contracts"
import { Effect } from "effect"
import { ignoredInTree } from "./pointIgnoreCheck.js"
import type { Manifest } from "./pointManifest.js"

/**
 * The skip that hides `path` from the capture that reported `skipped`, or undefined when that
 * capture saw it. Built once per point; each call is a walk up the path's directories.
 */
export const unseenBy = (
  skipped: ReadonlyArray<SkippedPath>,
): ((path: string) => SkippedPath | undefined) => {
  if (skipped.length === 0) return () => undefined
  const cut = skipped.find((s) => s.reason === "budget")
  if (cut !== undefined) return () => cut
  const at = new Map<string, SkippedPath>()
  for (const s of skipped) if (!at.has(s.path)) at.set(s.path, s)
  const root = at.get(".") ?? at.get("")
  if (root !== undefined) return () => root
  return (path) => {
    for (let end = path.length; end > 0; end = path.lastIndexOf("/", end - 1)) {
      const hit = at.get(end === path.length ? path : path.slice(0, end))
      if (hit !== undefined) return hit
    }
    return undefined
  }
}

/** Why a tree may have held a path unseen: what its capture left out at `at`, or its own rules. */
export interface Unseen {
  /** The left-out path at or above it, where the scan stopped, or the directory whose rules exclude it. */
  readonly at: string
  readonly reason: SkipReason | "ignored"
}

/**
 * Of `paths` that `tree` does not hold, those it may have held unseen: at or below what its capture
 * reported leaving out (`unseenBy`), or excluded by its own ignore rules (`ignoredInTree`). The one
 * rule a restore "before turn N" and a merge read a tree's missing paths by: only the others are
 * evidence that nothing was there.
 */
export const unseenIn = (
  tree: { readonly manifest: Manifest; readonly skipped: ReadonlyArray<SkippedPath> },
  paths: ReadonlyArray<WorkspacePath>,
) =>
  Effect.gen(function* () {
    const bySkip = unseenBy(tree.skipped)
    const found = new Map<WorkspacePath, Unseen>()
    const seen: Array<WorkspacePath> = []
    for (const path of paths) {
      const skip = bySkip(path)
      if (skip === undefined) seen.push(path)
      else found.set(path, { at: skip.path, reason: skip.reason })
    }
    for (const [path, by] of yield* ignoredInTree(tree.manifest, seen)) found.set(path, by)
    return found as ReadonlyMap<WorkspacePath, Unseen>
  })
