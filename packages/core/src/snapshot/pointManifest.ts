/**
 * The manifest and stat cache of a point as stored: each a layered map (`layeredMaps.ts`) over its
 * codec (`manifestCodec.ts`, `statCacheCodec.ts` with `statCacheBinary.ts`), loaded through the
 * point artifact cache and stored as a delta over the base point's where that is small. Callers
 * import the codecs' public pieces from here.
 */
import type { ContentHash, WorkspacePath } from "@rewind/contracts"
import { Effect } from "effect"
import type { ArtifactStore } from "../ports/ArtifactStore.js"
import {
  type EncodedLayer,
  encodeChange,
  encodeLayered,
  type LayerCodec,
  type Layered,
  type LayeredSubset,
  layersOf,
  loadLayered,
  loadLayeredSubset,
  loadLayerHead,
  loadTopLayer,
  MAX_DEPTH,
  putEncoded,
  type Wanted,
  withRules,
} from "./layeredMaps.js"
import {
  decodeManifest,
  decodeManifestSubset,
  encodeManifest,
  type Manifest,
  type ManifestEntry,
  manifestEntryOf,
  manifestRow,
  sameManifestEntry,
} from "./manifestCodec.js"
import { pointArtifactCache } from "./pointArtifactCache.js"
import { patched } from "./pointPatch.js"
import {
  decodeStatCacheLayer,
  encodeStatCacheLayer,
  isBinaryStatCache,
  type StatCacheEntry,
} from "./statCacheBinary.js"
import {
  decodeStatCacheWithRules,
  encodeStatCache,
  type StatCache,
  sameStatCacheEntry,
  statCacheEntryOf,
  statCacheRow,
} from "./statCacheCodec.js"

export { type Layered, type LayeredSubset, ManifestUnreadable } from "./layeredMaps.js"
export {
  decodeManifest,
  encodeManifest,
  type Manifest,
  type ManifestEntry,
  manifestBlobs,
  sameManifestEntry,
} from "./manifestCodec.js"
export {
  decodeStatCache,
  encodeStatCache,
  type StatCache,
  type StatCacheEntry,
  sameStatCacheEntry,
} from "./statCacheCodec.js"

const manifestCodec: LayerCodec<ManifestEntry> = {
  full: (bytes) => {
    const map = decodeManifest(bytes)
    return map === undefined ? undefined : { map }
  },
  fullSubset: (bytes, wanted) => {
    const map = decodeManifestSubset(bytes, wanted)
    return map === undefined ? undefined : { map }
  },
  encodeFull: (map) => encodeManifest(map),
  paged: { isTombstone: (entry) => entry.kind === "tombstone" },
  deltaFormat: "rewind-manifest-delta/1",
  encodeEntry: (path, e) => manifestRow(path, e),
  decodeEntry: (raw) => {
    const entry = manifestEntryOf(raw)
    return entry === undefined ? undefined : [raw[0] as WorkspacePath, entry]
  },
  same: sameManifestEntry,
}

const statCacheCodec: LayerCodec<StatCacheEntry> = {
  full: decodeStatCacheWithRules,
  encodeFull: encodeStatCache,
  paged: { isTombstone: () => false },
  deltaFormat: "rewind-stat-cache-delta/1",
  encodeEntry: statCacheRow,
  decodeEntry: (raw) => {
    const entry = statCacheEntryOf(raw)
    return entry === undefined ? undefined : [raw[0] as WorkspacePath, entry]
  },
  same: sameStatCacheEntry,
  binary: {
    claims: isBinaryStatCache,
    decode: (bytes, wanted) => {
      const layer = decodeStatCacheLayer(bytes, MAX_DEPTH, wanted)
      if (layer === undefined) return undefined
      const { base, depth, entries, removed, rules } = layer
      return withRules({ base, depth, entries, removed }, rules)
    },
    encodeDelta: encodeStatCacheLayer,
  },
}

/**
 * Reads a manifest (following its deltas); fails when it or a layer below is missing or malformed.
 * `prefetched`: the bytes of artifact `hash` itself, when the caller read them already.
 */
export const loadManifestLayers = (hash: ContentHash, prefetched?: Uint8Array) =>
  Effect.flatMap(pointArtifactCache, (cache) =>
    loadLayered(
      manifestCodec,
      "manifest",
      hash,
      (h) => cache?.getManifest(h),
      (h, v) => cache?.setManifest(h, v),
      prefetched,
    ),
  )

/** Reads and decodes a manifest artifact; fails with a message when it is missing or malformed. */
export const loadManifest = (hash: ContentHash) => Effect.map(loadManifestLayers(hash), (l) => l.map)

