/**
 * The manifest of a point: path → file (content hash + mode) | link (target) | tombstone (recorded
 * as absent). It is stored as an artifact of canonical JSON (paths sorted, fixed key order), so
 * equal workspaces give byte-equal manifests with equal addresses and an unchanged workspace
 * reuses the previous manifest. Also the stat cache: stored as JSON the same way up to format 1,
 * binary and columnar since (`statCacheBinary.ts`; the JSON form is still read, so a store written
 * before keeps working, and a delta may sit on a layer of either form).
 */
import {
  type ArtifactCorrupt,
  type ArtifactNotFound,
  type ArtifactStoreError,
  type ContentHash,
  type WorkspacePath,
  workspacePathProblem,
} from "@rewind/contracts"
import { Effect, Schema } from "effect"
import { ArtifactStore, isContentHash } from "../ports/ArtifactStore.js"
import { pointArtifactCache } from "./pointArtifactCache.js"
import {
  decodeStatCacheLayer,
  encodeStatCacheLayer,
  isBinaryStatCache,
  type StatCacheEntry,
} from "./statCacheBinary.js"

export type { StatCacheEntry } from "./statCacheBinary.js"

export type ManifestEntry =
  | { readonly kind: "file"; readonly hash: ContentHash; readonly mode: number; readonly size: number }
  | { readonly kind: "link"; readonly target: string }
  | { readonly kind: "tombstone" }

export type Manifest = ReadonlyMap<WorkspacePath, ManifestEntry>

const MANIFEST_FORMAT = "rewind-manifest/1"
const STAT_CACHE_FORMAT = "rewind-stat-cache/1"

const encoder = new TextEncoder()
const decoder = new TextDecoder()

const sortedPaths = <V>(map: ReadonlyMap<WorkspacePath, V>) =>
  [...map.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))

const manifestRow = (path: WorkspacePath, e: ManifestEntry): Array<unknown> => {
  switch (e.kind) {
    case "file":
      return [path, "f", e.hash, e.mode, e.size]
    case "link":
      return [path, "l", e.target]
    default:
      return [path, "t"]
  }
}

/** The full (not delta) encoding of a manifest. */
export const encodeManifest = (manifest: Manifest): Uint8Array =>
  encoder.encode(
    JSON.stringify({
      format: MANIFEST_FORMAT,
      entries: sortedPaths(manifest).map((path) => manifestRow(path, manifest.get(path)!)),
    }),
  )

const manifestEntryOf = (raw: Array<unknown>): ManifestEntry | undefined => {
  const [path, kind] = raw
  if (typeof path !== "string" || workspacePathProblem(path) !== undefined) return undefined
  if (kind === "f") {
    const [, , hash, mode, size] = raw
    if (typeof hash !== "string" || !isContentHash(hash)) return undefined
    if (typeof mode !== "number" || typeof size !== "number") return undefined
    return { kind: "file", hash: hash as ContentHash, mode, size }
  }
  if (kind === "l") return typeof raw[2] === "string" ? { kind: "link", target: raw[2] } : undefined
  if (kind === "t") return { kind: "tombstone" }
  return undefined
}

/** Decodes a manifest, checking every field; a malformed one is `undefined` (treated as unreadable). */
export const decodeManifest = (bytes: Uint8Array): Manifest | undefined => {
  try {
    const parsed = JSON.parse(decoder.decode(bytes)) as { format?: unknown; entries?: unknown }
    if (parsed.format !== MANIFEST_FORMAT || !Array.isArray(parsed.entries)) return undefined
    const out = new Map<WorkspacePath, ManifestEntry>()
    for (const raw of parsed.entries as Array<Array<unknown>>) {
      const entry = Array.isArray(raw) ? manifestEntryOf(raw) : undefined
      if (entry === undefined) return undefined
      out.set(raw[0] as WorkspacePath, entry)
    }
    return out
  } catch {
    return undefined
  }
}

export type StatCache = ReadonlyMap<WorkspacePath, StatCacheEntry>

const statCacheRow = (path: WorkspacePath, e: StatCacheEntry): Array<unknown> => [
  path,
  e.size,
  e.mtimeNs.toString(),
  e.inode.toString(),
  e.mode,
  e.hash,
  ...(e.ctimeNs === undefined ? [] : [e.ctimeNs.toString()]),
]

