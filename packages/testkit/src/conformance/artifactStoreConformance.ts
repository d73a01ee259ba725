/**
 * The ArtifactStore conformance suite: what every adapter's blob store must do, run by each
 * adapter's tests with a harness that makes a fresh store and can damage a blob behind its back.
 */
import { describe, expect, it } from "@effect/vitest"
import type { ContentHash } from "@rewind/contracts"
import { type ArtifactStoreService, hashContent } from "@rewind/core"
import { Chunk, Effect, Either, type Scope, Stream } from "effect"

export interface ArtifactStoreFixture {
  readonly store: ArtifactStoreService
  /** Replaces a stored blob's bytes with other bytes of the same length, bypassing the store. */
  readonly corrupt: (hash: ContentHash) => Effect.Effect<void>
}

export interface ArtifactStoreHarness {
  readonly make: Effect.Effect<ArtifactStoreFixture, unknown, Scope.Scope>
}

const bytes = (text: string) => new TextEncoder().encode(text)

/** Bytes that do not compress (xorshift32). */
const incompressible = (length: number) => {
  let x = 2463534242
  return Uint8Array.from({ length }, () => {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    return x & 0xff
  })
}

export const artifactStoreConformance = (name: string, harness: ArtifactStoreHarness): void => {
  describe(`ArtifactStore conformance: ${name}`, () => {
    it.scoped("stores content under its SHA-256 and gives it back", () =>
      Effect.gen(function* () {
        const { store } = yield* harness.make
        const content = bytes("hello, rewind\n")
        const hash = yield* store.put(content)
        expect(hash).toBe(hashContent(content))
        expect(hash).toMatch(/^[0-9a-f]{64}$/)
        expect(yield* store.has(hash)).toBe(true)
        expect(yield* store.get(hash)).toEqual(content)
        expect(yield* store.stats()).toEqual({ count: 1, bytes: content.byteLength })
      }),
    )

    it.scoped("puts are idempotent and empty content is content", () =>
      Effect.gen(function* () {
        const { store } = yield* harness.make
        const a = yield* store.put(bytes("same"))
        const b = yield* store.put(bytes("same"))
        const empty = yield* store.put(new Uint8Array())
        expect(a).toBe(b)
        expect(yield* store.get(empty)).toEqual(new Uint8Array())
        expect((yield* store.stats()).count).toBe(2)
      }),
    )

    it.scoped("keeps its own copy: mutating the caller's buffer changes nothing", () =>
      Effect.gen(function* () {
        const { store } = yield* harness.make
        const content = bytes("original")
        const hash = yield* store.put(content)
        content[0] = 0x4f
        expect(new TextDecoder().decode(yield* store.get(hash))).toBe("original")
      }),
    )

    it.scoped("a missing blob is ArtifactNotFound; a malformed address never reads anything", () =>
      Effect.gen(function* () {
        const { store } = yield* harness.make
        const missing = hashContent("never stored")
        const error = yield* Effect.flip(store.get(missing))
        expect(error._tag).toBe("ArtifactNotFound")
        expect(yield* store.has(missing)).toBe(false)
        const crafted = yield* Effect.either(store.get("../../etc/passwd" as ContentHash))
        expect(Either.isLeft(crafted)).toBe(true)
      }),
    )

    it.scoped("a corrupt blob is ArtifactCorrupt, never data, and a put of the real content repairs it", () =>
      Effect.gen(function* () {
        const { store, corrupt } = yield* harness.make
        const content = bytes("precious content")
        const hash = yield* store.put(content)
        yield* corrupt(hash)
        const error = yield* Effect.flip(store.get(hash))
        expect(error._tag).toBe("ArtifactCorrupt")
        if (error._tag === "ArtifactCorrupt") expect(error.actualHash).not.toBe(hash)
        yield* store.put(content)
        expect(yield* store.get(hash)).toEqual(content)
      }),
    )

    it.scoped("delete removes a blob once", () =>
      Effect.gen(function* () {
        const { store } = yield* harness.make
        const hash = yield* store.put(bytes("to delete"))
        expect(yield* store.delete(hash)).toBe(true)
        expect(yield* store.has(hash)).toBe(false)
        expect((yield* Effect.flip(store.get(hash)))._tag).toBe("ArtifactNotFound")
        expect(yield* store.delete(hash)).toBe(false)
      }),
    )

    it.scoped("lists every blob with its size", () =>
      Effect.gen(function* () {
        const { store } = yield* harness.make
        const contents = ["a", "bb", "ccc", "dddd"].map(bytes)
        const hashes = []
        for (const c of contents) hashes.push(yield* store.put(c))
        const listed = Chunk.toReadonlyArray(yield* Stream.runCollect(store.list()))
        expect(listed.map((i) => i.hash).sort()).toEqual([...hashes].sort())
        for (const info of listed) {
          expect(info.size).toBe(contents[hashes.indexOf(info.hash)]!.byteLength)
          expect(Number.isFinite(info.storedAt)).toBe(true)
        }
        expect(yield* store.stats()).toEqual({ count: 4, bytes: 10 })
      }),
    )

    it.scoped(
      "putMany stores a batch in order (duplicates and empty content included); getMany reads it back",
      () =>
        Effect.gen(function* () {
          const { store } = yield* harness.make
          const contents = [
            bytes("first"),
            new Uint8Array(),
            bytes("first"),
            // Large and compressible, and large and not: adapters may store the two differently.
            bytes("line of text\n".repeat(20_000)),
            incompressible(100_000),
          ]
          const hashes = yield* store.putMany(contents)
          expect(hashes).toEqual(contents.map((c) => hashContent(c)))
          const back = yield* store.getMany(hashes)
          // Buffer comparison: a deep equal of 100 kB arrays element by element is slow.
          expect(back.map((b, i) => Buffer.from(b).equals(contents[i]!))).toEqual(contents.map(() => true))
          expect(yield* store.getMany([])).toEqual([])
          expect(yield* store.putMany([])).toEqual([])
          const stats = yield* store.stats()
          expect(stats.count).toBe(4)
          expect(stats.bytes).toBe(5 + 0 + 13 * 20_000 + 100_000)
        }),
    )

    it.scoped("getMany fails on a missing or corrupt blob rather than returning data", () =>
      Effect.gen(function* () {
        const { store, corrupt } = yield* harness.make
        const [a, b] = yield* store.putMany([bytes("kept"), bytes("damaged")])
        const missing = hashContent("never stored")
        expect((yield* Effect.flip(store.getMany([a!, missing])))._tag).toBe("ArtifactNotFound")
        yield* corrupt(b!)
        expect((yield* Effect.flip(store.getMany([a!, b!])))._tag).toBe("ArtifactCorrupt")
        // A batch put of the real content repairs it, like a single put.
        yield* store.putMany([bytes("damaged")])
        expect(yield* store.getMany([a!, b!])).toEqual([bytes("kept"), bytes("damaged")])
      }),
    )

    it.scoped("concurrent puts of the same content are safe", () =>
      Effect.gen(function* () {
        const { store } = yield* harness.make
        const content = bytes("x".repeat(64 * 1024))
        const hashes = yield* Effect.all(
          Array.from({ length: 16 }, () => store.put(content)),
          { concurrency: "unbounded" },
        )
        expect(new Set(hashes).size).toBe(1)
        expect(yield* store.get(hashes[0]!)).toEqual(content)
        expect((yield* store.stats()).count).toBe(1)
      }),
    )
  })
}
