// What a large batch sends to the compression thread: only the contents not stored yet, each once;
// and which stored copies a put takes on trust (those this connection vouches for).
// A first capture of a tree with copies (or the same tree in a second session) puts many contents
// that are stored already; compressing those was work thrown away on the core the reads share.
import { describe, expect, it } from "@effect/vitest"
import { hashContent } from "@rewind/core"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { makeSqliteArtifactStore } from "../src/internal/artifactStore.js"
import type { CompressionThread } from "../src/internal/compressionThread.js"
import { tempStorePath, withRawDatabase } from "./tempStore.js"

const text = (i: number) => new TextEncoder().encode(`file ${i}: ${"some source text ".repeat(500 + i)}`)

const makeStore = (ready = true) => {
  const db = new Database(":memory:")
  // The table as migration 0005 leaves it.
  db.exec(`create table blobs (id integer primary key, hash blob not null unique check (length(hash) = 32),
    size integer not null check (size >= 0), encoding integer not null check (encoding in (0, 1, 2)),
    stored_at integer not null, content blob not null) strict`)
  const sent: Array<Array<string>> = []
  // Which asks for readiness would have started the thread.
  const starts: Array<boolean> = []
  // Answers "store as is", a valid stored form, and records what it was asked to compress.
  const compression: { -readonly [K in keyof CompressionThread]: CompressionThread[K] } = {
    ready: (start = true) => {
      starts.push(start)
      return ready
    },
    encode: async (contents) => {
      sent.push(contents.map((c) => hashContent(c)))
      return contents.map((bytes) => ({ encoding: 0, bytes }))
    },
    spareBuffers: () => 0,
    close: async () => {},
  }
  const store = makeSqliteArtifactStore({ db, exclusive: (effect) => effect, compression })
  return { db, sent, starts, store, compression }
}

describe("SQLite artifact store: compression ahead of a batch", () => {
  it.effect("compresses only what is not stored yet, a repeated content once", () =>
    Effect.gen(function* () {
      const { db, sent, store } = makeStore()
      const first = Array.from({ length: 40 }, (_, i) => text(i))
      expect(first.reduce((n, f) => n + f.byteLength, 0)).toBeGreaterThan(256 * 1024)
      const stored = yield* store.putMany(first)
      expect(sent).toEqual([stored])
      // Half stored already, the other half new, and a new one twice.
      const second = [
        ...first.slice(0, 20),
        ...Array.from({ length: 40 }, (_, i) => text(100 + i)),
        text(100),
      ]
      const hashes = yield* store.putMany(second)
      expect(hashes).toEqual(second.map((c) => hashContent(c)))
      expect(sent[1]).toEqual(hashes.slice(20, 60))
      // All stored: nothing is sent, every put still answers its hash and refreshes its row.
      const third = yield* store.putMany(first)
      expect(third).toEqual(stored)
      expect(sent).toHaveLength(2)
      expect(db.prepare("select count(*) as n from blobs").get()).toEqual({ n: 80 })
      const back = yield* store.getMany(hashes)
      expect(back.every((b, i) => Buffer.from(b).equals(second[i]!))).toBe(true)
    }),
  )
})