/**
 * The full (not delta) encoding of a stat cache. `rules` is the identity of the ignore rules the
 * capture's scan decided under (`workspaceScan.ts`), kept so the next capture may reuse its
 * decisions; a cache without it offers none. Binary (`statCacheBinary.ts`), or JSON for the rare
 * cache that form cannot hold exactly.
 */
export const encodeStatCache = (cache: StatCache, rules?: string): Uint8Array =>
  encodeStatCacheLayer({
    base: undefined,
    depth: 0,
    rules,
    entries: sortedPaths(cache).map((path) => [path, cache.get(path)!] as const),
    removed: [],
  }) ?? encodeStatCacheJson(cache, rules)

const encodeStatCacheJson = (cache: StatCache, rules: string | undefined): Uint8Array =>
  encoder.encode(
    JSON.stringify({
      format: STAT_CACHE_FORMAT,
      ...(rules === undefined ? {} : { rules }),
      entries: sortedPaths(cache).map((path) => statCacheRow(path, cache.get(path)!)),
    }),
  )

/** Whether `s` is a non-empty run of ASCII digits (what `BigInt` is then sure to read as decimal). */
const isDigits = (s: string): boolean => {
  if (s.length === 0) return false
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 48 || c > 57) return false
  }
  return true
}

// Run for every file of the tree when a capture loads the previous stat cache: one object per
// entry (no spread of a first one), digits checked without a regex.
const statCacheEntryOf = (raw: Array<unknown>): StatCacheEntry | undefined => {
  const [path, size, mtime, inode, mode, hash, ctime] = raw
  if (typeof path !== "string" || workspacePathProblem(path) !== undefined) return undefined
  if (typeof hash !== "string" || !isContentHash(hash)) return undefined
  if (typeof size !== "number" || typeof mode !== "number") return undefined
  if (typeof mtime !== "string" || typeof inode !== "string") return undefined
  if (!isDigits(mtime) || !isDigits(inode)) return undefined
  if (ctime === undefined)
    return { size, mtimeNs: BigInt(mtime), inode: BigInt(inode), mode, hash: hash as ContentHash }
  if (typeof ctime !== "string" || !isDigits(ctime)) return undefined
  return {
    size,
    mtimeNs: BigInt(mtime),
    inode: BigInt(inode),
    mode,
    hash: hash as ContentHash,
    ctimeNs: BigInt(ctime),
  }
}

export const decodeStatCache = (bytes: Uint8Array): StatCache | undefined =>
  decodeStatCacheWithRules(bytes)?.map

const decodeStatCacheWithRules = (bytes: Uint8Array): FullMap<StatCacheEntry> | undefined => {
  if (isBinaryStatCache(bytes)) {
    const layer = decodeStatCacheLayer(bytes, MAX_DEPTH)
    if (layer === undefined || layer.base !== undefined) return undefined
    return layer.rules === undefined ? { map: layer.entries } : { map: layer.entries, rules: layer.rules }
  }
  try {
    const parsed = JSON.parse(decoder.decode(bytes)) as {
      format?: unknown
      entries?: unknown
      rules?: unknown
    }
    if (parsed.format !== STAT_CACHE_FORMAT || !Array.isArray(parsed.entries)) return undefined
    if (parsed.rules !== undefined && typeof parsed.rules !== "string") return undefined
    const out = new Map<WorkspacePath, StatCacheEntry>()
    for (const raw of parsed.entries as Array<Array<unknown>>) {
      const entry = Array.isArray(raw) ? statCacheEntryOf(raw) : undefined
      if (entry === undefined) return undefined
      out.set(raw[0] as WorkspacePath, entry)
    }
    return parsed.rules === undefined ? { map: out } : { map: out, rules: parsed.rules }
  } catch {
    return undefined
  }
}

/**
 * A manifest or stat cache as loaded: the whole map, how many deltas it sits on, and every
 * artifact it was assembled from (GC keeps them all while the map is a root).
 */
