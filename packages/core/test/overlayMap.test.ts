// The overlay a watched capture builds its manifest and stat cache as (snapshot/overlayMap.ts):
// after any sequence of updates it answers exactly what a Map with the same updates answers —
// get, has, size and the set of entries — and the maps it was made from are left unchanged.
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { overlaid } from "../src/snapshot/overlayMap.js"

const key = fc.integer({ min: 0, max: 40 }).map((n) => `k${n}`)
const updates = fc.array(fc.tuple(key, fc.option(fc.integer(), { nil: undefined })), { maxLength: 30 })

describe("overlaid", () => {
  it("equals a Map with the same updates, over any chain of overlays", () =>
    fc.assert(
      fc.property(
        fc.array(fc.tuple(key, fc.integer())),
        fc.array(updates, { maxLength: 8 }),
        (start, rounds) => {
          const reference = new Map(start)
          let view: ReadonlyMap<string, number> = new Map(start)
          for (const round of rounds) {
            const before = [...view].sort()
            const next = overlaid(view, new Map(round))
            expect([...view].sort()).toEqual(before)
            for (const [k, v] of new Map(round)) {
              if (v === undefined) reference.delete(k)
              else reference.set(k, v)
            }
            view = next
            expect(view.size).toBe(reference.size)
            expect([...view].sort()).toEqual([...reference].sort())
            expect([...view.keys()].sort()).toEqual([...reference.keys()].sort())
            for (let n = 0; n <= 40; n++) {
              expect(view.get(`k${n}`)).toBe(reference.get(`k${n}`))
              expect(view.has(`k${n}`)).toBe(reference.has(`k${n}`))
            }
          }
        },
      ),
      { numRuns: 200, seed: 23 },
    ))
})
