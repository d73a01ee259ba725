/**
 * Layering of a manifest or stat cache into deltas: a capture that changed a few files stores only
 * those entries (and the removed paths) over the previous map. A chain never grows past `MAX_DEPTH`
 * layers: there its deltas are merged into one over the full layer (`squashedDelta`), and a map is
 * stored whole again when that merge, or a single delta, would hold more than a quarter of the
 * entries; so a load reads a bounded number of artifacts. Depths only grow along a chain, so a
 * forged loop is refused. Generic over a `LayerCodec`; the two codecs and the store are
 * `pointManifest.ts`.
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
import {
  decodePageIndex,
  encodePageIndex,
  isPageIndex,
  LayerPaging,
  makePages,
  type PageRef,
  pagesFor,
  type StoredPage,
} from "./layerPages.js"

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
  /** A full layer's entries at the paths `wanted` wants only, where the form allows it cheaply. */
  readonly fullSubset?: (bytes: Uint8Array, wanted: Wanted) => FullMap<V> | undefined
  /**
   * Set where a large full map is stored as pages (`layerPages.ts`; manifests and stat caches):
   * which entries are tombstones (an index counts them per page: a subset load reads every page
   * holding one).
   */
  readonly paged?: { readonly isTombstone: (entry: V) => boolean }
  /** A binary form's decoder, tried first when it claims the bytes (full or delta layers). */
  readonly binary?: {
    readonly claims: (bytes: Uint8Array) => boolean
    readonly decode: (bytes: Uint8Array, wanted?: Wanted) => DecodedLayer<V> | undefined
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
 * Which entries of a full layer a subset load wants (`loadLayeredSubset`), by path and, where the
 * form tells it before decoding, whether the entry records an absence (a manifest's tombstone).
 * `parents`, when given, is the same test for every entry that is not a tombstone: wanted exactly
 * when its parent directory is one of these (a decoder may then choose on the bytes).
 */
export type Wanted = ((path: string, tombstone: boolean) => boolean) & {
  readonly parents?: ReadonlyArray<string>
}

/**
 * The deepest a delta may sit over its full layer: a load reads at most this many deltas. A store at
 * this depth squashes the chain (`squashedDelta`) rather than add a layer.
 */
export const MAX_DEPTH = 16

export interface DecodedLayer<V> {
  readonly base: ContentHash | undefined
  readonly depth: number
  readonly entries: ReadonlyMap<WorkspacePath, V>
  readonly removed: ReadonlyArray<WorkspacePath>
  readonly rules?: string
  /** A full layer stored as pages: its pages, whose entries are not read yet (`entries` is empty). */
  readonly pages?: ReadonlyArray<PageRef>
}

export const withRules = <T extends object>(value: T, rules: string | undefined): T & { rules?: string } =>
  rules === undefined ? value : { ...value, rules }

const decodeLayer = <V>(
  codec: LayerCodec<V>,
  bytes: Uint8Array,
  wanted?: Wanted,
): DecodedLayer<V> | undefined => {
  if (codec.paged !== undefined && isPageIndex(bytes)) {
    const index = decodePageIndex(bytes)
    if (index === undefined) return undefined
    return withRules(
      { base: undefined, depth: 0, entries: new Map(), removed: [], pages: index.pages },
      index.rules,
    )
  }
  if (codec.binary?.claims(bytes)) {
    const layer = codec.binary.decode(bytes, wanted)
    // A delta is taken whole (see `loadLayeredSubset`): decoded again without `wanted`.
    return wanted === undefined || layer === undefined || layer.base === undefined
      ? layer
      : codec.binary.decode(bytes)
  }
  const subset = wanted === undefined ? undefined : codec.fullSubset?.(bytes, wanted)
  if (subset !== undefined)
    return withRules({ base: undefined, depth: 0, entries: subset.map, removed: [] }, subset.rules)
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
type LoadError = ManifestUnreadable | ArtifactNotFound | ArtifactCorrupt | ArtifactStoreError

/** Whether `read` is in a form no longer written (see `Layered.legacy`); an index of pages is not. */
const isLegacy = <V>(codec: LayerCodec<V>, read: Uint8Array) =>
  codec.binary !== undefined &&
  !codec.binary.claims(read) &&
  !(codec.paged !== undefined && isPageIndex(read))

/** A full layer's artifacts: itself and its pages (what GC keeps with it). */
const fullLayers = (hash: ContentHash, pages: ReadonlyArray<Pick<PageRef, "hash">> | undefined) => [
  hash,
  ...(pages ?? []).map((p) => p.hash),
]

/**
 * The entries of a paged full layer (`index`, the artifact `at`) that `wanted` wants (every entry
 * when undefined): the pages that can hold them (`pagesFor`), each decoded as any full layer is
 * (`decodeLayer`: only the wanted part where its form allows), one map. A page that is not a full
 * layer, or read whole holds another count than its index says, or an entry outside its range,
 * makes the map unreadable.
 */
const loadPages = <V>(
  codec: LayerCodec<V>,
  what: string,
  at: ContentHash,
  pages: ReadonlyArray<PageRef>,
  wanted: Wanted | undefined,
): Effect.Effect<Map<WorkspacePath, V>, LoadError, ArtifactStore> =>
  Effect.gen(function* () {
    const chosen = wanted === undefined ? pages : pagesFor(pages, wanted.parents)
    const read = yield* (yield* ArtifactStore).getMany(chosen.map((p) => p.hash))
    const map = new Map<WorkspacePath, V>()
    for (let i = 0; i < chosen.length; i++) {
      const page = chosen[i]!
      const decoded = decodeLayer(codec, read[i]!, wanted)
      const bad = (why: string) =>
        new ManifestUnreadable({ hash: at, message: `artifact ${at}: its page ${page.hash} ${why}` })
      if (decoded === undefined || decoded.base !== undefined || decoded.pages !== undefined)
        return yield* bad(`is not a full Rewind ${what}`)
      if (wanted === undefined && decoded.entries.size !== page.entries)
        return yield* bad(`holds ${decoded.entries.size} entries, not the ${page.entries} its index says`)
      for (const [path, entry] of decoded.entries) {
        if (path < page.first || path > page.last) return yield* bad(`holds ${path}, outside its range`)
        if (wanted === undefined || wanted(path, codec.paged?.isTombstone(entry) ?? false))
          map.set(path, entry)
      }
    }
    return map
  })

/**
 * A chain loaded: down from `hash` to a full layer (decoded with `wanted` when given) or a map
 * `cached` holds, then every delta met on the way applied, oldest first, to one copy of that map
 * (not each to a copy of the one below it). Depths only grow along a chain, so a forged loop or an
 * over-long chain is refused. `fresh` is the full layer when it was decoded here (whole: worth
 * remembering).
 */
const loadChain = <V>(
  codec: LayerCodec<V>,
  what: string,
  hash: ContentHash,
  cached: (hash: ContentHash) => Layered<V> | undefined,
  wanted: Wanted | undefined,
  prefetched: Uint8Array | undefined,
): Effect.Effect<{ readonly value: Layered<V>; readonly fresh?: Layered<V> }, LoadError, ArtifactStore> =>
  Effect.gen(function* () {
    const artifacts = yield* ArtifactStore
    const unreadable = (at: ContentHash, message: string) =>
      new ManifestUnreadable({ hash: at, message: `artifact ${at} ${message}` })
    const deltas: Array<{
      readonly hash: ContentHash
      readonly layer: DecodedLayer<V>
      readonly legacy: boolean
    }> = []
    let at = hash
    let bytes = prefetched
    let bottom: Layered<V>
    let fresh: Layered<V> | undefined
    for (;;) {
      const read = bytes ?? (yield* artifacts.get(at))
      bytes = undefined
      const layer = decodeLayer(codec, read, wanted)
      if (layer === undefined) return yield* unreadable(at, `is not a Rewind ${what}`)
      const legacy = isLegacy(codec, read)
      if (layer.base === undefined) {
        bottom =
          layer.pages === undefined
            ? withRules({ map: layer.entries, depth: 0, layers: [at] }, layer.rules)
            : withRules(
                {
                  map: yield* loadPages(codec, what, at, layer.pages, wanted),
                  depth: 0,
                  layers: fullLayers(at, layer.pages),
                },
                layer.rules,
              )
        if (legacy) bottom = { ...bottom, legacy: true }
        if (wanted === undefined) fresh = bottom
        break
      }
      deltas.push({ hash: at, layer, legacy })
      if (deltas.length > MAX_DEPTH)
        return yield* unreadable(at, `is a ${what} delta deeper than ${MAX_DEPTH}`)
      const loaded = cached(layer.base)
      if (loaded !== undefined) {
        bottom = loaded
        break
      }
      at = layer.base
    }
    if (deltas.length === 0) return { value: bottom, ...(fresh === undefined ? {} : { fresh }) }
    const map = new Map(bottom.map)
    const layers = [...bottom.layers]
    let depth = bottom.depth
    let legacy = bottom.legacy === true
    for (let i = deltas.length - 1; i >= 0; i--) {
      const delta = deltas[i]!
      if (delta.layer.depth !== depth + 1)
        return yield* unreadable(
          delta.hash,
          `is a ${what} delta at depth ${delta.layer.depth} over one at depth ${depth}`,
        )
      for (const path of delta.layer.removed) map.delete(path)
      for (const [path, entry] of delta.layer.entries) map.set(path, entry)
      depth = delta.layer.depth
      layers.push(delta.hash)
      legacy ||= delta.legacy
    }
    // The rules are the top layer's own: a layer without them offers no decisions to reuse.
    let value: Layered<V> = withRules({ map, depth, layers }, deltas[0]!.layer.rules)
    if (legacy) value = { ...value, legacy: true }
    return { value, ...(fresh === undefined ? {} : { fresh }) }
  })

export const loadLayered = <V>(
  codec: LayerCodec<V>,
  what: string,
  hash: ContentHash,
  cached: (hash: ContentHash) => Layered<V> | undefined,
  remember: (hash: ContentHash, value: Layered<V>) => void,
  /** The bytes of the artifact `hash`, when the caller read them already (checked as ever). */
  prefetched?: Uint8Array,
): Effect.Effect<Layered<V>, LoadError, ArtifactStore> => {
  const hit = cached(hash)
  if (hit !== undefined) return Effect.succeed(hit)
  return Effect.map(loadChain(codec, what, hash, cached, undefined, prefetched), ({ value, fresh }) => {
    if (fresh !== undefined) remember(fresh.layers[0]!, fresh)
    remember(hash, value)
    return value
  })
}

/**
 * A manifest or stat cache as far as some entries go: every entry of the whole chain that `wanted`
 * wants (and perhaps others: every entry a delta sets, or the whole map when it was loaded
 * already), and what a delta over it needs (depth, layers, the top layer's rules). What a capture
 * that knows where the tree can differ loads (`sealedCapture.ts`): the full layer below is read but
 * only the wanted part of it decoded. Never cached: it may not be the whole map.
 *
 * `wanted` is asked of the full layer's entries; a delta's are all taken (they are few), so an
 * entry a delta changed is right whatever `wanted` said of the full layer's.
 */
export interface LayeredSubset<V> {
  readonly hash: ContentHash
  readonly entries: ReadonlyMap<WorkspacePath, V>
  readonly depth: number
  readonly layers: ReadonlyArray<ContentHash>
  readonly rules?: string
  readonly legacy?: true
}

export const loadLayeredSubset = <V>(
  codec: LayerCodec<V>,
  what: string,
  hash: ContentHash,
  wanted: Wanted,
  cached: (hash: ContentHash) => Layered<V> | undefined,
): Effect.Effect<LayeredSubset<V>, LoadError, ArtifactStore> => {
  const asSubset = ({ map, ...rest }: Layered<V>): LayeredSubset<V> => ({ hash, entries: map, ...rest })
  const whole = cached(hash)
  if (whole !== undefined) return Effect.succeed(asSubset(whole))
  return Effect.map(loadChain(codec, what, hash, cached, wanted, undefined), ({ value }) => asSubset(value))
}

const NOTHING_WANTED: Wanted = Object.assign(() => false, { parents: [] })

/**
 * What a delta over `hash` needs of it (depth, the top layer's rules, whether its form is the old
 * one), read from its top layer alone, and the entries that layer sets when it is a delta (a full
 * layer's are not decoded): a `LayeredSubset` that wants nothing, for a writer that knows every
 * entry it changes without the ones below (`sealedCapture.ts`, which then hashes again the few
 * files it lists rather than read a whole tree's stat cache).
 */
export const loadLayerHead = <V>(
  codec: LayerCodec<V>,
  what: string,
  hash: ContentHash,
): Effect.Effect<
  LayeredSubset<V>,
  ManifestUnreadable | ArtifactNotFound | ArtifactCorrupt | ArtifactStoreError,
  ArtifactStore
> =>
  Effect.gen(function* () {
    const read = yield* (yield* ArtifactStore).get(hash)
    // Wanting nothing, by parent too: a binary layer's paths are counted, not decoded (a full
    // layer's are every path of the tree: 27.7k strings, ~5 MB, at babel 1x).
    const layer = decodeLayer(codec, read, NOTHING_WANTED)
    if (layer === undefined)
      return yield* new ManifestUnreadable({ hash, message: `artifact ${hash} is not a Rewind ${what}` })
    const head: LayeredSubset<V> = withRules(
      {
        hash,
        entries: layer.base === undefined ? new Map() : layer.entries,
        depth: layer.depth,
        layers: fullLayers(hash, layer.pages),
      },
      layer.rules,
    )
    return isLegacy(codec, read) ? { ...head, legacy: true } : head
  })

/**
 * The bytes of a delta over `base` (at `base.depth + 1`) setting `changed` and removing `removed`:
 * the binary form where the codec has one that takes it, JSON otherwise.
 */
const encodeDelta = <V>(
  codec: LayerCodec<V>,
  base: { readonly hash: ContentHash; readonly depth: number },
  rules: string | undefined,
  changed: ReadonlyArray<readonly [WorkspacePath, V]>,
  removed: ReadonlyArray<WorkspacePath>,
): { readonly bytes: Uint8Array; readonly depth: number } => {
  const depth = base.depth + 1
  const entries = [...changed].sort((a, b) => byPath(a[0], b[0]))
  const gone = [...removed].sort(byPath)
  const binary = codec.binary?.encodeDelta({ base: base.hash, depth, rules, entries, removed: gone })
  if (binary !== undefined) return { bytes: binary, depth }
  const bytes = encoder.encode(
    JSON.stringify({
      format: codec.deltaFormat,
      base: base.hash,
      depth,
      ...(rules === undefined ? {} : { rules }),
      entries: entries.map(([path, entry]) => codec.encodeEntry(path, entry)),
      removed: gone,
    }),
  )
  return { bytes, depth }
}

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
    const entries =
      layer.pages === undefined ? layer.entries : yield* loadPages(codec, what, hash, layer.pages, undefined)
    return { base: layer.base, entries, removed: layer.removed }
  })

/**
 * How `map` differs from `base`: `"unchanged"`; `"whole"` when there is no base or the change is
 * over a quarter of the entries (a delta would save little); or the entries to set and the paths
 * to remove. `differsAt`, when known, is the only paths where they may differ (a live engine's or
 * a capture's delta), so the rest is not compared.
 */
const layeredChanges = <V>(
  codec: LayerCodec<V>,
  map: ReadonlyMap<WorkspacePath, V>,
  base: { readonly hash: ContentHash; readonly value: Layered<V> } | undefined,
  rules: string | undefined,
  differsAt?: ReadonlySet<WorkspacePath>,
):
  | "unchanged"
  | "whole"
  | {
      readonly changed: ReadonlyArray<readonly [WorkspacePath, V]>
      readonly removed: ReadonlyArray<WorkspacePath>
    } => {
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
  } else if (base !== undefined) {
    for (const [path, entry] of map) {
      if (!codec.same(entry, base.value.map.get(path))) changed.push(path)
      if (changed.length > limit) return "whole"
    }
    for (const path of base.value.map.keys()) if (!map.has(path)) removed.push(path)
  }
  if (base !== undefined && changed.length === 0 && removed.length === 0 && rules === base.value.rules)
    return "unchanged"
  if (base === undefined || changed.length + removed.length > limit) return "whole"
  return { changed: changed.map((path) => [path, map.get(path)!] as const), removed }
}