export interface Layered<V> {
  readonly map: ReadonlyMap<WorkspacePath, V>
  readonly depth: number
  readonly layers: ReadonlyArray<ContentHash>
  /** A stat cache's ignore-rules identity (see `encodeStatCache`); never set on a manifest. */
  readonly rules?: string
  /**
   * Set when a layer is in a form no longer written (a stat cache in JSON): the next capture stores
   * the map whole in the current form instead of a delta over it, so a store written before
   * converts once rather than decoding the old form at every capture.
   */
  readonly legacy?: true
}

interface FullMap<V> {
  readonly map: ReadonlyMap<WorkspacePath, V>
  readonly rules?: string
}

interface LayerCodec<V> {
  readonly full: (bytes: Uint8Array) => FullMap<V> | undefined
  readonly encodeFull: (map: ReadonlyMap<WorkspacePath, V>, rules: string | undefined) => Uint8Array
  readonly deltaFormat: string
  readonly encodeEntry: (path: WorkspacePath, entry: V) => Array<unknown>
  readonly decodeEntry: (raw: Array<unknown>) => [WorkspacePath, V] | undefined
  readonly same: (a: V, b: V | undefined) => boolean
  /** A binary form's decoder, tried first when it claims the bytes (full or delta layers). */
  readonly binary?: {
    readonly claims: (bytes: Uint8Array) => boolean
    readonly decode: (bytes: Uint8Array) => DecodedLayer<V> | undefined
    /** The bytes of a delta, or `undefined` to store it as JSON. */
    readonly encodeDelta: (delta: {
      readonly base: ContentHash
      readonly depth: number
      readonly rules: string | undefined
      readonly entries: ReadonlyArray<readonly [WorkspacePath, V]>
      readonly removed: ReadonlyArray<WorkspacePath>
    }) => Uint8Array | undefined
  }
}

/**
 * Deltas: a capture that changed a few files stores only those entries (and the removed paths) over
 * the previous map, instead of re-encoding, hashing and compressing the whole tree every turn. A
 * chain is cut (a full map stored again) every `MAX_DEPTH` layers or when the delta would hold more
 * than a quarter of the entries, so a load reads a bounded number of artifacts.
 */
const MAX_DEPTH = 16

interface DecodedLayer<V> {
  readonly base: ContentHash | undefined
  readonly depth: number
  readonly entries: ReadonlyMap<WorkspacePath, V>
  readonly removed: ReadonlyArray<WorkspacePath>
  readonly rules?: string
}

const withRules = <T extends object>(value: T, rules: string | undefined): T & { rules?: string } =>
  rules === undefined ? value : { ...value, rules }

const decodeLayer = <V>(codec: LayerCodec<V>, bytes: Uint8Array): DecodedLayer<V> | undefined => {
  if (codec.binary?.claims(bytes)) return codec.binary.decode(bytes)
  const full = codec.full(bytes)
  if (full !== undefined)
    return withRules({ base: undefined, depth: 0, entries: full.map, removed: [] }, full.rules)
  try {
    const parsed = JSON.parse(decoder.decode(bytes)) as Record<string, unknown>
    if (parsed.format !== codec.deltaFormat) return undefined
    const { base, depth, entries, removed, rules } = parsed
    if (rules !== undefined && typeof rules !== "string") return undefined
    if (typeof base !== "string" || !isContentHash(base)) return undefined
    if (typeof depth !== "number" || !Number.isInteger(depth) || depth < 1 || depth > MAX_DEPTH)
      return undefined
    if (!Array.isArray(entries) || !Array.isArray(removed)) return undefined
    const out = new Map<WorkspacePath, V>()
    for (const raw of entries) {
      const entry = Array.isArray(raw) ? codec.decodeEntry(raw) : undefined
      if (entry === undefined) return undefined
      out.set(entry[0], entry[1])
    }
    for (const path of removed) {
      if (typeof path !== "string" || workspacePathProblem(path) !== undefined) return undefined
    }
    return withRules(
      { base: base as ContentHash, depth, entries: out, removed: removed as Array<WorkspacePath> },
      rules,
    )
  } catch {
    return undefined
  }
}

