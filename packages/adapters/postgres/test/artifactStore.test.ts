// The PostgreSQL artifact store: the shared ArtifactStore conformance suite, content shared between
// pools (workers on different machines), and GC safety: `stored_at` refreshed by every put, and a
// sweep that never deletes a blob a concurrent writer has just put again.
import { expect, it } from "@effect/vitest"
import type { ContentHash } from "@rewind/contracts"
import { ArtifactStore, type ArtifactStoreService, cleanup, hashContent } from "@rewind/core"
import { artifactStoreConformance } from "@rewind/testkit"
import { Chunk, Context, Effect, Layer, Stream } from "effect"
import { layerPostgres, PostgresArtifactStore } from "../src/index.js"
import { describePg, rawQuery, rawQueryEffect, storeOptions, tempSchema } from "./pgTest.js"

const bytes = (text: string) => new TextEncoder().encode(text)

/** Stores over one schema, each with its own pool, closed with the test's scope. */
const openArtifacts = (schema: string, n: number) =>
  Effect.forEach(
    Array.from({ length: n }, (_, i) => i),
    () =>
      Effect.map(Layer.build(PostgresArtifactStore.layer(storeOptions(schema, { poolSize: 4 }))), (context) =>
        Context.get(context, PostgresArtifactStore.PostgresArtifacts),
      ),
  )

const storedAt = (schema: string, hash: string) =>
  Effect.promise(async () => {
    const { rows } = await rawQuery<{ stored_at: string }>(
      schema,
      "select stored_at from artifacts where hash = $1",
      [hash],
    )
    return rows.length === 0 ? undefined : Number(rows[0]!.stored_at)
  })

/** Makes blobs look as if they were last put two hours ago. */
const age = (schema: string, hashes: ReadonlyArray<string>) =>
  rawQueryEffect(schema, "update artifacts set stored_at = stored_at - 7200000 where hash = any($1)", [
    hashes,
  ])

const HOUR = 3_600_000