/**
 * A chain at its depth limit cut without storing the whole map again: the deltas down from `top`
 * merged into one delta at depth 1 over the full layer below them, with `changed` and `removed`
 * applied last. Only the deltas are decoded (they are small), never the full layer (whose artifact is
 * read only to list a paged one's pages), so a capture that changed a few files stays about as
 * cheap at the limit as below it. `undefined` when the merged delta
 * would hold more than `limit` entries (the paths changed since the full layer are many: the map
 * is then stored whole), or the chain is in a form no longer written. `over`: the full layer (and
 * its pages), the only artifacts the new delta needs beside itself.
 */
const squashedDelta = <V>(
  codec: LayerCodec<V>,
  what: string,
  top: ContentHash,
  rules: string | undefined,
  changed: ReadonlyArray<readonly [WorkspacePath, V]>,
  removed: ReadonlyArray<WorkspacePath>,
  limit: number,
): Effect.Effect<
  | { readonly bytes: Uint8Array; readonly depth: number; readonly over: ReadonlyArray<ContentHash> }
  | undefined,
  LoadError,
  ArtifactStore
> =>
  Effect.gen(function* () {
    const artifacts = yield* ArtifactStore
    const deltas: Array<DecodedLayer<V>> = []
    let at = top
    let over: ContentHash | undefined
    for (let depth = Number.POSITIVE_INFINITY; over === undefined; ) {
      const read = yield* artifacts.get(at)
      if (isLegacy(codec, read)) return undefined
      const layer = decodeLayer(codec, read)
      if (layer === undefined)
        return yield* new ManifestUnreadable({ hash: at, message: `artifact ${at} is not a Rewind ${what}` })
      if (layer.base === undefined) return undefined
      if (layer.depth >= depth || deltas.length >= MAX_DEPTH)
        return yield* new ManifestUnreadable({
          hash: at,
          message: `artifact ${at} is a ${what} delta at depth ${layer.depth} below one at depth ${depth}`,
        })
      deltas.push(layer)
      depth = layer.depth
      if (layer.depth === 1) over = layer.base
      else at = layer.base
    }
    const set = new Map<WorkspacePath, V>()
    const gone = new Set<WorkspacePath>()
    const apply = (entries: Iterable<readonly [WorkspacePath, V]>, dropped: Iterable<WorkspacePath>) => {
      for (const path of dropped) {
        set.delete(path)
        gone.add(path)
      }
      for (const [path, entry] of entries) {
        set.set(path, entry)
        gone.delete(path)
      }
    }
    for (let i = deltas.length - 1; i >= 0; i--) apply(deltas[i]!.entries, deltas[i]!.removed)
    apply(changed, removed)
    if (set.size + gone.size > limit) return undefined
    // The full layer's pages too, when it is paged: the new delta is read over them.
    // (An index is read as one; a full layer of another form is not decoded for nothing.)
    const full = codec.paged === undefined ? undefined : yield* artifacts.get(over)
    const index = full !== undefined && isPageIndex(full) ? decodePageIndex(full) : undefined
    return {
      ...encodeDelta(codec, { hash: over, depth: 0 }, rules, [...set], [...gone]),
      over: fullLayers(over, index?.pages),
    }
  })