const loadLayered = <V>(
  codec: LayerCodec<V>,
  what: string,
  hash: ContentHash,
  cached: (hash: ContentHash) => Layered<V> | undefined,
  remember: (hash: ContentHash, value: Layered<V>) => void,
): Effect.Effect<
  Layered<V>,
  ManifestUnreadable | ArtifactNotFound | ArtifactCorrupt | ArtifactStoreError,
  ArtifactStore
> =>
  Effect.gen(function* () {
    const hit = cached(hash)
    if (hit !== undefined) return hit
    const artifacts = yield* ArtifactStore
    const bytes = yield* artifacts.get(hash)
    const layer = decodeLayer(codec, bytes)
    if (layer === undefined) {
      return yield* new ManifestUnreadable({ hash, message: `artifact ${hash} is not a Rewind ${what}` })
    }
    let value: Layered<V>
    const legacy = codec.binary !== undefined && !codec.binary.claims(bytes)
    if (layer.base === undefined)
      value = withRules({ map: layer.entries, depth: 0, layers: [hash] }, layer.rules)
    else {
      const base = yield* loadLayered(codec, what, layer.base, cached, remember)
      // Depths only grow along a chain, so a forged loop or an over-long chain is refused.
      if (base.depth !== layer.depth - 1) {
        return yield* new ManifestUnreadable({
          hash,
          message: `artifact ${hash} is a ${what} delta at depth ${layer.depth} over one at depth ${base.depth}`,
        })
      }
      const map = new Map(base.map)
      for (const path of layer.removed) map.delete(path)
      for (const [path, entry] of layer.entries) map.set(path, entry)
      // The rules are the top layer's own: a layer without them offers no decisions to reuse.
      value = withRules({ map, depth: layer.depth, layers: [...base.layers, hash] }, layer.rules)
      if (base.legacy) value = { ...value, legacy: true }
    }
    if (legacy) value = { ...value, legacy: true }
    remember(hash, value)
    return value
  })

/**
 * The bytes to store for `map`: a delta over `base` when that is small and the chain short, the
 * full map otherwise. `undefined` when `map` equals the base (nothing to store).
 */
const encodeLayered = <V>(
  codec: LayerCodec<V>,
  map: ReadonlyMap<WorkspacePath, V>,
  base: { readonly hash: ContentHash; readonly value: Layered<V> } | undefined,
  rules?: string,
  /** When known, the only paths where `map` may differ from the base's (a live engine's delta). */
  differsAt?: ReadonlySet<WorkspacePath>,
): { readonly bytes: Uint8Array; readonly depth: number } | "unchanged" => {
  const full = () => ({ bytes: codec.encodeFull(map, rules), depth: 0 })
  const changed: Array<WorkspacePath> = []
  const removed: Array<WorkspacePath> = []
  const limit = map.size >> 2
  if (base !== undefined && differsAt !== undefined) {
    for (const path of differsAt) {
      const entry = map.get(path)
      if (entry === undefined) {
        if (base.value.map.has(path)) removed.push(path)
      } else if (!codec.same(entry, base.value.map.get(path))) changed.push(path)
    }
    if (changed.length === 0 && removed.length === 0 && rules === base.value.rules) return "unchanged"
  }
  if (base === undefined || base.value.depth >= MAX_DEPTH) return full()
  if (differsAt === undefined) {
    for (const [path, entry] of map) {
      if (!codec.same(entry, base.value.map.get(path))) changed.push(path)
      if (changed.length > limit) return full()
    }
    for (const path of base.value.map.keys()) if (!map.has(path)) removed.push(path)
  }
  if (changed.length === 0 && removed.length === 0 && rules === base.value.rules) return "unchanged"
  if (changed.length + removed.length > limit) return full()
  const depth = base.value.depth + 1
  changed.sort(byPath)
  removed.sort(byPath)
  const binary = codec.binary?.encodeDelta({
    base: base.hash,
    depth,
    rules,
    entries: changed.map((path) => [path, map.get(path)!] as const),
    removed,
  })
  if (binary !== undefined) return { bytes: binary, depth }
  const bytes = encoder.encode(
    JSON.stringify({
      format: codec.deltaFormat,
      base: base.hash,
      depth,
      ...(rules === undefined ? {} : { rules }),
      entries: changed.map((path) => codec.encodeEntry(path, map.get(path)!)),
      removed,
    }),
  )
  return { bytes, depth }
}

