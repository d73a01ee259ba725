// The compiled event codec (internal/plainCodec.ts) must agree with Effect's schema codec: same
// payload on encode, same value on decode, and a refusal for every input the schema refuses.
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Either, FastCheck as fc, Schema } from "effect"
import {
  decodeEventSync,
  decodeOwnedEventSync,
  EVENT_VERSIONS,
  encodeEvent,
  type SessionEvent,
} from "../src/index.js"
import { compilePlain, INVALID } from "../src/internal/plainCodec.js"

const SEED = Number(process.env.REWIND_PLAIN_CODEC_SEED ?? 20261130)
console.log(`plainCodec properties: seed ${SEED} (REWIND_PLAIN_CODEC_SEED to replay)`)

const types = Object.keys(EVENT_VERSIONS) as Array<keyof typeof EVENT_VERSIONS>

/** Overwrites one leaf string of a JSON value with `bad` (or returns undefined if it has none). */
const damage = (value: unknown, pick: number, bad: unknown): unknown => {
  const leaves: Array<[Record<string, unknown>, string]> = []
  const walk = (v: unknown) => {
    if (typeof v !== "object" || v === null) return
    for (const [k, x] of Object.entries(v)) {
      if (typeof x === "string" && k !== "_tag") leaves.push([v as Record<string, unknown>, k])
      else walk(x)
    }
  }
  const copy = JSON.parse(JSON.stringify(value))
  walk(copy)
  if (leaves.length === 0) return undefined
  const [holder, key] = leaves[pick % leaves.length]!
  holder[key] = bad
  return copy
}

describe("compiled plain codec", () => {
  it("compiles plain schemas and declines anything else", () => {
    const id = Schema.String.pipe(Schema.pattern(/^[a-z]+$/), Schema.brand("Id"))
    const plain = compilePlain(
      Schema.Struct({ id, n: Schema.optional(Schema.Number), tags: Schema.Array(Schema.Literal("a", "b")) })
        .ast,
    )!
    expect(plain({ id: "abc", tags: ["a"], extra: 1 })).toEqual({ id: "abc", tags: ["a"] })
    expect(plain({ id: "ABC", tags: [] })).toBe(INVALID)
    expect(plain({ id: "abc", tags: ["c"] })).toBe(INVALID)
    expect(plain({ tags: [] })).toBe(INVALID)
    const nonEmpty = compilePlain(Schema.NonEmptyArray(Schema.String).ast)!
    expect(nonEmpty(["a", "b"])).toEqual(["a", "b"])
    expect(nonEmpty([])).toBe(INVALID)
    const record = compilePlain(Schema.Record({ key: Schema.String, value: Schema.Number }).ast)!
    expect(record({ a: 1, b: 2 })).toEqual({ a: 1, b: 2 })
    expect(record({ a: "1" })).toBe(INVALID)
    expect(compilePlain(Schema.NumberFromString.ast)).toBeUndefined()
    expect(compilePlain(Schema.Struct({ at: Schema.DateFromNumber }).ast)).toBeUndefined()
  })

  it("every event type encodes to the schema's payload and decodes to the schema's value", () => {
    for (const type of types) {
      const schema = EVENT_VERSIONS[type].schema as unknown as Schema.Schema<SessionEvent, unknown>
      const encodeSlow = Schema.encodeSync(schema)
      const decodeSlow = Schema.decodeUnknownEither(schema)
      fc.assert(
        fc.property(Arbitrary.make(schema), (event) => {
          const fast = encodeEvent(event)
          expect(JSON.parse(JSON.stringify(fast.payload))).toEqual(
            JSON.parse(JSON.stringify(encodeSlow(event))),
          )
          // JSON itself may lose a value (NaN becomes null): then both codecs must refuse it.
          const wire = JSON.parse(JSON.stringify(fast))
          const slow = decodeSlow({ ...wire.payload, _tag: type })
          const back = Either.try(() => decodeEventSync(wire))
          expect(Either.isRight(back)).toBe(Either.isRight(slow))
          if (Either.isRight(back) && Either.isRight(slow)) {
            expect(back.right).toBeInstanceOf(EVENT_VERSIONS[type].schema)
            expect(JSON.stringify(encodeEvent(back.right))).toBe(JSON.stringify(encodeEvent(slow.right)))
          }
          // Decoding a payload it owns gives the same event (same keys in the same order).
          const owned = Either.try(() => decodeOwnedEventSync(JSON.parse(JSON.stringify(fast))))
          expect(Either.isRight(owned)).toBe(Either.isRight(back))
          if (Either.isRight(owned) && Either.isRight(back)) {
            expect(owned.right).toBeInstanceOf(EVENT_VERSIONS[type].schema)
            expect(JSON.stringify(owned.right)).toBe(JSON.stringify(back.right))
            expect(owned.right).toEqual(back.right)
          }
        }),
        { numRuns: 25, seed: SEED },
      )
    }
  })

  it("a payload the schema refuses is refused, whatever leaf is damaged", () => {
    for (const type of types) {
      const schema = EVENT_VERSIONS[type].schema as unknown as Schema.Schema<SessionEvent, unknown>
      const decodeSlow = Schema.decodeUnknownEither(schema)
      fc.assert(
        fc.property(
          Arbitrary.make(schema),
          fc.nat(),
          fc.constantFrom<unknown>("bad/id\u0000", 42, null, {}, ""),
          (event, pick, bad) => {
            const wire = JSON.parse(JSON.stringify(encodeEvent(event)))
            const damaged = damage(wire.payload, pick, bad)
            if (damaged === undefined) return
            const slow = decodeSlow({ ...(damaged as object), _tag: type })
            const fast = Either.try(() => decodeEventSync({ ...wire, payload: damaged }))
            expect(Either.isRight(fast)).toBe(Either.isRight(slow))
            // The owned variant refuses the same payloads with the same message.
            const owned = Either.try(() =>
              decodeOwnedEventSync({ ...wire, payload: JSON.parse(JSON.stringify(damaged)) }),
            )
            expect(Either.isRight(owned)).toBe(Either.isRight(fast))
            if (Either.isLeft(owned) && Either.isLeft(fast)) {
              expect(String(owned.left)).toBe(String(fast.left))
            }
          },
        ),
        { numRuns: 25, seed: SEED },
      )
    }
  })
})
