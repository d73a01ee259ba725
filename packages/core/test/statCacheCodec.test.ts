// The stat cache's JSON codec (snapshot/pointManifest.ts): what it encodes it decodes to the same
// entries (ctime present or absent), and a malformed field makes the whole cache unreadable
// (`undefined`: the capture then re-hashes) rather than a wrong entry that would vouch for a file.
import { describe, expect, it } from "@effect/vitest"
import type { ContentHash, WorkspacePath } from "@rewind/contracts"
import { FastCheck as fc } from "effect"
import { decodeStatCache, encodeStatCache, type StatCacheEntry } from "../src/snapshot/pointManifest.js"

const hash = fc.stringMatching(/^[0-9a-f]{64}$/).map((h) => h as ContentHash)
const ns = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n })
const entry: fc.Arbitrary<StatCacheEntry> = fc
  .record({
    size: fc.nat(),
    mtimeNs: ns,
    ctimeNs: fc.option(ns, { nil: undefined }),
    inode: ns,
    mode: fc.constantFrom(0o644, 0o755, 0o600),
    hash,
  })
  .map(({ ctimeNs, ...rest }) => (ctimeNs === undefined ? rest : { ...rest, ctimeNs }))
const path = fc
  .array(fc.constantFrom("a", "b", "src", ".x", "é"), { minLength: 1, maxLength: 4 })
  .map((s) => s.join("/") as WorkspacePath)

const row = (over: Partial<Record<number, unknown>>) => {
  const base: Array<unknown> = ["a/b.ts", 3, "1700000000000000000", "42", 0o644, "a".repeat(64), "17"]
  for (const [i, v] of Object.entries(over)) base[Number(i)] = v
  return new TextEncoder().encode(JSON.stringify({ format: "rewind-stat-cache/1", entries: [base] }))
}

describe("stat cache codec", () => {
  it("decodes what it encodes", () =>
    fc.assert(
      fc.property(fc.array(fc.tuple(path, entry), { maxLength: 20 }), (rows) => {
        const cache = new Map(rows)
        expect(decodeStatCache(encodeStatCache(cache, "rules-id"))).toEqual(cache)
      }),
      { seed: 23, numRuns: 200 },
    ))

  it("reads a well-formed row", () => {
    expect(decodeStatCache(row({}))?.get("a/b.ts" as WorkspacePath)).toEqual({
      size: 3,
      mtimeNs: 1700000000000000000n,
      inode: 42n,
      mode: 0o644,
      hash: "a".repeat(64),
      ctimeNs: 17n,
    })
  })

  it("refuses a row whose times, inode or path are not what they must be", () => {
    for (const bad of ["", "-1", " 1", "1 ", "0x10", "1e3", "1.5", "١٢"]) {
      expect(decodeStatCache(row({ 2: bad })), `mtime ${JSON.stringify(bad)}`).toBeUndefined()
      expect(decodeStatCache(row({ 3: bad })), `inode ${JSON.stringify(bad)}`).toBeUndefined()
      expect(decodeStatCache(row({ 6: bad })), `ctime ${JSON.stringify(bad)}`).toBeUndefined()
    }
    expect(decodeStatCache(row({ 2: 12 }))).toBeUndefined()
    expect(decodeStatCache(row({ 6: 12 }))).toBeUndefined()
    for (const bad of ["", "/a", "a/../b", "a//b", "a\\b", "a\u0000b"])
      expect(decodeStatCache(row({ 0: bad })), `path ${JSON.stringify(bad)}`).toBeUndefined()
    expect(decodeStatCache(row({ 5: "A".repeat(64) }))).toBeUndefined()
  })
})