const byPath = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

export const sameManifestEntry = (a: ManifestEntry, b: ManifestEntry | undefined): boolean => {
  if (a === b) return true
  if (b === undefined || a.kind !== b.kind) return false
  if (a.kind === "file")
    return b.kind === "file" && a.hash === b.hash && a.mode === b.mode && a.size === b.size
  if (a.kind === "link") return b.kind === "link" && a.target === b.target
  return true
}

export const sameStatCacheEntry = (a: StatCacheEntry, b: StatCacheEntry | undefined): boolean =>
  a === b ||
  (b !== undefined &&
    a.size === b.size &&
    a.mtimeNs === b.mtimeNs &&
    a.inode === b.inode &&
    a.mode === b.mode &&
    a.hash === b.hash)

const manifestCodec: LayerCodec<ManifestEntry> = {
  full: (bytes) => {
    const map = decodeManifest(bytes)
    return map === undefined ? undefined : { map }
  },
  encodeFull: (map) => encodeManifest(map),
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
  deltaFormat: "rewind-stat-cache-delta/1",
  encodeEntry: statCacheRow,
  decodeEntry: (raw) => {
    const entry = statCacheEntryOf(raw)
    return entry === undefined ? undefined : [raw[0] as WorkspacePath, entry]
  },
  same: sameStatCacheEntry,
  binary: {
    claims: isBinaryStatCache,
    decode: (bytes) => {
      const layer = decodeStatCacheLayer(bytes, MAX_DEPTH)
      if (layer === undefined) return undefined
      const { base, depth, entries, removed, rules } = layer
      return withRules({ base, depth, entries, removed }, rules)
    },
    encodeDelta: encodeStatCacheLayer,
  },
}

/** Reads a manifest (following its deltas); fails when it or a layer below is missing or malformed. */
export const loadManifestLayers = (hash: ContentHash) =>
  Effect.flatMap(pointArtifactCache, (cache) =>
    loadLayered(
      manifestCodec,
      "manifest",
      hash,
      (h) => cache?.getManifest(h),
      (h, v) => cache?.setManifest(h, v),
    ),
  )

/** Reads and decodes a manifest artifact; fails with a message when it is missing or malformed. */
export const loadManifest = (hash: ContentHash) => Effect.map(loadManifestLayers(hash), (l) => l.map)

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
    const artifacts = yield* ArtifactStore
    const cache = yield* pointArtifactCache
    const m = encodeLayered(manifestCodec, manifest, base?.manifest, undefined, differsAt)
    // A stat cache still in the old form is stored whole in the new one (see `Layered.legacy`).
    const statBase = base?.statCache?.value.legacy ? undefined : base?.statCache
    const c = encodeLayered(statCacheCodec, statCache, statBase, rules, differsAt)
    const toPut = [m, c].flatMap((x) => (x === "unchanged" ? [] : [x.bytes]))
    const hashes = toPut.length === 0 ? [] : yield* artifacts.putMany(toPut)
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
      const layers = encoded.depth === 0 ? [hash] : [...previous!.value.layers, hash]
      remember?.(hash, withRules({ map, depth: encoded.depth, layers }, storedRules))
      return hash
    }
    const manifestHash = settle(m, manifest, base?.manifest, cache?.setManifest)
    const statCacheHash = settle(c, statCache, statBase, cache?.setStatCache, rules)
    return { manifestHash, statCacheHash }
  })

/** A manifest or stat-cache artifact that is not what it should be: treated as unreadable, never as empty. */
export class ManifestUnreadable extends Schema.TaggedError<ManifestUnreadable>()("ManifestUnreadable", {
  hash: Schema.String,
  message: Schema.String,
}) {}

/** The content hashes a manifest refers to (GC marks them). */
export const manifestBlobs = (manifest: Manifest): ReadonlyArray<ContentHash> => {
  const out: Array<ContentHash> = []
  for (const e of manifest.values()) if (e.kind === "file") out.push(e.hash)
  return out
}