/** What `encodeLayered` gives: bytes at a depth; `over` when they are a squashed delta. */
export interface EncodedLayer {
  readonly bytes: Uint8Array
  readonly depth: number
  /**
   * Set for a squashed delta (`squashedDelta`): the full layer below it (and its pages), its only
   * other layers.
   */
  readonly over?: ReadonlyArray<ContentHash>
  /** A full map stored as pages: the pages, stored before `bytes` (their index). */
  readonly pages?: ReadonlyArray<StoredPage>
}

/** The layers of a map stored as `encoded` over `base` (what GC keeps while it is a root). */
export const layersOf = (
  encoded: EncodedLayer,
  hash: ContentHash,
  base: { readonly value: { readonly layers: ReadonlyArray<ContentHash> } } | undefined,
): ReadonlyArray<ContentHash> =>
  encoded.depth === 0
    ? fullLayers(hash, encoded.pages)
    : encoded.over !== undefined
      ? [...encoded.over, hash]
      : [...base!.value.layers, hash]

/**
 * Stores each encoded map (its pages first, each once), answering each one's address: the store
 * must answer a page by the address its index names, or the map is refused before its index is.
 */
export const putEncoded = (
  encoded: ReadonlyArray<EncodedLayer>,
): Effect.Effect<ReadonlyArray<ContentHash>, ArtifactStoreError, ArtifactStore> =>
  Effect.gen(function* () {
    if (encoded.length === 0) return []
    const artifacts = yield* ArtifactStore
    const pages = encoded.flatMap((e) => e.pages ?? [])
    if (pages.length > 0) {
      const stored = yield* artifacts.putMany(
        pages.map((p) => p.bytes),
        pages.map((p) => p.hash),
      )
      const wrong = stored.findIndex((hash, i) => hash !== pages[i]!.hash)
      if (wrong >= 0)
        return yield* Effect.dieMessage(
          `the artifact store answered ${stored[wrong]} for a page whose address is ${pages[wrong]!.hash}`,
        )
    }
    return yield* artifacts.putMany(encoded.map((e) => e.bytes))
  })

