// The compression thread on its own: what it answers is what compressing in the call would store
// (the same choice of encoding, bytes that inflate back to the content), and once it is closed it
// answers `undefined`, which makes the store compress in the call instead.
import { brotliCompressSync, brotliDecompressSync, constants } from "node:zlib"
import { describe, expect, it } from "@effect/vitest"
import { incompressible } from "@rewind/testkit"
import { Effect } from "effect"
import { makeCompressionThread } from "../src/internal/compressionThread.js"

describe("the compression thread", () => {
  it.live("answers each content's stored form, and nothing once closed", () =>
    Effect.gen(function* () {
      const thread = makeCompressionThread({ compressFromBytes: 64, quality: 1, encoding: 2 })
      // Asking starts it; it says so once it is up.
      expect(thread.ready()).toBe(false)
      for (let i = 0; i < 200 && !thread.ready(); i++) yield* Effect.sleep("25 millis")
      expect(thread.ready()).toBe(true)
      const contents = [
        new TextEncoder().encode("abc ".repeat(10_000)),
        incompressible(4_096),
        new TextEncoder().encode("short"),
        new Uint8Array(0),
        new TextEncoder().encode("xyz ".repeat(300)),
      ]
      const encoded = yield* Effect.promise(() => thread.encode(contents))
      expect(encoded?.map((e) => e.encoding)).toEqual([2, 0, 0, 0, 2])
      encoded!.forEach((e, i) => {
        const back = e.encoding === 2 ? brotliDecompressSync(e.bytes) : Buffer.from(e.bytes)
        expect(back.equals(contents[i]!)).toBe(true)
      })
      // The caller's buffers are untouched (the batch was copied into the transfer).
      expect(Buffer.from(contents[0]!).equals(new TextEncoder().encode("abc ".repeat(10_000)))).toBe(true)
      yield* Effect.promise(() => thread.close())
      expect(thread.ready()).toBe(false)
      expect(yield* Effect.promise(() => thread.encode(contents))).toBeUndefined()
    }),
  )

  it.live("compresses contents from largeFromBytes at largeQuality, smaller ones at quality", () =>
    Effect.gen(function* () {
      const thread = makeCompressionThread({
        compressFromBytes: 64,
        quality: 3,
        largeFromBytes: 100_000,
        largeQuality: 1,
        encoding: 2,
      })
      const small = new TextEncoder().encode("some source text, some more source text ".repeat(500))
      const large = new TextEncoder().encode("a larger file of source text, repeated ".repeat(5_000))
      const encoded = yield* Effect.promise(() => thread.encode([small, large]))
      yield* Effect.promise(() => thread.close())
      // Brotli is deterministic: each answer is what that quality gives in the call.
      const at = (content: Uint8Array, quality: number) =>
        brotliCompressSync(content, {
          params: {
            [constants.BROTLI_PARAM_QUALITY]: quality,
            [constants.BROTLI_PARAM_SIZE_HINT]: content.byteLength,
          },
        })
      expect(Buffer.from(encoded![0]!.bytes).equals(at(small, 3))).toBe(true)
      expect(Buffer.from(encoded![1]!.bytes).equals(at(large, 1))).toBe(true)
      expect(at(small, 3).equals(at(small, 1))).toBe(false)
    }),
  )

  it.live("packs later batches into the buffers it handed back, and lets them go when idle", () =>
    Effect.gen(function* () {
      const thread = makeCompressionThread({
        compressFromBytes: 64,
        quality: 1,
        encoding: 2,
        spareKeepMs: 200,
      })
      for (let i = 0; i < 200 && !thread.ready(); i++) yield* Effect.sleep("25 millis")
      const batch = (words: number, seed: string) =>
        Array.from({ length: 8 }, (_, i) => new TextEncoder().encode(`${seed}${i} `.repeat(words)))
      const check = (contents: ReadonlyArray<Uint8Array>) =>
        Effect.gen(function* () {
          const encoded = yield* Effect.promise(() => thread.encode(contents))
          expect(encoded).toHaveLength(contents.length)
          encoded!.forEach((e, i) => {
            const back = e.encoding === 2 ? brotliDecompressSync(e.bytes) : Buffer.from(e.bytes)
            expect(back.equals(contents[i]!)).toBe(true)
          })
        })
      expect(thread.spareBuffers()).toBe(0)
      // A large batch, then a smaller one packed into the large one's buffer (longer than the
      // batch: the thread reads only the lengths it is told), then three at once.
      yield* check(batch(40_000, "large"))
      expect(thread.spareBuffers()).toBe(1)
      yield* check(batch(100, "small"))
      expect(thread.spareBuffers()).toBe(1)
      yield* Effect.all([check(batch(900, "a")), check(batch(30_000, "b")), check(batch(5, "c"))], {
        concurrency: "unbounded",
      })
      expect(thread.spareBuffers()).toBe(3)
      // Idle for longer than the keep time: none are held any more.
      yield* Effect.sleep("400 millis")
      expect(thread.spareBuffers()).toBe(0)
      yield* check(batch(10, "after"))
      yield* Effect.promise(() => thread.close())
      expect(thread.spareBuffers()).toBe(0)
    }),
  )
})
