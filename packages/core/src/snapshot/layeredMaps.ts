/**
 * Layering of a manifest or stat cache into deltas: a capture that changed a few files stores only
 * those entries (and the removed paths) over the previous map. A chain is cut (a full map stored
 * again) every `MAX_DEPTH` layers or when the delta would hold more than a quarter of the entries,
 * so a load reads a bounded number of artifacts; depths only grow along a chain, so a forged loop is
 * refused. Generic over a `LayerCodec`; the two codecs and the store are `pointManifest.ts`.
 */
import type {
  ArtifactCorrupt,
  ArtifactNotFound,
  ArtifactStoreError,
  ContentHash,
  WorkspacePath,
} from "@rewind/contracts"
import { workspacePathProblem } from "@rewind/contracts"
import { Effect, Schema } from "effect"
import { ArtifactStore, isContentHash } from "../ports/ArtifactStore.js"

const encoder = new TextEncoder()
const decoder = new TextDecoder()

export const sortedPaths = <V>(map: ReadonlyMap<WorkspacePath, V>) =>
  [...map.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))

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

export interface FullMap<V> {
  readonly map: ReadonlyMap<WorkspacePath, V>
  readonly rules?: string
}

export interface LayerCodec<V> {
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
export const MAX_DEPTH = 16

export interface DecodedLayer<V> {
  readonly base: ContentHash | undefined
  readonly depth: number
  readonly entries: ReadonlyMap<WorkspacePath, V>
  readonly removed: ReadonlyArray<WorkspacePath>
  readonly rules?: string
}

export const withRules = <T extends object>(value: T, rules: string | undefined): T & { rules?: string } =>
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
export const loadLayered = <V>(
  codec: LayerCodec<V>,
  what: string,
  hash: ContentHash,
  cached: (hash: ContentHash) => Layered<V> | undefined,
  remember: (hash: ContentHash, value: Layered<V>) => void,
  /** The bytes of the artifact `hash`, when the caller read them already (checked as ever). */
  prefetched?: Uint8Array,
): Effect.Effect<
  Layered<V>,
  ManifestUnreadable | ArtifactNotFound | ArtifactCorrupt | ArtifactStoreError,
  ArtifactStore
> =>
  Effect.gen(function* () {
    const hit = cached(hash)
    if (hit !== undefined) return hit
    const artifacts = yield* ArtifactStore
    const bytes = prefetched ?? (yield* artifacts.get(hash))
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
 * The top layer of `hash` alone, read without loading the chain below: for a delta, its base, the
 * entries it sets over it and the paths it removes (applied in that order: removed, then set); for
 * a full layer (`base` undefined), the whole map as `entries`. What a caller walking a chain of maps
 * it has seen already needs: the paths a delta adds are among its entries, and a full layer is the
 * map itself, not something to read and decode a second time.
 */
export const loadTopLayer = <V>(
  codec: LayerCodec<V>,
  what: string,
  hash: ContentHash,
): Effect.Effect<
  {
    readonly base: ContentHash | undefined
    readonly entries: ReadonlyMap<WorkspacePath, V>
    readonly removed: ReadonlyArray<WorkspacePath>
  },
  ManifestUnreadable | ArtifactNotFound | ArtifactCorrupt | ArtifactStoreError,
  ArtifactStore
> =>
  Effect.gen(function* () {
    const layer = decodeLayer(codec, yield* (yield* ArtifactStore).get(hash))
    if (layer === undefined) {
      return yield* new ManifestUnreadable({ hash, message: `artifact ${hash} is not a Rewind ${what}` })
    }
    return { base: layer.base, entries: layer.entries, removed: layer.removed }
  })

/**
 * The bytes to store for `map`: a delta over `base` when that is small and the chain short, the
 * full map otherwise. `undefined` when `map` equals the base (nothing to store).
 */
export const encodeLayered = <V>(
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

/** A manifest or stat-cache artifact that is not what it should be: treated as unreadable, never as empty. */
export class ManifestUnreadable extends Schema.TaggedError<ManifestUnreadable>()("ManifestUnreadable", {
  hash: Schema.String,
  message: Schema.String,
}) {}
