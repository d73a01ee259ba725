/**
 * An optional cache of decoded manifests and stat caches, keyed by their content hash. A repeat
 * capture starts from the previous point's manifest and stat cache; reading, inflating, verifying
 * and parsing them again costs more than the scan on a large tree. Content-addressed artifacts never
 * change, so a cached decoding is correct for as long as it is kept, and a capture that writes a
 * new manifest hands its in-memory form over instead of having the next capture decode it (and
 * the delta chain below it).
 *
 * Hosts that capture repeatedly provide it (the Promise facade does). Without it every load reads
 * the store, which is what tests of damaged or missing artifacts want. Cached values are shared:
 * callers treat them as read-only (they are typed `ReadonlyMap`).
 */
import type { ContentHash } from "@rewind/contracts"
import { Context, Effect, Layer, Option } from "effect"
import { boundedMap } from "../internal/boundedMap.js"
import type { Layered, ManifestEntry, StatCacheEntry } from "./pointManifest.js"

export interface PointArtifactCacheService {
  readonly getManifest: (hash: ContentHash) => Layered<ManifestEntry> | undefined
  readonly setManifest: (hash: ContentHash, manifest: Layered<ManifestEntry>) => void
  readonly getStatCache: (hash: ContentHash) => Layered<StatCacheEntry> | undefined
  readonly setStatCache: (hash: ContentHash, cache: Layered<StatCacheEntry>) => void
}

export class PointArtifactCache extends Context.Tag("@rewind/core/PointArtifactCache")<
  PointArtifactCache,
  PointArtifactCacheService
>() {}

/**
 * Keeps the `capacity` most recently used manifests and as many stat caches. A decoded manifest of
 * 100,000 paths is a few tens of MB, so the default keeps only what the next capture and a restore
 * to a recent point need.
 */
export const layerPointArtifactCache = (capacity = 4): Layer.Layer<PointArtifactCache> =>
  Layer.sync(PointArtifactCache, () => {
    const manifests = boundedMap<ContentHash, Layered<ManifestEntry>>(capacity)
    const statCaches = boundedMap<ContentHash, Layered<StatCacheEntry>>(capacity)
    return {
      getManifest: manifests.get,
      setManifest: manifests.set,
      getStatCache: statCaches.get,
      setStatCache: statCaches.set,
    }
  })

/** The cache when the host provides one. */
export const pointArtifactCache = Effect.map(Effect.serviceOption(PointArtifactCache), Option.getOrUndefined)