/** A manifest's top layer alone: a delta's base and entries, or a full manifest whole; see `loadTopLayer`. */
export const loadManifestTop = (hash: ContentHash) => loadTopLayer(manifestCodec, "manifest", hash)

/** Reads a stat cache (following its deltas). */
export const loadStatCacheLayers = (hash: ContentHash) =>
  Effect.flatMap(pointArtifactCache, (cache) =>
    loadLayered(
      statCacheCodec,
      "stat cache",
      hash,
      (h) => cache?.getStatCache(h),
      (h, v) => cache?.setStatCache(h, v),
    ),
  )

/**
 * Stores the stat cache of a point whose manifest is its base's own (`unchangedManifest.ts`),
 * exactly as `storeManifestAndStatCache` stores it beside an unchanged manifest.
 */
export const storeStatCacheBeside = (
  statCache: StatCache,
  rules: string | undefined,
  base: { readonly hash: ContentHash; readonly value: Layered<StatCacheEntry> },
) =>
  Effect.gen(function* () {
    const cache = yield* pointArtifactCache
    const statBase = base.value.legacy ? undefined : base
    const c = yield* encodeLayered(statCacheCodec, "stat cache", statCache, statBase, rules)
    if (c === "unchanged") return statBase!.hash
    const [hash] = yield* putEncoded([c])
    const layers = layersOf(c, hash!, statBase)
    cache?.setStatCache(hash!, withRules({ map: statCache, depth: c.depth, layers }, rules))
    return hash!
  })

/**
 * Stores a manifest and a stat cache, each as a delta over the base point's where that is small.
 * Returns the base's own hash for a map equal to the base's, storing nothing.
 */
export const storeManifestAndStatCache = (
  manifest: Manifest,
  statCache: StatCache,
  /** The ignore-rules identity of the scan, stored with the stat cache. */
  rules: string | undefined,
  base:
    | {
        readonly manifest: { readonly hash: ContentHash; readonly value: Layered<ManifestEntry> }
        readonly statCache?: { readonly hash: ContentHash; readonly value: Layered<StatCacheEntry> }
      }
    | undefined,
  /** When known, the only paths where the maps may differ from the base's (see `encodeLayered`). */
  differsAt?: ReadonlySet<WorkspacePath>,
) =>
  Effect.gen(function* () {
    const cache = yield* pointArtifactCache
    const m = yield* encodeLayered(manifestCodec, "manifest", manifest, base?.manifest, undefined, differsAt)
    // A stat cache still in the old form is stored whole in the new one (see `Layered.legacy`).
    const statBase = base?.statCache?.value.legacy ? undefined : base?.statCache
    const c = yield* encodeLayered(statCacheCodec, "stat cache", statCache, statBase, rules, differsAt)
    const hashes = yield* putEncoded([m, c].flatMap((x) => (x === "unchanged" ? [] : [x])))
    let next = 0
    const settle = <V>(
      encoded: typeof m | typeof c,
      map: ReadonlyMap<WorkspacePath, V>,
      previous: { readonly hash: ContentHash; readonly value: Layered<V> } | undefined,
      remember: ((hash: ContentHash, value: Layered<V>) => void) | undefined,
      storedRules?: string,
    ): ContentHash => {
      if (encoded === "unchanged") return previous!.hash
      const hash = hashes[next++]!
      remember?.(
        hash,
        withRules({ map, depth: encoded.depth, layers: layersOf(encoded, hash, previous) }, storedRules),
      )
      return hash
    }
    const manifestHash = settle(m, manifest, base?.manifest, cache?.setManifest)
    const statCacheHash = settle(c, statCache, statBase, cache?.setStatCache, rules)
    return { manifestHash, statCacheHash }
  })

/**
 * A point's manifest as far as the entries `wanted` wants go (`LayeredSubset`): what a capture that
 * knows where the tree can differ from the point loads instead of the whole map.
 */
export const loadManifestSubset = (manifestHash: ContentHash, wanted: Wanted) =>
  Effect.flatMap(pointArtifactCache, (cache) =>
    loadLayeredSubset(manifestCodec, "manifest", manifestHash, wanted, (h) => cache?.getManifest(h)),
  )

/** See `loadManifestSubset`; `undefined` wants none: only the top layer is read (`loadLayerHead`). */
export const loadStatCacheSubset = (statCacheHash: ContentHash, wanted: Wanted | undefined) =>
  Effect.flatMap(pointArtifactCache, (cache) =>
    wanted === undefined
      ? loadLayerHead(statCacheCodec, "stat cache", statCacheHash)
      : loadLayeredSubset(statCacheCodec, "stat cache", statCacheHash, wanted, (h) => cache?.getStatCache(h)),
  )

