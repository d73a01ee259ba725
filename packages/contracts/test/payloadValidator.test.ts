// The in-place decoding of owned payloads (decodeParsedEventSync) must agree with schema decoding
// (decodeEventSync) on every input: the same event, or the same error. Checked on arbitrary events
// of every type and on payloads with a random value planted somewhere in them.
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, FastCheck as fc, type Schema } from "effect"
import {
  decodeEventSync,
  decodeParsedEventSync,
  type EncodedEvent,
  EVENT_VERSIONS,
  encodeEvent,
  Message,
  MessageAppended,
  type MessageId,
  Part,
  PartAppended,
  type PartId,
  type SessionEvent,
  type SessionId,
  type TurnId,
} from "../src/index.js"

const seedText = process.env.REWIND_PROPERTY_SEED
const seed = seedText === undefined || seedText === "" ? 20_261_130 : Number.parseInt(seedText, 10)
console.info(`[property] in-place payload decoding: seed=${seed} (replay with REWIND_PROPERTY_SEED=${seed})`)

type Outcome =
  | { readonly ok: true; readonly event: SessionEvent }
  | { readonly ok: false; readonly error: string }

const attempt = (decode: (encoded: EncodedEvent) => SessionEvent, encoded: EncodedEvent): Outcome => {
  try {
    return { ok: true, event: decode(encoded) }
  } catch (error) {
    return { ok: false, error: String(error) }
  }
}

/** Both decoders on separate parses of the same text; they must give the same answer. */
const expectAgreement = (type: string, version: number, payloadText: string) => {
  const reference = attempt(decodeEventSync, { type, version, payload: JSON.parse(payloadText) })
  const inPlace = attempt(decodeParsedEventSync, { type, version, payload: JSON.parse(payloadText) })
  expect(inPlace.ok).toBe(reference.ok)
  if (reference.ok && inPlace.ok) {
    expect(JSON.stringify(inPlace.event)).toBe(JSON.stringify(reference.event))
    expect(Object.getPrototypeOf(inPlace.event)).toBe(Object.getPrototypeOf(reference.event))
    expect(inPlace.event).toEqual(reference.event)
  } else if (!reference.ok && !inPlace.ok) {
    expect(inPlace.error).toBe(reference.error)
  }
}

/** Replaces the value at a random path of a JSON value (or adds a key to an object on the way). */
const plant = (
  value: unknown,
  choices: ReadonlyArray<number>,
  planted: unknown,
  addKey: boolean,
): unknown => {
  if (choices.length === 0 || value === null || typeof value !== "object") return planted
  const [choice, ...rest] = choices as [number, ...Array<number>]
  if (Array.isArray(value)) {
    if (value.length === 0) return [planted]
    const copy = [...value]
    const at = choice % copy.length
    copy[at] = plant(copy[at], rest, planted, addKey)
    return copy
  }
  const record = { ...(value as Record<string, unknown>) }
  const keys = Object.keys(record)
  if (keys.length === 0 || (addKey && rest.length === 0)) return { ...record, extra: planted }
  const key = keys[choice % keys.length]!
  record[key] = plant(record[key], rest, planted, addKey)
  return record
}

const eventTypes = Object.entries(EVENT_VERSIONS)

describe("in-place decoding of owned payloads", () => {
  it("decodes every event type exactly like the schema does", () => {
    for (const [type, entry] of eventTypes) {
      const arbitrary = Arbitrary.make(entry.schema as unknown as Schema.Schema<SessionEvent>)
      fc.assert(
        fc.property(arbitrary, (event) => {
          const encoded = encodeEvent(event)
          expectAgreement(type, encoded.version, JSON.stringify(encoded.payload))
        }),
        { seed, numRuns: 40 },
      )
    }
  })

  it("gives the same event or the same error when a random value is planted in a payload", () => {
    for (const [type, entry] of eventTypes) {
      const arbitrary = Arbitrary.make(entry.schema as unknown as Schema.Schema<SessionEvent>)
      fc.assert(
        fc.property(
          arbitrary,
          fc.array(fc.nat(), { minLength: 1, maxLength: 4 }),
          fc.jsonValue({ maxDepth: 2 }),
          fc.boolean(),
          (event, path, planted, addKey) => {
            const encoded = encodeEvent(event)
            const payload = plant(JSON.parse(JSON.stringify(encoded.payload)), path, planted, addKey)
            expectAgreement(type, encoded.version, JSON.stringify(payload))
          },
        ),
        { seed, numRuns: 60 },
      )
    }
  })

  it("takes the payload's objects over for the events a long stream is made of", () => {
    const message = new Message({
      id: "m1" as MessageId,
      sessionId: "s1" as SessionId,
      turnId: "t1" as TurnId,
      role: "assistant",
      status: "ok",
      visibility: "all",
      createdAt: 3,
    })
    const part = new Part({ id: "p1" as PartId, messageId: "m1" as MessageId, kind: "text", text: "hi" })
    for (const event of [new MessageAppended({ message }), new PartAppended({ part })]) {
      const encoded = JSON.parse(JSON.stringify(encodeEvent(event))) as EncodedEvent & {
        payload: Record<string, unknown>
      }
      const nested = encoded.payload.message ?? encoded.payload.part
      const decoded = decodeParsedEventSync(encoded) as unknown as Record<string, unknown>
      expect(decoded.message ?? decoded.part).toBe(nested)
      expect(decoded).toEqual(event)
      expect(decoded).toBeInstanceOf(event.constructor)
    }
  })
})
