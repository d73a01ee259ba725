import { describe, expect, it } from "@effect/vitest"
import { decodeEventSync, encodeEvent } from "@rewind/contracts"
import { FastCheck as fc } from "effect"
import { arbSessionEvent } from "../src/index.js"

describe("event codec over schema-derived events", () => {
  it("every event survives encode → JSON → decode unchanged", () => {
    fc.assert(
      fc.property(arbSessionEvent, (event) => {
        const wire = JSON.parse(JSON.stringify(encodeEvent(event)))
        const back = decodeEventSync(wire)
        expect(JSON.stringify(encodeEvent(back))).toBe(JSON.stringify(encodeEvent(event)))
        expect(back._tag).toBe(event._tag)
      }),
      { numRuns: 300, seed: 7 },
    )
  })

  it("a newer version of any event is refused, never misread", () => {
    fc.assert(
      fc.property(arbSessionEvent, fc.integer({ min: 2, max: 1000 }), (event, bump) => {
        const wire = encodeEvent(event)
        expect(() => decodeEventSync({ ...wire, version: wire.version + bump - 1 })).toThrow(/upgrade Rewind/)
      }),
      { numRuns: 100, seed: 8 },
    )
  })
})