describe("SQLite artifact store: the lookup before a batch", () => {
  it.effect("finds what is stored among many more keys than one lookup statement takes", () =>
    Effect.gen(function* () {
      const { db, sent, store } = makeStore()
      const contents = Array.from({ length: 600 }, (_, i) => text(2_000 + i))
      // Every third stored already, in an earlier batch.
      const early = contents.filter((_, i) => i % 3 === 0)
      yield* store.putMany(early)
      sent.length = 0
      const hashes = yield* store.putMany(contents)
      expect(hashes).toEqual(contents.map((c) => hashContent(c)))
      expect(sent).toEqual([hashes.filter((_, i) => i % 3 !== 0)])
      expect(db.prepare("select count(*) as n from blobs").get()).toEqual({ n: 600 })
      const back = yield* store.getMany(hashes)
      expect(back.every((b, i) => Buffer.from(b).equals(contents[i]!))).toBe(true)
    }),
  )

  it.effect(
    "a row stored between the lookup and the transaction is verified, and a damaged one rewritten",
    () =>
      Effect.gen(function* () {
        const { db, store, compression } = makeStore()
        // Two tiny ones too (stored as they are, never sent to the thread).
        const contents = [
          ...Array.from({ length: 40 }, (_, i) => text(3_000 + i)),
          new TextEncoder().encode("tiny 1"),
          new TextEncoder().encode("tiny 2"),
        ]
        const hashes = contents.map((c) => hashContent(c))
        const row = (i: number, content: Uint8Array) =>
          db
            .prepare("insert into blobs (hash, size, encoding, stored_at, content) values (?, ?, 0, 1, ?)")
            .run(Buffer.from(hashes[i]!, "hex"), contents[i]!.byteLength, content)
        // While the batch is being compressed, another writer stores four of its contents, two
        // intact and two damaged.
        const encode = compression.encode
        compression.encode = async (batch) => {
          row(0, contents[0]!)
          row(1, new Uint8Array(contents[1]!.byteLength).fill(0x5a))
          row(40, new Uint8Array(contents[40]!.byteLength).fill(0x5a))
          row(41, contents[41]!)
          return encode(batch)
        }
        expect(yield* store.putMany(contents)).toEqual(hashes)
        const back = yield* store.getMany(hashes)
        expect(back.every((b, i) => Buffer.from(b).equals(contents[i]!))).toBe(true)
      }),
  )
})

describe("SQLite artifact store: a compression thread still starting", () => {
  it.effect("gets a large batch (it waits for the thread), not a small one or a single put", () =>
    Effect.gen(function* () {
      const { sent, starts, store } = makeStore(false)
      // A single put, however large, never waits for the thread, nor starts it (in a short process
      // the start would be all the thread did: a cold capture's one large put is its seal).
      const large = new TextEncoder().encode("large content ".repeat(100_000))
      yield* store.put(large)
      expect(sent).toEqual([])
      expect(starts).toEqual([false])
      // ~165 KiB: compressed here while the thread starts (asking started it).
      const small = Array.from({ length: 20 }, (_, i) => text(i))
      yield* store.putMany(small)
      expect(sent).toEqual([])
      expect(starts).toEqual([false, true])
      // A batch of over 1 MiB to compress is sent (it waits there until the thread is up).
      const batch = Array.from({ length: 160 }, (_, i) => text(1_000 + i))
      const hashes = yield* store.putMany(batch)
      expect(sent).toEqual([hashes])
      const back = yield* store.getMany(hashes)
      expect(back.every((b, i) => Buffer.from(b).equals(batch[i]!))).toBe(true)
    }),
  )
})

describe("SQLite artifact store: vouched copies", () => {
  it.scoped(
    "a copy this connection stored is not decoded again until another connection commits; reads always are",
    () =>
      Effect.gen(function* () {
        const path = yield* tempStorePath
        const db = new Database(path)
        yield* Effect.addFinalizer(() => Effect.sync(() => db.close()))
        db.pragma("journal_mode = WAL")
        db.exec(`create table blobs (id integer primary key, hash blob not null unique check (length(hash) = 32),
          size integer not null check (size >= 0), encoding integer not null check (encoding in (0, 1, 2)),
          stored_at integer not null, content blob not null) strict`)
        const store = makeSqliteArtifactStore({ db, exclusive: (effect) => effect })
        const content = text(1)
        const [hash] = yield* store.putMany([content])
        const damage = (on: Database.Database) =>
          on
            .prepare("update blobs set content = ?, encoding = 0 where hash = ?")
            .run(Buffer.alloc(content.byteLength, 0x5a), Buffer.from(hash!, "hex"))
        // Damaged through this same connection (nothing in the adapter does that; only a test can):
        // the put takes the copy it wrote on trust, and the read still refuses the damaged bytes.
        damage(db)
        expect(yield* store.put(content)).toBe(hash)
        const refused = yield* Effect.flip(store.get(hash!))
        expect(refused._tag).toBe("ArtifactCorrupt")
        // A read that found it damaged withdraws the trust: the next put verifies and rewrites it.
        yield* store.put(content)
        expect(Buffer.from(yield* store.get(hash!)).equals(content)).toBe(true)
        // Damaged by another connection's commit: the next put verifies, and rewrites it.
        withRawDatabase(path, damage)
        yield* store.put(content)
        expect(Buffer.from(yield* store.get(hash!)).equals(content)).toBe(true)
      }),
  )
})
