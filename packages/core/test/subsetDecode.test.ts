// The decoders a capture of a few directories uses (`sealedCapture.ts`) instead of decoding a
// whole manifest or stat cache: for any map and any choice of paths, the subset decode is exactly
// the full decode restricted to the chosen paths, whatever the paths and link targets hold
// (quotes, brackets, backslashes, commas, non-ASCII); a manifest not in the canonical form, or
// damaged, is no subset (`undefined`: the caller decodes it whole, which says what is wrong).
import { describe, expect, it } from "@effect/vitest"
import type { ContentHash, WorkspacePath } from "@rewind/contracts"
import { FastCheck as fc } from "effect"
import {
  decodeManifest,
  decodeManifestSubset,
  encodeManifest,
  type ManifestEntry,
} from "../src/snapshot/manifestCodec.js"
import {
  decodeStatCacheLayer,
  encodeStatCacheLayer,
  type StatCacheEntry,
} from "../src/snapshot/statCacheBinary.js"

const hash = fc.stringMatching(/^[0-9a-f]{64}$/).map((h) => h as ContentHash)
const name = fc.constantFrom("a", "b", "src", ".x", "é", "日本", "a b", '"q"', "[x]", "],[", "a,b", "😀", "t")
const path = fc.array(name, { minLength: 1, maxLength: 4 }).map((s) => s.join("/") as WorkspacePath)
const target = fc.oneof(fc.string(), fc.constantFrom('a"]', "\\\\server\\x", "../b", '],["', "é/日"))
const manifestEntry: fc.Arbitrary<ManifestEntry> = fc.oneof(
  fc.record({
    kind: fc.constant("file" as const),
    hash,
    mode: fc.constantFrom(0o644, 0o755),
    size: fc.nat(),
  }),
  fc.record({ kind: fc.constant("link" as const), target }),
  fc.constant({ kind: "tombstone" as const }),
)
const statEntry: fc.Arbitrary<StatCacheEntry> = fc.record({
  size: fc.nat(),
  mtimeNs: fc.bigInt({ min: 0n, max: 2n ** 63n }),
  ctimeNs: fc.bigInt({ min: 0n, max: 2n ** 63n }),
  inode: fc.bigInt({ min: 0n, max: 2n ** 63n }),
  mode: fc.constantFrom(0o644, 0o755),
  hash,
})

/** A choice of paths: by the parent directory, as the capture chooses. */
const choice = fc.array(fc.constantFrom("", "a", "b", "a/b", "src", '"q"', "],["), { maxLength: 3 })
const parentOf = (p: string) => (p.lastIndexOf("/") < 0 ? "" : p.slice(0, p.lastIndexOf("/")))
const restricted = <V>(map: ReadonlyMap<WorkspacePath, V>, wanted: (p: string) => boolean) =>
  new Map([...map].filter(([p]) => wanted(p)))