describePg("PostgreSQL artifact store", () => {
  artifactStoreConformance("postgres", {
    make: Effect.gen(function* () {
      const schema = yield* tempSchema
      const [artifacts] = yield* openArtifacts(schema, 1)
      return {
        store: artifacts!.artifactStore,
        // Other bytes of the same length, written behind the store's back.
        corrupt: (hash: ContentHash) =>
          Effect.promise(async () => {
            const { rows } = await rawQuery<{ content: Buffer }>(
              schema,
              "select content from artifacts where hash = $1",
              [hash],
            )
            const damaged = Buffer.from(rows[0]!.content.map((b) => b ^ 0x5a))
            await rawQuery(schema, "update artifacts set content = $2 where hash = $1", [hash, damaged])
          }),
      }
    }),
  })

  it.scoped("workers on other pools read what one worker put, and agree on the addresses", () =>
    Effect.gen(function* () {
      const schema = yield* tempSchema
      const [one, two] = yield* openArtifacts(schema, 2)
      const content = new Uint8Array(300_000).map((_, i) => (i * 7919) % 256)
      const hash = yield* one!.artifactStore.put(content)
      expect(yield* two!.artifactStore.get(hash)).toEqual(content)
      expect(yield* two!.artifactStore.put(content)).toBe(hash)
      expect(yield* one!.artifactStore.stats()).toEqual({ count: 1, bytes: content.byteLength })
    }),
  )

  it.scoped("lists more blobs than one page, each once", () =>
    Effect.gen(function* () {
      const schema = yield* tempSchema
      const [artifacts] = yield* openArtifacts(schema, 1)
      const store = artifacts!.artifactStore
      const hashes = yield* Effect.forEach(
        Array.from({ length: 2_300 }, (_, i) => i),
        (i) => store.put(bytes(`blob ${i}`)),
        { concurrency: 4 },
      )
      const listed = Chunk.toReadonlyArray(yield* Stream.runCollect(store.list()))
      expect(listed.length).toBe(2_300)
      expect(new Set(listed.map((i) => i.hash))).toEqual(new Set(hashes))
    }),
  )

  it.scoped("every put refreshes stored_at, on the server's clock", () =>
    Effect.gen(function* () {
      const schema = yield* tempSchema
      const [artifacts] = yield* openArtifacts(schema, 1)
      const hash = yield* artifacts!.artifactStore.put(bytes("kept warm"))
      yield* age(schema, [hash])
      const aged = (yield* storedAt(schema, hash))!
      const before = yield* artifacts!.serverTime
      yield* artifacts!.artifactStore.put(bytes("kept warm"))
      const refreshed = (yield* storedAt(schema, hash))!
      expect(refreshed).toBeGreaterThanOrEqual(before)
      expect(refreshed).toBeGreaterThan(aged)
      const [info] = Chunk.toReadonlyArray(yield* Stream.runCollect(artifacts!.artifactStore.list()))
      expect(info).toEqual({ hash, size: 9, storedAt: refreshed })
    }),
  )

  it.scoped("a sweep deletes only unreachable blobs older than the grace window", () =>
    Effect.gen(function* () {
      const schema = yield* tempSchema
      const [artifacts] = yield* openArtifacts(schema, 1)
      const store = artifacts!.artifactStore
      const [dead, live, recent, reput] = yield* Effect.forEach(["dead", "live", "recent", "re-put"], (t) =>
        store.put(bytes(t)),
      )
      yield* age(schema, [dead!, live!, reput!])
      yield* store.put(bytes("re-put"))
      const report = yield* artifacts!.sweep({ isLive: (h) => h === live, graceMillis: HOUR })
      expect(report).toMatchObject({
        examined: 2,
        keptLive: 1,
        keptRefreshed: 0,
        deleted: 1,
        bytesDeleted: 4,
      })
      expect(report.cutoff).toBe(report.startedAt - HOUR)
      expect(yield* store.has(dead!)).toBe(false)
      for (const kept of [live!, recent!, reput!]) expect(yield* store.has(kept)).toBe(true)
      const invalid = yield* Effect.flip(artifacts!.sweep({ isLive: () => false, graceMillis: -1 }))
      expect(invalid).toMatchObject({ _tag: "ArtifactStoreError", operation: "sweep" })
    }),
  )

  it.scoped("a sweep racing writers that re-put blobs never deletes one a put has returned", () =>
    Effect.gen(function* () {
      const schema = yield* tempSchema
      const stores = yield* openArtifacts(schema, 4)
      const [sweeper, ...writers] = stores
      const blobs = Array.from({ length: 400 }, (_, i) => bytes(`checkpoint content ${i} ${"x".repeat(i)}`))
      const hashes = yield* Effect.forEach(blobs, (b) => sweeper!.artifactStore.put(b), { concurrency: 8 })
      yield* age(schema, hashes)
      // Every other blob is used again by some writer while the sweep runs; nothing is reachable.
      const reused = blobs.filter((_, i) => i % 2 === 0)
      const putReturned = new Set<ContentHash>()
      const writer = (store: ArtifactStoreService, offset: number) =>
        Effect.forEach(
          reused.filter((_, i) => i % writers.length === offset),
          (blob) => Effect.tap(store.put(blob), (hash) => Effect.sync(() => putReturned.add(hash))),
          { discard: true },
        )
      const [report] = yield* Effect.all(
        [
          sweeper!.sweep({ isLive: () => false, graceMillis: HOUR, batchSize: 7 }),
          ...writers.map((w, offset) => writer(w!.artifactStore, offset)),
        ],
        { concurrency: "unbounded" },
      )
      expect(putReturned.size).toBe(reused.length)
      // Every blob a put returned is there, whole; every other one was swept.
      for (let i = 0; i < blobs.length; i++) {
        const hash = hashContent(blobs[i]!)
        if (i % 2 === 0) expect(yield* sweeper!.artifactStore.get(hash)).toEqual(blobs[i])
        else expect(yield* sweeper!.artifactStore.has(hash)).toBe(false)
      }
      expect(report.deleted).toBeGreaterThanOrEqual(blobs.length / 2)
      expect(report.keptLive).toBe(0)
      console.log(
        `sweep vs writers (postgres): examined ${report.examined}, deleted ${report.deleted} (${report.deleted - blobs.length / 2} re-put after their delete), kept ${report.keptRefreshed} refreshed`,
      )
    }),
  )

  it.scoped("core's cleanup on PostgreSQL judges ages on the server's clock, not the worker's", () =>
    Effect.gen(function* () {
      const schema = yield* tempSchema
      const context = yield* Layer.build(layerPostgres(storeOptions(schema)))
      const artifacts = Context.get(context, ArtifactStore)
      const old = yield* artifacts.put(bytes("an orphan from two hours ago"))
      const fresh = yield* artifacts.put(bytes("an orphan an operation in flight just put"))
      yield* age(schema, [old])
      // This worker's clock reads 1970 (TestClock): only the server's clock makes `old` old.
      const report = yield* Effect.provide(cleanup({ graceMs: HOUR }), context)
      expect(report.deleted).toEqual([old])
      expect(report.keptYoung).toBe(1)
      expect(yield* artifacts.has(old)).toBe(false)
      expect(yield* artifacts.has(fresh)).toBe(true)
    }),
  )

  it.scoped("one pool serves both stores (layerPostgres)", () =>
    Effect.gen(function* () {
      const schema = yield* tempSchema
      const context = yield* Layer.build(layerPostgres(storeOptions(schema)))
      const artifacts = Context.get(context, ArtifactStore)
      const hash = yield* artifacts.put(bytes("shared pool"))
      expect(new TextDecoder().decode(yield* artifacts.get(hash))).toBe("shared pool")
    }),
  )
})
