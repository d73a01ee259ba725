// Issue 22 item 4: a rule core applies in many places is written once. Hashing has one import
// point (the module defining `sha256Hex`), the content-address pattern comes from contracts, and
// failures are put into words by contracts' `describeError`; a second copy fails here. The derived
// ids are pinned too: point ids and carry lineages are stored, so their derivation may not drift.
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { CONTENT_HASH_PATTERN, type SessionId, type TurnId } from "@rewind/contracts"
import { carryLineageOf } from "../src/fork/carryLineage.js"
import { isContentHash } from "../src/ports/ArtifactStore.js"
import { pointIdFor } from "../src/snapshot/pointIndex.js"
import { hashContent, sha256Hex } from "../src/workspace/contentHash.js"

const srcDir = join(import.meta.dirname, "..", "src")
const files = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : []
  })
const sources = files(srcDir).map((file) => ({
  name: file.slice(srcDir.length + 1),
  text: readFileSync(file, "utf8"),
}))
const holding = (pattern: RegExp) => sources.filter((s) => pattern.test(s.text)).map((s) => s.name)

describe("one rule, one place (core sources)", () => {
  it("hashing: one module imports node:crypto, and it is the one defining sha256Hex", () => {
    const importers = holding(/from\s+["'](node:)?crypto["']/)
    expect(importers).toHaveLength(1)
    expect(holding(/export const sha256Hex\b/)).toEqual(importers)
    expect(holding(/\bcreateHash\s*\(/)).toEqual(importers)
  })
  it("the content-address pattern is not spelled out again", () => {
    expect(holding(/\[0-9a-f\]\{64\}\$/)).toEqual([])
  })
  it("describeError is not defined again", () => {
    expect(holding(/\b(const|function)\s+describeError\b/)).toEqual([])
  })
  it("the in-memory write journal is built only by makeMemoryJournal", () => {
    expect(holding(/entries\.push\(entry\)/)).toEqual(holding(/export const makeMemoryJournal\b/))
  })
})

describe("hashing", () => {
  it("is SHA-256 in lowercase hex, text hashed as its UTF-8 bytes", () => {
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    for (const text of ["", "é", "sess-\u{1F600}", "lone\uD800"]) {
      expect(sha256Hex(text)).toBe(sha256Hex(new TextEncoder().encode(text)))
      expect(hashContent(text)).toBe(sha256Hex(text))
      expect(isContentHash(hashContent(text))).toBe(true)
    }
  })
  it("keeps the stored ids it derives: point ids and carry lineages", () => {
    expect(pointIdFor("s1" as SessionId, "t1" as TurnId)).toBe("pt-ec6d822afdb17dbab473a4a06a5ae29a19921a38")
    expect(pointIdFor("sess-é" as SessionId, "turn-9" as TurnId, "rescue")).toBe(
      "pt-rdf7bfb2fcd4bc8e9068e58621d606a1cb99a13ae",
    )
    expect(carryLineageOf("sess-\u{1F600}")).toBe(
      "5d699fe6e528b00615cdef827b5ee941027369a109450f5d99ad4e66045af470",
    )
    expect(carryLineageOf("lone\uD800")).toBe(
      "9557acdc40c984769a00a22b26ed1d9ff073d4a1c23b66ef7218bd6f57571ed5",
    )
  })
  it("one pattern says what a content address is, for the schema and the fast check alike", () => {
    for (const candidate of [
      "a".repeat(64),
      "A".repeat(64),
      "a".repeat(63),
      `${"a".repeat(64)}\n`,
      "g".repeat(64),
    ]) {
      expect(isContentHash(candidate)).toBe(CONTENT_HASH_PATTERN.test(candidate))
    }
    expect(isContentHash("0".repeat(64))).toBe(true)
    expect(isContentHash(`${"0".repeat(64)}\n`)).toBe(false)
  })
})

describe("ports in core, implementations in adapters", () => {
  it("the OperationJournal port module declares the port and holds no implementation", async () => {
    const port = await import("../src/ports/OperationJournal.js")
    expect(Object.keys(port)).toEqual(["OperationJournal"])
  })
})
