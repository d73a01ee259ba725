// The stat cache's binary form (snapshot/statCacheBinary.ts): full and delta layers decode to what
// was encoded; any damage (truncation, a stray byte, a bad path, hash, number or flag) makes the
// layer unreadable (`undefined`) rather than an entry that could vouch for a file; what the form
// cannot hold exactly is refused by the encoder, and `encodeStatCache` then stores JSON.
import { describe, expect, it } from "@effect/vitest"
import type { ContentHash, WorkspacePath } from "@rewind/contracts"
import { FastCheck as fc } from "effect"
import { decodeStatCache, encodeStatCache } from "../src/snapshot/pointManifest.js"
import {
  decodeStatCacheLayer,
  encodeStatCacheLayer,
  isBinaryStatCache,
  type StatCacheEntry,
  type StatCacheLayerToEncode,
} from "../src/snapshot/statCacheBinary.js"

const hash = fc.stringMatching(/^[0-9a-f]{64}$/).map((h) => h as ContentHash)
const u64 = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n })
const entry: fc.Arbitrary<StatCacheEntry> = fc
  .record({
    size: fc.oneof(fc.nat(), fc.double({ noNaN: true, noDefaultInfinity: true })),
    mtimeNs: u64,
    ctimeNs: fc.option(u64, { nil: undefined }),
    inode: u64,
    mode: fc.constantFrom(0o644, 0o755, 0o600, 0o100644),
    hash,
  })
  .map(({ ctimeNs, ...rest }) => (ctimeNs === undefined ? rest : { ...rest, ctimeNs }))
const path = fc
  .array(fc.constantFrom("a", "b", "src", ".x", "é", "日本", "a b", "😀"), { minLength: 1, maxLength: 4 })
  .map((s) => s.join("/") as WorkspacePath)

const layer: fc.Arbitrary<StatCacheLayerToEncode> = fc
  .record({
    entries: fc.uniqueArray(fc.tuple(path, entry), { maxLength: 20, selector: ([p]) => p }),
    delta: fc.option(fc.record({ base: hash, depth: fc.integer({ min: 1, max: 16 }) }), { nil: undefined }),
    rules: fc.option(fc.string(), { nil: undefined }),
    removed: fc.uniqueArray(path, { maxLength: 5 }),
  })
  .map(({ entries, delta, rules, removed }) => ({
    base: delta?.base,
    depth: delta?.depth ?? 0,
    rules,
    entries,
    removed: delta === undefined ? [] : removed,
  }))

const sample: StatCacheLayerToEncode = {
  base: "c".repeat(64) as ContentHash,
  depth: 3,
  rules: "rules-id",
  entries: [
    [
      "a/b.ts" as WorkspacePath,
      { size: 3, mtimeNs: 17n, inode: 42n, mode: 0o644, hash: "a".repeat(64) as ContentHash, ctimeNs: 9n },
    ],
    [
      "a/c.ts" as WorkspacePath,
      { size: 5, mtimeNs: 18n, inode: 43n, mode: 0o755, hash: "b".repeat(64) as ContentHash },
    ],
  ],
  removed: ["gone.txt" as WorkspacePath],
}
const sampleBytes = encodeStatCacheLayer(sample)!

/** `sampleBytes` with the first occurrence of `from` (ASCII) replaced by `to`. */
const patched = (from: string, to: string | Uint8Array) => {
  const text = new TextDecoder("latin1").decode(sampleBytes)
  const at = text.indexOf(from)
  if (at < 0) throw new Error(`${from} not in the sample`)
  const out = sampleBytes.slice()
  out.set(typeof to === "string" ? new TextEncoder().encode(to) : to, at)
  return out
}

