// The seal tables' hex form (`internal/hex.ts`): packing and unpacking are inverse, and the hex is
// the lowercase hex every other encoder writes (Node's Buffer, as a reference).
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { packHex, unpackHex } from "../src/internal/hex.js"

describe("hex tables", () => {
  it("unpacks to Node's lowercase hex and packs back to the same bytes, at every width", () =>
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.uint8Array({ maxLength: 400 }), (width, raw) => {
        const bytes = raw.subarray(0, raw.length - (raw.length % width))
        const entries = unpackHex(bytes, width)
        expect(entries).toHaveLength(bytes.length / width)
        for (const [i, entry] of entries.entries())
          expect(entry).toBe(Buffer.from(bytes.subarray(i * width, (i + 1) * width)).toString("hex"))
        expect(packHex(entries, width)).toEqual(bytes)
      }),
      { numRuns: 200, seed: 31 },
    ))

  it("packs every byte value", () => {
    const all = Uint8Array.from({ length: 256 }, (_, b) => b)
    expect(unpackHex(all, 256)).toEqual([Buffer.from(all).toString("hex")])
    expect(packHex(unpackHex(all, 256), 256)).toEqual(all)
  })
})