/** What changed at the paths a capture re-examined, for `storeDeltas`. */
export interface PathChanges<V> {
  readonly set: ReadonlyArray<readonly [WorkspacePath, V]>
  readonly removed: ReadonlyArray<WorkspacePath>
}

/** The changes at `affected` from `before` (the base's entries there) to `after`. */
export const changesAt = <V>(
  affected: Iterable<WorkspacePath>,
  before: ReadonlyMap<WorkspacePath, V>,
  after: ReadonlyMap<WorkspacePath, V>,
  same: (a: V, b: V | undefined) => boolean,
): PathChanges<V> => {
  const set: Array<readonly [WorkspacePath, V]> = []
  const removed: Array<WorkspacePath> = []
  for (const path of affected) {
    const now = after.get(path)
    if (now === undefined) {
      if (before.has(path)) removed.push(path)
    } else if (!same(now, before.get(path))) set.push([path, now])
  }
  return { set, removed }
}

/**
 * Stores a point's manifest and stat cache as deltas over loaded subsets of its base's (see
 * `loadManifestSubset`, `loadStatCacheSubset`): for each map, the base's own hash where nothing
 * changed, or `undefined` where a delta cannot be written (the change is over a quarter of
 * `sizes`, so is the chain's squashed at its depth limit, or a stat cache is in the old form):
 * that map is then stored whole by the caller (`storeWhole`).
 */
export const storeDeltas = (
  base: {
    readonly manifest: LayeredSubset<ManifestEntry>
    readonly statCache: LayeredSubset<StatCacheEntry>
  },
  manifest: PathChanges<ManifestEntry>,
  statCache: PathChanges<StatCacheEntry>,
  /** About how many entries each map holds: what a delta is measured against. */
  sizes: { readonly manifest: number; readonly statCache: number },
) =>
  Effect.gen(function* () {
    const unchanged = (changes: PathChanges<unknown>) =>
      changes.set.length === 0 && changes.removed.length === 0
    // A change over the subset's top layer (at the depth limit, its chain squashed: only the
    // deltas are read for that, not the full layer).
    const delta = <V>(
      codec: LayerCodec<V>,
      what: string,
      subset: LayeredSubset<V>,
      changes: PathChanges<V>,
      size: number,
    ): Effect.Effect<"unchanged" | EncodedLayer | undefined, never, ArtifactStore> =>
      unchanged(changes)
        ? Effect.succeed("unchanged")
        : subset.legacy === true
          ? Effect.succeed(undefined)
          : encodeChange(codec, what, subset, subset.rules, changes.set, changes.removed, size >> 2)
    const m = yield* delta(manifestCodec, "manifest", base.manifest, manifest, sizes.manifest)
    // The rules stay the base's: the caller re-examined no path an ignore file decides differently.
    const c = yield* delta(statCacheCodec, "stat cache", base.statCache, statCache, sizes.statCache)
    const hashes = yield* putEncoded([m, c].flatMap((x) => (typeof x === "object" ? [x] : [])))
    let next = 0
    const settle = (x: "unchanged" | EncodedLayer | undefined, baseHash: ContentHash) =>
      x === "unchanged" ? baseHash : x === undefined ? undefined : hashes[next++]!
    return { manifestHash: settle(m, base.manifest.hash), statCacheHash: settle(c, base.statCache.hash) }
  })

/**
 * One map of a point stored the usual way (a delta where small and the chain short, whole
 * otherwise) from its base loaded whole, patched at `affected` with `next`'s entries: where
 * `storeDeltas` could not write a delta.
 */
export const storeWhole = <V>(
  which: "manifest" | "stat cache",
  hash: ContentHash,
  next: ReadonlyMap<WorkspacePath, V>,
  affected: ReadonlySet<WorkspacePath>,
) =>
  Effect.gen(function* () {
    const codec = (which === "manifest" ? manifestCodec : statCacheCodec) as unknown as LayerCodec<V>
    const value = (yield* which === "manifest"
      ? loadManifestLayers(hash)
      : loadStatCacheLayers(hash)) as unknown as Layered<V>
    const base = value.legacy ? undefined : { hash, value }
    const map = patched(value.map, next, affected, codec.same)
    const encoded = yield* encodeLayered(
      codec,
      which,
      map,
      base,
      value.rules,
      base === undefined ? undefined : affected,
    )
    if (encoded === "unchanged") return hash
    const [stored] = yield* putEncoded([encoded])
    return stored!
  })
