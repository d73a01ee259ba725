// What `encodeLayered` (snapshot/layeredMaps.ts) encodes: a capture that changed a few entries
// stores a delta and never encodes the whole map (the whole tree's encoding was most of a live
// engine's capture when it was made and thrown away); the whole map is encoded only where it is
// what gets stored (no base, a change over a quarter of the entries, a squash that cannot read
// its chain at the depth limit).
import { describe, expect, it } from "@effect/vitest"
import type { ContentHash, WorkspacePath } from "@rewind/contracts"
import { ArtifactNotFound } from "@rewind/contracts"
import { Effect, Layer } from "effect"
import { ArtifactStore, type ArtifactStoreService } from "../src/ports/ArtifactStore.js"
import { encodeLayered, type LayerCodec, type Layered, MAX_DEPTH } from "../src/snapshot/layeredMaps.js"

/** A codec of numbers that counts its whole-map encodings. */
const counting = () => {
  const calls = { full: 0 }
  const codec: LayerCodec<number> = {
    full: () => undefined,
    encodeFull: (map) => {
      calls.full++
      return new TextEncoder().encode(JSON.stringify([...map]))
    },
    deltaFormat: "test-delta/1",
    encodeEntry: (path, n) => [path, n],
    decodeEntry: (raw) => [raw[0] as WorkspacePath, raw[1] as number],
    same: (a, b) => a === b,
  }
  return { codec, calls }
}

const mapOf = (size: number, changedFrom = size) =>
  new Map(Array.from({ length: size }, (_, i) => [`f${i}` as WorkspacePath, i >= changedFrom ? i + 1000 : i]))

const BASE = "a".repeat(64) as ContentHash

const baseAt = (depth: number): { readonly hash: ContentHash; readonly value: Layered<number> } => ({
  hash: BASE,
  value: { map: mapOf(100), depth, layers: [BASE] },
})

/** A store with nothing in it: a squash that must read the chain cannot. */
const empty = Layer.succeed(ArtifactStore, {
  get: (hash: ContentHash) => Effect.fail(new ArtifactNotFound({ hash })),
} as unknown as ArtifactStoreService)

const encode = (map: ReadonlyMap<WorkspacePath, number>, depth: number | undefined) => {
  const { codec, calls } = counting()
  const encoded = Effect.runSync(
    encodeLayered(codec, "test map", map, depth === undefined ? undefined : baseAt(depth)).pipe(
      Effect.provide(empty),
    ),
  )
  return { encoded, full: calls.full }
}

describe("encodeLayered", () => {
  it("stores a few changed entries as a delta without encoding the whole map", () => {
    const { encoded, full } = encode(mapOf(100, 97), 3)
    expect(encoded !== "unchanged" && encoded.depth).toBe(4)
    expect(full).toBe(0)
  })

  it("encodes nothing for an unchanged map", () => {
    expect(encode(mapOf(100), 3)).toEqual({ encoded: "unchanged", full: 0 })
  })

  it("encodes the whole map once where the whole map is stored", () => {
    // No base; a change over a quarter of the entries; the depth limit with a chain it cannot read.
    for (const [map, depth] of [
      [mapOf(100, 97), undefined],
      [mapOf(100, 50), 3],
      [mapOf(100, 97), MAX_DEPTH],
    ] as const) {
      const { encoded, full } = encode(map, depth)
      expect({ depth, stored: encoded !== "unchanged" && encoded.depth, full }).toEqual({
        depth,
        stored: 0,
        full: 1,
      })
    }
  })
})
