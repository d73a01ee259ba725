// The ArtifactStore conformance suite on the SQLite store's blobs table, plus what is particular to
// it: compression that is invisible to callers, blobs in the same file as the events (a reopen
// sees them), and a damaged stored form read as corrupt.
import { describe, expect, it } from "@effect/vitest"
import type { ContentHash } from "@rewind/contracts"
import { ArtifactStore, hashContent } from "@rewind/core"
import { artifactStoreConformance, incompressible } from "@rewind/testkit"
import { Effect, Layer } from "effect"
import { SqliteArtifactStore, SqliteSessionStore } from "../src/index.js"
import { tempStorePath, withRawDatabase } from "./tempStore.js"

const key = (hash: string) => Buffer.from(hash, "hex")

artifactStoreConformance("sqlite", {
  make: Effect.gen(function* () {
    const path = yield* tempStorePath
    const store = yield* SqliteSessionStore.make({ path })
    return {
      store: store.artifactStore,
      corrupt: (hash: ContentHash) =>
        Effect.sync(() =>
          withRawDatabase(path, (db) => {
            // Other bytes of the same length, stored raw: a put must notice they are not the content.
            const row = db.prepare("select size from blobs where hash = ?").get(key(hash)) as { size: number }
            db.prepare("update blobs set content = ?, encoding = 0 where hash = ?").run(
              Buffer.alloc(row.size, 0x5a),
              key(hash),
            )
          }),
        ),
    }
  }),
})

const layerAt = (path: string) =>
  SqliteArtifactStore.layer.pipe(Layer.provideMerge(SqliteSessionStore.layer({ path })))

