// Reads during a full scan (pointBuild.ts's `readDuringScan`): it reads exactly what the build will
// read, a build takes such a read only for the very scanned entry it was made for, and reading
// stops with the scope of the capture that started it (a capture that ends without `finish`).
import { describe, expect, it } from "@effect/vitest"
import type { ContentHash, FileStat, WorkspacePath } from "@rewind/contracts"
import { Deferred, Effect, Either, Layer, Option } from "effect"
import { ArtifactStore, type ArtifactStoreService } from "../src/ports/ArtifactStore.js"
import { Workspace, type WorkspaceService } from "../src/ports/Workspace.js"
import { DEFAULT_CAPTURE_SETTINGS } from "../src/snapshot/capturePoint.js"
import { buildManifest, readDuringScan } from "../src/snapshot/pointBuild.js"
import type { StatCache } from "../src/snapshot/pointManifest.js"
import type { ScannedPath } from "../src/snapshot/workspaceScan.js"
import { hashContent } from "../src/workspace/contentHash.js"

const p = (s: string) => s as WorkspacePath
const contentOf = (path: string) => new TextEncoder().encode(`content of ${path}\n`)
const fileStat = (path: string, n: number, over: Partial<FileStat> = {}): FileStat => ({
  kind: "file",
  size: contentOf(path).byteLength,
  mode: 0o644,
  mtimeNs: BigInt(n),
  ctimeNs: BigInt(n),
  inode: BigInt(n + 1),
  ...over,
})

/** A workspace that reads `contentOf(path)` for every path (after `gate`, if given), logging each call. */
const makeWorld = (gate?: Deferred.Deferred<void>) => {
  const reads: Array<ReadonlyArray<string>> = []
  const puts: Array<number> = []
  const workspace = {
    readMany: (paths: ReadonlyArray<WorkspacePath>) =>
      Effect.zipRight(
        gate === undefined ? Effect.void : Deferred.await(gate),
        Effect.sync(() => {
          reads.push(paths)
          return paths.map((path) => Either.right(Option.some({ content: contentOf(path), mode: 0o644 })))
        }),
      ),
  } as unknown as WorkspaceService
  const artifacts = {
    putMany: (contents: ReadonlyArray<Uint8Array>) =>
      Effect.sync(() => {
        puts.push(contents.length)
        return contents.map(hashContent)
      }),
  } as unknown as ArtifactStoreService
  const layer = Layer.mergeAll(Layer.succeed(Workspace, workspace), Layer.succeed(ArtifactStore, artifacts))
  return { reads, puts, layer }
}

const build = (
  scanned: Map<WorkspacePath, ScannedPath>,
  readAhead?: Parameters<typeof buildManifest>[0]["readAhead"],
) =>
  buildManifest({
    scanned,
    tracked: [],
    previous: new Map(),
    statCache: new Map(),
    settings: DEFAULT_CAPTURE_SETTINGS,
    startedAtMs: 1_000_000,
    ...(readAhead === undefined ? {} : { readAhead }),
  })

describe("reads during the scan", () => {
  it.effect(
    "reads only what the build will read: regular files within the limit the cache does not vouch for",
    () => {
      const world = makeWorld()
      const vouched = fileStat("vouched.txt", 1)
      const statCache: StatCache = new Map([
        [p("vouched.txt"), { ...vouched, hash: hashContent(contentOf("vouched.txt")) }],
      ])
      const entries: Array<[string, ScannedPath]> = [
        ["vouched.txt", { stat: vouched }],
        ["changed.txt", { stat: fileStat("changed.txt", 2) }],
        ["link", { stat: fileStat("link", 3, { kind: "symlink" }), target: "changed.txt" }],
        ["fifo", { stat: fileStat("fifo", 4, { kind: "other" }) }],
        ["huge.bin", { stat: fileStat("huge.bin", 5, { size: DEFAULT_CAPTURE_SETTINGS.maxFileBytes + 1 }) }],
        ["new.txt", { stat: fileStat("new.txt", 6) }],
      ]
      return Effect.gen(function* () {
        const reads = yield* readDuringScan(statCache, DEFAULT_CAPTURE_SETTINGS)
        for (const [path, entry] of entries) reads.onEntry(p(path), entry)
        const outcomes = yield* reads.finish
        expect([...outcomes.keys()].sort()).toEqual(["changed.txt", "new.txt"])
        expect(world.reads.flat().sort()).toEqual(["changed.txt", "new.txt"])
        expect(outcomes.get(p("new.txt"))?.outcome).toEqual({
          _tag: "Stored",
          hash: hashContent(contentOf("new.txt")),
          mode: 0o644,
          size: contentOf("new.txt").byteLength,
        })
      }).pipe(Effect.scoped, Effect.provide(world.layer))
    },
  )

  it.effect("a build takes a read made during the scan only for the very entry it was read for", () => {
    const world = makeWorld()
    const stat = fileStat("a.txt", 1)
    const scanned = new Map([[p("a.txt"), { stat }]])
    const planted = "f".repeat(64) as ContentHash
    const outcome = { _tag: "Stored", hash: planted, mode: 0o644, size: stat.size } as const
    return Effect.gen(function* () {
      // The same entry: taken as read (the planted hash shows no read was made).
      const same = yield* build(scanned, new Map([[p("a.txt"), { stat, outcome }]]))
      expect(same.manifest.get(p("a.txt"))).toEqual({
        kind: "file",
        hash: planted,
        mode: 0o644,
        size: stat.size,
      })
      expect(world.reads).toEqual([])
      // An equal stat of another entry (a scan run again): read again, the planted outcome ignored.
      const other = yield* build(scanned, new Map([[p("a.txt"), { stat: { ...stat }, outcome }]]))
      expect(other.manifest.get(p("a.txt"))).toEqual({
        kind: "file",
        hash: hashContent(contentOf("a.txt")),
        mode: 0o644,
        size: stat.size,
      })
      expect(world.reads).toEqual([["a.txt"]])
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("stops with its scope: a capture that ends without finishing stores nothing more", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const world = makeWorld(gate)
      // More than a read group, so one group is under way when the scope closes.
      yield* Effect.scoped(
        Effect.gen(function* () {
          const reads = yield* readDuringScan(new Map(), DEFAULT_CAPTURE_SETTINGS)
          for (let i = 0; i < 1_500; i++) reads.onEntry(p(`f${i}.txt`), { stat: fileStat(`f${i}.txt`, i) })
          yield* Effect.yieldNow()
        }),
      ).pipe(Effect.provide(world.layer))
      yield* Deferred.succeed(gate, undefined)
      for (let i = 0; i < 10; i++) yield* Effect.yieldNow()
      expect(world.reads).toEqual([])
      expect(world.puts).toEqual([])
      // The control: finished, the same offers are read and stored.
      const finished = yield* Effect.scoped(
        Effect.gen(function* () {
          const reads = yield* readDuringScan(new Map(), DEFAULT_CAPTURE_SETTINGS)
          for (let i = 0; i < 1_500; i++) reads.onEntry(p(`f${i}.txt`), { stat: fileStat(`f${i}.txt`, i) })
          return yield* reads.finish
        }),
      ).pipe(Effect.provide(world.layer))
      expect(finished.size).toBe(1_500)
      expect(world.puts.reduce((a, b) => a + b, 0)).toBe(1_500)
    }),
  )
})