describe("subset decoders", () => {
  it("a manifest subset is the full decode restricted to the wanted paths", () =>
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(path, manifestEntry), { selector: ([p]) => p, maxLength: 30 }),
        choice,
        (rows, dirs) => {
          const bytes = encodeManifest(new Map(rows))
          const full = decodeManifest(bytes)!
          const wanted = (p: string) => dirs.includes(parentOf(p))
          expect(decodeManifestSubset(bytes, wanted)).toEqual(restricted(full, wanted))
          expect(decodeManifestSubset(bytes, () => true)).toEqual(full)
          // The same rows chosen on their bytes by parent, tombstones by the test.
          const withTombstones = (p: string, tombstone: boolean) =>
            dirs.includes(parentOf(p)) || (tombstone && p.startsWith("a"))
          const expected = new Map([...full].filter(([p, e]) => withTombstones(p, e.kind === "tombstone")))
          expect(decodeManifestSubset(bytes, withTombstones)).toEqual(expected)
          expect(decodeManifestSubset(bytes, Object.assign(withTombstones, { parents: dirs }))).toEqual(
            expected,
          )
        },
      ),
      { numRuns: 300, seed: 27 },
    ))

  it("a manifest not in the canonical form, or damaged, is no subset", () => {
    const bytes = encodeManifest(
      new Map<WorkspacePath, ManifestEntry>([
        ["a/x" as WorkspacePath, { kind: "link", target: 'y"]' }],
        ["b" as WorkspacePath, { kind: "tombstone" }],
      ]),
    )
    const text = new TextDecoder().decode(bytes)
    const all = () => true
    expect(decodeManifestSubset(bytes, all)?.size).toBe(2)
    const spaced = JSON.stringify(JSON.parse(text), null, 1)
    for (const damaged of [
      spaced,
      text.slice(0, -1),
      `${text} `,
      text.replace('"t"]', '"t"'),
      text.replace(',"l",', ',"z",'),
    ])
      expect(decodeManifestSubset(new TextEncoder().encode(damaged), all)).toBeUndefined()
    // A damaged row that is not wanted is not looked at; a wanted one is checked as a decode checks it.
    const badHash = text.replace("]]}", '],["c","f","nothex",420,1]]}')
    expect(decodeManifestSubset(new TextEncoder().encode(badHash), (p) => p !== "c")?.size).toBe(2)
    const byParent = Object.assign(() => false, { parents: ["a"] })
    expect(decodeManifestSubset(new TextEncoder().encode(badHash), byParent)?.size).toBe(1)
    expect(decodeManifestSubset(new TextEncoder().encode(badHash), all)).toBeUndefined()
  })

  it("a stat cache layer decoded for some paths holds exactly those of the full decode", () =>
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(path, statEntry), { selector: ([p]) => p, maxLength: 30 }),
        fc.uniqueArray(path, { maxLength: 5 }),
        choice,
        (entries, removed, dirs) => {
          const sorted = [...entries].sort(([a], [b]) => (a < b ? -1 : 1))
          const bytes = encodeStatCacheLayer({
            base: "c".repeat(64) as ContentHash,
            depth: 2,
            rules: "r",
            entries: sorted,
            removed,
          })!
          const full = decodeStatCacheLayer(bytes, 16)!
          const wanted = (p: string) => dirs.includes(parentOf(p))
          const part = decodeStatCacheLayer(bytes, 16, wanted)!
          expect(part.entries).toEqual(restricted(full.entries, wanted))
          expect(part.removed).toEqual(full.removed.filter(wanted))
          expect([part.base, part.depth, part.rules]).toEqual([full.base, full.depth, full.rules])
          // Chosen on the bytes by parent directory: the same subset.
          const byBytes = decodeStatCacheLayer(bytes, 16, Object.assign(wanted, { parents: dirs }))!
          expect(byBytes.entries).toEqual(part.entries)
          expect(byBytes.removed).toEqual(part.removed)
        },
      ),
      { numRuns: 200, seed: 27 },
    ))

  it("a stat cache layer whose paths do not number its entries is no subset, chosen on bytes or not", () => {
    const entry = {
      size: 1,
      mtimeNs: 1n,
      ctimeNs: 1n,
      inode: 1n,
      mode: 0o644,
      hash: "a".repeat(64) as ContentHash,
    }
    const bytes = encodeStatCacheLayer({
      base: undefined,
      depth: 0,
      rules: undefined,
      entries: [
        ["a/x" as WorkspacePath, entry],
        ["b/y" as WorkspacePath, entry],
      ],
      removed: [],
    })!
    const wanted = Object.assign((p: string) => parentOf(p) === "b", { parents: ["b"] })
    expect(decodeStatCacheLayer(bytes, 16, wanted)?.entries).toEqual(new Map([["b/y", entry]]))
    // "a/x" becomes "a/" and "": three paths for two entries.
    const damaged = Uint8Array.from(bytes)
    damaged[Buffer.from(damaged).indexOf("a/x") + 2] = 0
    expect(decodeStatCacheLayer(damaged, 16)).toBeUndefined()
    expect(decodeStatCacheLayer(damaged, 16, wanted)).toBeUndefined()
    expect(decodeStatCacheLayer(damaged, 16, (p) => parentOf(p) === "b")).toBeUndefined()
  })
})