describe("stat cache binary form", () => {
  it("decodes every layer to what was encoded", () =>
    fc.assert(
      fc.property(layer, (l) => {
        const bytes = encodeStatCacheLayer(l)
        expect(bytes).toBeDefined()
        expect(isBinaryStatCache(bytes!)).toBe(true)
        expect(decodeStatCacheLayer(bytes!, 16)).toEqual({ ...l, entries: new Map(l.entries) })
      }),
      { seed: 23, numRuns: 300 },
    ))

  it("is what encodeStatCache stores, and decodeStatCache reads it back", () =>
    fc.assert(
      fc.property(fc.uniqueArray(fc.tuple(path, entry), { maxLength: 20, selector: ([p]) => p }), (rows) => {
        const cache = new Map(rows)
        const bytes = encodeStatCache(cache, "rules-id")
        expect(isBinaryStatCache(bytes)).toBe(true)
        expect(decodeStatCache(bytes)).toEqual(cache)
      }),
      { seed: 24, numRuns: 200 },
    ))

  it("refuses a layer cut short or with bytes after its end", () => {
    expect(decodeStatCacheLayer(sampleBytes, 16)).toBeDefined()
    for (let n = 0; n < sampleBytes.length; n++)
      expect(decodeStatCacheLayer(sampleBytes.subarray(0, n), 16), `first ${n} bytes`).toBeUndefined()
    const longer = new Uint8Array(sampleBytes.length + 1)
    longer.set(sampleBytes)
    expect(decodeStatCacheLayer(longer, 16)).toBeUndefined()
  })

  it("refuses a bad path, hash, base, depth, number or flag", () => {
    expect(decodeStatCacheLayer(patched("a/b.ts", "/a/b.t"), 16)).toBeUndefined()
    expect(decodeStatCacheLayer(patched("a/b.ts", "a//b.t"), 16)).toBeUndefined()
    expect(decodeStatCacheLayer(patched("a/c.ts", "../c.t"), 16)).toBeUndefined()
    expect(decodeStatCacheLayer(patched("gone.txt", "gone\0txt"), 16)).toBeUndefined()
    expect(decodeStatCacheLayer(patched("a".repeat(64), "A"), 16)).toBeUndefined()
    expect(decodeStatCacheLayer(patched("b".repeat(64), "g"), 16)).toBeUndefined()
    expect(decodeStatCacheLayer(patched("c".repeat(64), "x"), 16)).toBeUndefined()
    // Invalid UTF-8 in the paths.
    expect(decodeStatCacheLayer(patched("a/b.ts", Uint8Array.of(0x61, 0x2f, 0xff)), 16)).toBeUndefined()
    // A delta deeper than allowed.
    expect(decodeStatCacheLayer(sampleBytes, 2)).toBeUndefined()
    const view = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    // The version and kind bytes follow the 4-byte magic.
    for (const [at, value] of [
      [4, 1],
      [4, 3],
      [5, 2],
    ] as const) {
      const bad = sampleBytes.slice()
      bad[at] = value
      expect(decodeStatCacheLayer(bad, 16), `byte ${at} = ${value}`).toBeUndefined()
    }
    // The columns sit at the end: sizes, modes, mtimes, inodes (8 bytes each per entry), the ctime
    // flags (1 byte each), the ctimes, then the removed paths.
    const removedBlock = 4 + 4 + "gone.txt".length
    const ctimes = sampleBytes.length - removedBlock - 2 * 8
    const flags = ctimes - 2
    const sizes = flags - 4 * 2 * 8
    const flag = sampleBytes.slice()
    flag[flags] = 2
    expect(decodeStatCacheLayer(flag, 16)).toBeUndefined()
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY]) {
      const size = sampleBytes.slice()
      view(size).setFloat64(sizes, bad, true)
      expect(decodeStatCacheLayer(size, 16)).toBeUndefined()
      const mode = sampleBytes.slice()
      view(mode).setFloat64(sizes + 2 * 8, bad, true)
      expect(decodeStatCacheLayer(mode, 16)).toBeUndefined()
    }
    // The layout assumed above is the real one: the untouched bytes decode.
    expect(decodeStatCacheLayer(sampleBytes, 16)?.entries.get("a/b.ts" as WorkspacePath)?.ctimeNs).toBe(9n)
    expect(view(sampleBytes).getFloat64(sizes, true)).toBe(3)
  })

  it("leaves to JSON what it cannot hold exactly", () => {
    const [first] = sample.entries
    const tooBig = { ...first![1], inode: 2n ** 64n }
    expect(encodeStatCacheLayer({ ...sample, entries: [["a" as WorkspacePath, tooBig]] })).toBeUndefined()
    const negative = { ...first![1], mtimeNs: -1n }
    expect(encodeStatCacheLayer({ ...sample, entries: [["a" as WorkspacePath, negative]] })).toBeUndefined()
    const cache = new Map([["a/b" as WorkspacePath, tooBig]])
    const bytes = encodeStatCache(cache)
    expect(isBinaryStatCache(bytes)).toBe(false)
    expect(decodeStatCache(bytes)).toEqual(cache)
  })

  it("never takes JSON for its own form", () => {
    expect(isBinaryStatCache(new TextEncoder().encode('{"format":"rewind-stat-cache/1","entries":[]}'))).toBe(
      false,
    )
    expect(decodeStatCacheLayer(new TextEncoder().encode("{}"), 16)).toBeUndefined()
  })
})
