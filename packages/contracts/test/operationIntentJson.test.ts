// The operation intent's JSON codec (compiled checker, schema codec as fallback) must agree with
// Effect's schema codec: the same text on encode, the same value on decode, and an error for every
// damaged row the schema refuses.
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Either, FastCheck as fc, Schema } from "effect"
import { decodeOperationIntentJson, encodeOperationIntentJson, OperationIntent } from "../src/index.js"

const SEED = Number(process.env.REWIND_PLAIN_CODEC_SEED ?? 20261130)

const schemaEncode = Schema.encodeSync(Schema.parseJson(OperationIntent))
const schemaDecode = Schema.decodeUnknownEither(Schema.parseJson(OperationIntent))
// Intents JSON can carry (numbers such as Infinity cannot be written as JSON by either codec).
const intents = Arbitrary.make(OperationIntent).filter((i) => Either.isRight(schemaDecode(schemaEncode(i))))

describe("operation intent JSON", () => {
  it("encodes and decodes exactly as the schema does", () => {
    fc.assert(
      fc.property(intents, (intent) => {
        const text = encodeOperationIntentJson(intent)
        expect(JSON.parse(text)).toEqual(JSON.parse(schemaEncode(intent)))
        expect(decodeOperationIntentJson(text)).toEqual(Either.getOrThrow(schemaDecode(text)))
      }),
      { seed: SEED, numRuns: 300 },
    )
  })

  it("refuses every damaged row the schema refuses, and nothing it accepts", () => {
    const damaged = fc.tuple(intents, fc.nat(), fc.constantFrom<unknown>("", "../x", 7, null, "\u0000"))
    fc.assert(
      fc.property(damaged, ([intent, pick, bad]) => {
        const value = JSON.parse(schemaEncode(intent)) as Record<string, unknown>
        const keys = ["operationId", "sessionId", "kind", "startedAt", "files"]
        value[keys[pick % keys.length]!] = bad
        const text = JSON.stringify(value)
        const expected = schemaDecode(text)
        let actual: unknown
        try {
          actual = decodeOperationIntentJson(text)
        } catch {
          actual = "refused"
        }
        if (Either.isLeft(expected)) expect(actual).toBe("refused")
        else expect(actual).toEqual(expected.right)
      }),
      { seed: SEED, numRuns: 300 },
    )
    expect(() => decodeOperationIntentJson("{not json")).toThrow()
  })
})
