/**
 * The ArtifactStore conformance suite: what every adapter's blob store must do, run by each
 * adapter's tests with a harness that makes a fresh store and can damage a blob behind its back.
 * The sweep tests run on the live clock: each store judges ages on its own clock (a database
 * server's, say), so they wait, without asserting on any timing, until that clock has moved past
 * the blobs they stored.
 */
import { describe, expect, it } from "@effect/vitest"
import type { ContentHash } from "@rewind/contracts"
import { type ArtifactStoreService, hashContent } from "@rewind/core"
import { Chunk, Duration, Effect, Either, type Scope, Stream } from "effect"

export interface ArtifactStoreFixture {
  readonly store: ArtifactStoreService
  /** Replaces a stored blob's bytes with other bytes of the same length, bypassing the store. */
  readonly corrupt: (hash: ContentHash) => Effect.Effect<void>
}

export interface ArtifactStoreHarness {
  readonly make: Effect.Effect<ArtifactStoreFixture, unknown, Scope.Scope>
}

const bytes = (text: string) => new TextEncoder().encode(text)

/** The store's `now` once its clock has passed every blob's `storedAt` (polled on the live clock). */
const markAfterStoredBlobs = (store: ArtifactStoreService) =>
  Effect.gen(function* () {
    const infos = Chunk.toReadonlyArray(yield* Stream.runCollect(store.list()))
    const newest = Math.max(...infos.map((i) => i.storedAt))
    for (;;) {
      const now = yield* store.now()
      if (now > newest) return now
      yield* Effect.sleep(Duration.millis(2))
    }
  })
/** Bytes that do not compress (xorshift32): for tests of stores that compress. */
export const incompressible = (length: number) => {
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

    it.live("a sweep deletes an old unreferenced blob but never one put again after the mark", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { store } = yield* harness.make
          const kept = yield* store.put(bytes("put again by another worker after the mark"))
          const old = yield* store.put(bytes("nobody puts me again"))
          const markedAt = yield* markAfterStoredBlobs(store)
          // Another worker uses `kept` again: it is about to reference it in a commit.
          expect(yield* store.put(bytes("put again by another worker after the mark"))).toBe(kept)
          const info = Chunk.toReadonlyArray(yield* Stream.runCollect(store.list())).find(
            (i) => i.hash === kept,
          )
          expect(info!.storedAt).toBeGreaterThanOrEqual(markedAt)
          const deleted = yield* store.sweep({
            candidates: [kept, old, hashContent("absent")],
            markedAt,
            graceMs: 0,
          })
          expect(deleted).toEqual([{ hash: old, size: "nobody puts me again".length }])
          expect(new TextDecoder().decode(yield* store.get(kept))).toBe(
            "put again by another worker after the mark",
          )
          expect(yield* store.has(old)).toBe(false)
          // A second sweep of the same candidates finds nothing more to take.
          expect(yield* store.sweep({ candidates: [kept, old], markedAt, graceMs: 0 })).toEqual([])
        }),
      ),
    )

    it.live("a sweep keeps blobs put within the grace window before the mark, and refuses a bad window", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { store } = yield* harness.make
          const young = yield* store.put(bytes("put by an operation still in flight"))
          const markedAt = yield* markAfterStoredBlobs(store)
          expect(yield* store.sweep({ candidates: [young], markedAt, graceMs: 3_600_000 })).toEqual([])
          expect(yield* store.has(young)).toBe(true)
          const bad = yield* Effect.flip(store.sweep({ candidates: [young], markedAt, graceMs: -1 }))
          expect(bad._tag).toBe("ArtifactStoreError")
          expect(yield* store.has(young)).toBe(true)
        }),
      ),
    )

    it.live("a sweep racing puts of its candidates never deletes a blob whose put has returned", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { store } = yield* harness.make
          const contents = Array.from({ length: 40 }, (_, i) => bytes(`blob ${i} `.repeat(i + 1)))
          const hashes = yield* Effect.forEach(contents, (c) => store.put(c))
          const markedAt = yield* markAfterStoredBlobs(store)
          // Odd blobs are put again while the sweep runs over all of them.
          const [deleted] = yield* Effect.all(
            [
              store.sweep({ candidates: hashes, markedAt, graceMs: 0 }),
              Effect.forEach(
                contents.filter((_, i) => i % 2 === 1),
                (c) => store.put(c),
                { concurrency: 4 },
              ),
            ],
            { concurrency: "unbounded" },
          )
          const taken = new Set(deleted.map((d) => d.hash))
          for (const [i, hash] of hashes.entries()) {
            if (i % 2 === 1) expect(yield* store.get(hash)).toEqual(contents[i])
            else {
              expect(taken.has(hash)).toBe(true)
              expect(yield* store.has(hash)).toBe(false)
            }
          }
        }),
      ),
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