/**
 * The bytes of a change over `base` (a map at `base.depth`): a delta, or at the chain's depth
 * limit the chain squashed into one (`squashedDelta`); `undefined` when either would hold more
 * than `limit` entries, or the squash cannot read the chain (it saves a rewrite, it is never
 * needed): the caller then stores the map whole.
 */
export const encodeChange = <V>(
  codec: LayerCodec<V>,
  what: string,
  base: { readonly hash: ContentHash; readonly depth: number },
  rules: string | undefined,
  changed: ReadonlyArray<readonly [WorkspacePath, V]>,
  removed: ReadonlyArray<WorkspacePath>,
  limit: number,
): Effect.Effect<EncodedLayer | undefined, never, ArtifactStore> =>
  changed.length + removed.length > limit
    ? Effect.succeed(undefined)
    : base.depth < MAX_DEPTH
      ? Effect.succeed(encodeDelta(codec, base, rules, changed, removed))
      : squashedDelta(codec, what, base.hash, rules, changed, removed, limit).pipe(
          Effect.orElseSucceed(() => undefined),
        )

/**
 * The bytes to store for `map`: a change over `base` where that is small (`encodeChange`), the
 * full map otherwise. `"unchanged"` when `map` equals the base (nothing to store).
 */
export const encodeLayered = <V>(
  codec: LayerCodec<V>,
  what: string,
  map: ReadonlyMap<WorkspacePath, V>,
  base: { readonly hash: ContentHash; readonly value: Layered<V> } | undefined,
  rules?: string,
  /** When known, the only paths where `map` may differ from the base's (a live engine's delta). */
  differsAt?: ReadonlySet<WorkspacePath>,
): Effect.Effect<EncodedLayer | "unchanged", never, ArtifactStore> =>
  Effect.gen(function* () {
    const changes = layeredChanges(codec, map, base, rules, differsAt)
    if (changes === "unchanged") return "unchanged" as const
    const change =
      changes === "whole" || base === undefined
        ? undefined
        : yield* encodeChange(
            codec,
            what,
            { hash: base.hash, depth: base.value.depth },
            rules,
            changes.changed,
            changes.removed,
            map.size >> 2,
          )
    // Encoded only when stored whole: the whole tree's map is most of a capture's encoding work.
    return change ?? (yield* encodeWhole(codec, map, rules))
  })

/** A map stored whole: as pages where the codec pages and the map is large, else one full layer. */
const encodeWhole = <V>(
  codec: LayerCodec<V>,
  map: ReadonlyMap<WorkspacePath, V>,
  rules: string | undefined,
): Effect.Effect<EncodedLayer> =>
  Effect.map(LayerPaging, (paging) => {
    if (codec.paged === undefined || map.size <= paging.from)
      return { bytes: codec.encodeFull(map, rules), depth: 0 }
    const pages = makePages(
      map,
      sortedPaths(map),
      paging,
      (page) => codec.encodeFull(page, undefined),
      codec.paged.isTombstone,
    )
    return { bytes: encodePageIndex(pages, rules), depth: 0, pages }
  })

const byPath = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** A manifest or stat-cache artifact that is not what it should be: treated as unreadable, never as empty. */
export class ManifestUnreadable extends Schema.TaggedError<ManifestUnreadable>()("ManifestUnreadable", {
  hash: Schema.String,
  message: Schema.String,
}) {}