describe("SQLite artifact store", () => {
  it.scoped("compresses what compresses, stores the rest as is, and a reopen reads both", () =>
    Effect.gen(function* () {
      const path = yield* tempStorePath
      const text = new TextEncoder().encode("the same line again\n".repeat(5_000))
      const random = incompressible(50_000)
      const [t, n] = yield* Effect.provide(
        Effect.flatMap(ArtifactStore, (s) => s.putMany([text, random])),
        layerAt(path),
      )
      const rows = withRawDatabase(path, (db) =>
        db.prepare("select hash, encoding, length(content) as stored from blobs").all(),
      ) as Array<{ hash: Buffer; encoding: number; stored: number }>
      const byHash = new Map(rows.map((r) => [r.hash.toString("hex"), r]))
      expect(byHash.get(t!)!.encoding).toBe(2)
      expect(byHash.get(t!)!.stored).toBeLessThan(text.byteLength / 10)
      expect(byHash.get(n!)!.encoding).toBe(0)
      const back = yield* Effect.provide(
        Effect.flatMap(ArtifactStore, (s) => s.getMany([t!, n!])),
        layerAt(path),
      )
      expect(back.map((b, i) => Buffer.from(b).equals(i === 0 ? text : random))).toEqual([true, true])
    }),
  )

  it.scoped("a compressed row reads back whatever size it records: the size only sizes the buffer", () =>
    Effect.gen(function* () {
      const path = yield* tempStorePath
      // ~300 KB of text: more than one of zlib's default 16 KiB output buffers, and than the 64 KiB
      // floor of the buffer the store asks for.
      const text = new TextEncoder().encode(
        Array.from({ length: 6_000 }, (_, i) => `line ${i} of a compressible file\n`).join(""),
      )
      const [hash] = yield* Effect.provide(
        Effect.flatMap(ArtifactStore, (s) => s.putMany([text])),
        layerAt(path),
      )
      const encoding = withRawDatabase(
        path,
        (db) =>
          db.prepare("select encoding from blobs where hash = ?").get(key(hash!)) as { encoding: number },
      ).encoding
      expect(encoding).toBe(2)
      // A recorded size that is right, far too small, short by one, or absurdly large (a damaged
      // row): the content read back is the content, checked against its hash as always.
      for (const size of [text.byteLength, 0, text.byteLength - 1, 2 ** 40]) {
        withRawDatabase(path, (db) =>
          db.prepare("update blobs set size = ? where hash = ?").run(size, key(hash!)),
        )
        const [back] = yield* Effect.provide(
          Effect.flatMap(ArtifactStore, (s) => s.getMany([hash!])),
          layerAt(path),
        )
        expect(Buffer.from(back!).equals(text), `recorded size ${size}`).toBe(true)
      }
    }),
  )

  it.scopedLive(
    "a batch large enough for the compression thread stores every content as a small one does",
    () =>
      Effect.gen(function* () {
        const path = yield* tempStorePath
        // Over 256 KiB in all: compressible files, incompressible ones, tiny ones stored as is, an
        // empty one and a duplicate, in one putMany. The first such batch starts the thread and is
        // compressed in the call; the second, once the thread is up, goes through it.
        const batch = (tag: string) => {
          const contents: Array<Uint8Array> = []
          for (let i = 0; i < 120; i++)
            contents.push(new TextEncoder().encode(`${tag} file ${i}: ${"same text ".repeat(400)}`))
          for (let i = 0; i < 8; i++) contents.push(incompressible(20_000 + i + (tag === "first" ? 100 : 0)))
          contents.push(new TextEncoder().encode(`tiny ${tag}`), new Uint8Array(0), contents[3]!)
          return contents
        }
        const first = batch("first")
        const contents = batch("second")
        const [firstHashes, hashes] = yield* Effect.provide(
          Effect.gen(function* () {
            const store = yield* ArtifactStore
            const a = yield* store.putMany(first)
            yield* Effect.sleep("500 millis")
            return [a, yield* store.putMany(contents)] as const
          }),
          layerAt(path),
        )
        expect(firstHashes).toEqual(first.map((c) => hashContent(c)))
        expect(hashes).toEqual(contents.map((c) => hashContent(c)))
        const rows = withRawDatabase(path, (db) =>
          db.prepare("select hash, encoding, size, length(content) as stored from blobs").all(),
        ) as Array<{ hash: Buffer; encoding: number; size: number; stored: number }>
        // Each batch: every content once (the duplicate is one row, the empty content is shared).
        expect(rows).toHaveLength(2 * (contents.length - 1) - 1)
        const byHash = new Map(rows.map((r) => [r.hash.toString("hex"), r]))
        for (const [each, eachHashes] of [
          [first, firstHashes],
          [contents, hashes],
        ] as const) {
          each.forEach((c, i) => {
            const row = byHash.get(eachHashes[i]!)!
            expect(row.size).toBe(c.byteLength)
            // Text compresses (brotli); random bytes and anything under 64 bytes stay as they are.
            expect(row.encoding).toBe(i < 120 || i === each.length - 1 ? 2 : 0)
            if (row.encoding === 2) expect(row.stored).toBeLessThan(c.byteLength / 4)
          })
          const back = yield* Effect.provide(
            Effect.flatMap(ArtifactStore, (s) => s.getMany(eachHashes)),
            layerAt(path),
          )
          expect(back.every((b, i) => Buffer.from(b).equals(each[i]!))).toBe(true)
        }
      }),
  )

  it.scoped("a large batch: duplicates, copies already stored, and a damaged copy rewritten", () =>
    Effect.gen(function* () {
      const path = yield* tempStorePath
      const files = Array.from({ length: 64 }, (_, i) =>
        new TextEncoder().encode(`file ${i}: ${"some source text ".repeat(400 + i)}`),
      )
      const store = (contents: ReadonlyArray<Uint8Array>) =>
        Effect.provide(
          Effect.flatMap(ArtifactStore, (s) => s.putMany(contents)),
          layerAt(path),
        )
      // Some are stored already, one of those damaged: the batch rewrites it and keeps the rest.
      const early = yield* store(files.slice(0, 8))
      withRawDatabase(path, (db) =>
        db.prepare("update blobs set content = x'00ff00ff' where hash = ?").run(key(early[3]!)),
      )
      const batch = [...files, files[10]!, files[0]!]
      expect(batch.reduce((n, f) => n + f.byteLength, 0)).toBeGreaterThan(256 * 1024)
      const hashes = yield* store(batch)
      expect(hashes).toEqual(batch.map((f) => hashContent(f)))
      const back = yield* Effect.provide(
        Effect.flatMap(ArtifactStore, (s) => s.getMany(hashes)),
        layerAt(path),
      )
      expect(back.every((b, i) => Buffer.from(b).equals(batch[i]!))).toBe(true)
      const rows = withRawDatabase(path, (db) =>
        db.prepare("select count(*) as n, min(encoding) as lo, max(encoding) as hi from blobs").get(),
      ) as { n: number; lo: number; hi: number }
      expect(rows).toEqual({ n: files.length, lo: 2, hi: 2 })
    }),
  )

  it.scoped("a compressed blob whose stored bytes are damaged is ArtifactCorrupt", () =>
    Effect.gen(function* () {
      const path = yield* tempStorePath
      const text = new TextEncoder().encode("compress me ".repeat(1_000))
      const hash = yield* Effect.provide(
        Effect.flatMap(ArtifactStore, (s) => s.put(text)),
        layerAt(path),
      )
      expect(hash).toBe(hashContent(text))
      withRawDatabase(path, (db) =>
        db.prepare("update blobs set content = x'00ff00ff' where hash = ?").run(key(hash)),
      )
      const error = yield* Effect.provide(
        Effect.flip(Effect.flatMap(ArtifactStore, (s) => s.get(hash))),
        layerAt(path),
      )
      expect(error._tag).toBe("ArtifactCorrupt")
    }),
  )
})
