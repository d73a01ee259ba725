/**
 * An optional per-session stat cache of a tree as `currentTree` last read it (merges and session
 * diffs read both sessions' trees whole; a session that captures no turn points, such as an
 * isolated fork's child whose base point was written by materialisation, has no point stat cache
 * to vouch for its files, so without this every merge preview read and hashed its whole tree).
 *
 * Invariant: every entry was recorded by a manifest build (`pointBuild.ts`, `contentBatches.ts`)
 * under the racy rule — a file whose mtime lay within the racy window of the build, or whose stat
 * did not match what was read, is not in it — so an entry vouches for its hash only while the
 * file's whole stat (`sameStat`) is unchanged; any later write changes mtime or ctime. Keyed by
 * session and tree root, so a session's entries never vouch for another tree.
 *
 * The hashes are of content a build stored but recorded nowhere else, so a GC sweep may delete it:
 * a sweep in this engine clears the cache before and after (`pointGc.ts`), and a build that began
 * before a clearing does not record its tree; a sweep in another process is caught where
 * content is needed (a restore's plan checks every blob it would write exists).
 * Kept in memory only, a few trees at most: a host that merges repeatedly (the Promise facade, the
 * server) provides it.
 */
import type { SessionId } from "@rewind/contracts"
import { Context, Effect, Layer, Option } from "effect"
import { boundedMap } from "../internal/boundedMap.js"
import type { StatCache } from "./pointManifest.js"

export interface TreeStat {
  readonly statCache: StatCache
  /** The rules identity of the scan it was built from (what a repeat scan's reuse is checked against). */
  readonly rules: string
}

export interface TreeStatCacheService {
  /** Which clearing the cache is at: a tree built from what `get` answered before one is not kept. */
  readonly generation: () => number
  readonly get: (sessionId: SessionId, root: string) => TreeStat | undefined
  /** Keeps `tree` unless the cache was cleared since `generation` (the build's start) was read. */
  readonly set: (sessionId: SessionId, root: string, tree: TreeStat, generation: number) => void
  /** Forgets every tree (around a GC sweep: the content their hashes name may be gone). */
  readonly clear: () => void
}

export class TreeStatCache extends Context.Tag("@rewind/core/TreeStatCache")<
  TreeStatCache,
  TreeStatCacheService
>() {}

/** Keeps the `capacity` most recently used trees (a tree of 100,000 files is some tens of MB). */
export const layerTreeStatCache = (capacity = 4): Layer.Layer<TreeStatCache> =>
  Layer.sync(TreeStatCache, () => {
    const trees = boundedMap<string, TreeStat>(capacity)
    let generation = 0
    const keyOf = (sessionId: SessionId, root: string) => `${sessionId}\u0000${root}`
    return {
      generation: () => generation,
      get: (sessionId, root) => trees.get(keyOf(sessionId, root)),
      set: (sessionId, root, tree, since) => {
        if (since === generation) trees.set(keyOf(sessionId, root), tree)
      },
      clear: () => {
        generation++
        trees.clear()
      },
    }
  })

/** The cache when the host provides one. */
export const treeStatCache = Effect.map(Effect.serviceOption(TreeStatCache), Option.getOrUndefined)
