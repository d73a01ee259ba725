// Manifests stored whole as pages (core snapshot/layerPages.ts), with a paging small enough for a
// tree of a few dozen files: what is stored, that every point loads to its tree through deltas,
// squashes and a collection, that a restore works from a paged point, and that a damaged or forged
// index or page is unreadable rather than a partial tree.
import { describe, expect, it } from "@effect/vitest"
import type { ContentHash } from "@rewind/contracts"
import {
  ArtifactStore,
  applyPointRestore,
  cleanup,
  LayerPaging,
  layerPointArtifactCache,
  loadManifest,
  loadManifestTop,
  loadStatCacheLayers,
  previewPointRestore,
} from "@rewind/core"
import { Effect, FastCheck as fc, Layer, TestClock, TestContext } from "effect"
import { makeEnv, newSession, ROOT } from "../support/fileRewindEnv.js"
import {
  capture,
  editStep,
  firstPoint,
  later,
  SMALL_PAGING,
  sorted,
  squashesOver,
  walkSteps,
} from "../support/manifestTrees.js"

/** Pages of about 4 entries from 8 entries up: a tree of 40 files is ~10 pages. */
const paged = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, LayerPaging, SMALL_PAGING)

const stored = (hash: ContentHash) =>
  Effect.map(
    Effect.flatMap(ArtifactStore, (a) => a.get(hash)),
    (bytes) =>
      JSON.parse(new TextDecoder().decode(bytes)) as {
        format: string
        base?: string
        depth?: number
        pages?: Array<[string, string, ContentHash, number, number]>
      },
  )

const FILES = 40
const seed = (env: ReturnType<typeof makeEnv>) => {
  for (let i = 0; i < FILES; i++) env.fs.writeFile(`${ROOT}/src/d${i % 5}/f${i}.txt`, `file ${i}`)
}

describe("manifests stored as pages", () => {
  it.effect("a first capture stores an index of pages; it loads whole, and a delta sits over it", () => {
    const env = makeEnv()
    seed(env)
    return paged(
      Effect.gen(function* () {
        const { sessionId, first } = yield* firstPoint
        const index = yield* stored(first.manifestHash)
        expect(index.format).toBe("rewind-layer-pages/1")
        const pages = index.pages!
        expect(pages.length).toBeGreaterThan(3)
        // Disjoint, in order, every file in one page.
        expect(pages.reduce((n, p) => n + p[3], 0)).toBe(FILES)
        for (let i = 1; i < pages.length; i++) expect(pages[i - 1]![1] < pages[i]![0]).toBe(true)
        // Each page is a full manifest of its own.
        for (const [firstPath, , hash, entries] of pages) {
          const page = yield* stored(hash)
          expect(page.format).toBe("rewind-manifest/1")
          expect((yield* loadManifest(hash)).size).toBe(entries)
          expect((yield* loadManifest(hash)).has(firstPath as never)).toBe(true)
        }
        const whole = yield* loadManifest(first.manifestHash)
        expect(whole.size).toBe(FILES)
        // The stat cache too: an index of pages, each a full stat cache (binary), loaded whole.
        const statIndex = yield* stored(first.statCacheHash!)
        expect(statIndex.format).toBe("rewind-layer-pages/1")
        const statCache = yield* loadStatCacheLayers(first.statCacheHash!)
        expect(statCache.map.size).toBe(FILES)
        expect(statCache.layers).toEqual([first.statCacheHash, ...statIndex.pages!.map((p) => p[2])])
        expect(yield* loadManifestTop(first.manifestHash)).toEqual({
          base: undefined,
          entries: whole,
          removed: [],
        })
        // The same tree captured again by another session: the same index, at the same address.
        const again = yield* capture(yield* newSession, 1)
        expect(again.manifestHash).toBe(first.manifestHash)

        env.fs.writeFile(`${ROOT}/src/d3/f3.txt`, "changed")
        yield* later
        const second = yield* capture(sessionId, 2)
        const delta = yield* stored(second.manifestHash)
        expect({ format: delta.format, base: delta.base }).toEqual({
          format: "rewind-manifest-delta/1",
          base: first.manifestHash,
        })
        expect((yield* loadManifest(second.manifestHash)).get("src/d3/f3.txt" as never)).not.toEqual(
          whole.get("src/d3/f3.txt" as never),
        )
        // A change of one file stored whole (a new session) shares every page but one or two.
        const fresh = yield* capture(yield* newSession, 2)
        const freshPages = new Set((yield* stored(fresh.manifestHash)).pages!.map((p) => p[2]))
        const shared = pages.filter((p) => freshPages.has(p[2])).length
        expect(shared).toBeGreaterThanOrEqual(pages.length - 2)
      }),
    ).pipe(Effect.provide(env.layer()))
  })

  it.effect("random edits over many captures: every point loads to its tree, after a collection too", () =>
    Effect.gen(function* () {
      const paths = [
        "src/d0/f0.txt",
        "src/d1/f1.txt",
        "src/new/a.txt",
        "src/new/b.txt",
        "top.txt",
        "src/d4/x.txt",
      ]
      const step = editStep(paths, 4)
      let squashes = 0
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(fc.array(step, { minLength: 18, maxLength: 30 }), (steps) => {
            const env = makeEnv()
            seed(env)
            const program = Effect.gen(function* () {
              const { sessionId, first } = yield* firstPoint
              // Each point beside the tree as a fresh session records it (whole, paged), with the
              // tombstones of every path this session has seen and no longer holds.
              const { points, trees } = yield* walkSteps(env, sessionId, first, steps)
              squashes += yield* squashesOver(first, points)
              for (const [i, point] of points.entries())
                expect({ i, tree: sorted(yield* loadManifest(point.manifestHash)) }).toEqual({
                  i,
                  tree: trees[i],
                })
              // A collection that keeps only the newest point keeps every page it is read over.
              yield* TestClock.adjust("1 hour")
              expect((yield* cleanup({ retention: { keepLastPoints: 1 }, graceMs: 0 })).swept).toBe(true)
              const last = points.at(-1)!
              // Read from the store (a fresh cache), as the next process would.
              const reread = loadManifest(last.manifestHash).pipe(Effect.provide(layerPointArtifactCache()))
              expect(sorted(yield* reread)).toEqual(trees.at(-1))
              env.fs.writeFile(`${ROOT}/src/d2/f2.txt`, "before the restore")
              const preview = yield* previewPointRestore(sessionId, last.pointId)
              expect(preview.changes.map((c) => c.path)).toContain("src/d2/f2.txt")
              yield* applyPointRestore(sessionId, preview.pointId, preview.token!)
              expect(env.text("src/d2/f2.txt")).toBe("file 2")
            })
            // With the decoded cache, as a long-running host has it: the collection then takes
            // the layers of each map from what its capture stored, not from a load.
            return Effect.runPromise(
              Effect.provide(
                paged(program),
                Layer.mergeAll(env.layer(), layerPointArtifactCache(), TestContext.TestContext),
              ),
            )
          }),
          { numRuns: 10, seed: 35 },
        ),
      )
      // Runs that never squashed over a paged full layer prove nothing of its pages in a squash.
      expect(squashes).toBeGreaterThan(1)
    }),
  )

  it.effect("a collection keeps every page a kept point is read over, squashed or cached", () => {
    const env = makeEnv()
    seed(env)
    return paged(
      Effect.gen(function* () {
        const { sessionId, first } = yield* firstPoint
        const points = [first]
        // A collection right after the first capture: its map is cached as its capture stored it.
        const firstTree = sorted(yield* loadManifest(points[0]!.manifestHash))
        yield* TestClock.adjust("1 hour")
        yield* cleanup({ graceMs: 0 })
        const fresh = loadManifest(points[0]!.manifestHash).pipe(Effect.provide(layerPointArtifactCache()))
        expect(sorted(yield* fresh)).toEqual(firstTree)
        // Past the depth limit: the last points are squashed deltas over the first's pages.
        for (let n = 2; n <= 20; n++) {
          env.fs.writeFile(`${ROOT}/src/d${n % 3}/f${n % 3}.txt`, `edit ${n}`)
          yield* later
          points.push(yield* capture(sessionId, n))
        }
        expect((yield* stored(points[17]!.manifestHash)).base).toBe(points[0]!.manifestHash)
        const trees = yield* Effect.forEach(points, (p) => Effect.map(loadManifest(p.manifestHash), sorted))
        yield* TestClock.adjust("1 hour")
        expect((yield* cleanup({ retention: { keepLastPoints: 1 }, graceMs: 0 })).swept).toBe(true)
        // Read from the store (a fresh cache), as the next process would.
        const reread = loadManifest(points.at(-1)!.manifestHash).pipe(
          Effect.provide(layerPointArtifactCache()),
        )
        expect(sorted(yield* reread)).toEqual(trees.at(-1))
        // The newest stat cache (a root) is read over its pages too.
        const statCache = loadStatCacheLayers(points.at(-1)!.statCacheHash!).pipe(
          Effect.provide(layerPointArtifactCache()),
        )
        expect((yield* statCache).map.size).toBe(FILES)
      }),
    ).pipe(Effect.provide(Layer.merge(env.layer(), layerPointArtifactCache())))
  })

  it.effect("a missing page, or an index or page that says otherwise, is unreadable", () => {
    const env = makeEnv()
    seed(env)
    return paged(
      Effect.gen(function* () {
        const { first } = yield* firstPoint
        const index = yield* stored(first.manifestHash)
        const pages = index.pages!
        const artifacts = yield* ArtifactStore
        const put = (value: unknown) => artifacts.put(new TextEncoder().encode(JSON.stringify(value)))
        const withPages = (list: unknown) => put({ format: "rewind-layer-pages/1", pages: list })
        const [a, b] = pages
        const forged = [
          // A page's count that is not its page's.
          yield* withPages([[a![0], a![1], a![2], a![3] + 1, 0], ...pages.slice(1)]),
          // Overlapping ranges, pages out of order.
          yield* withPages([b, a, ...pages.slice(2)]),
          // A range that does not hold its page's paths.
          yield* withPages([["zzz", "zzzz", a![2], a![3], 0]]),
          // A page that is not a manifest.
          yield* withPages([["a", "b", yield* put({ format: "nope" }), 1, 0]]),
          // A path that is no workspace path; no pages at all.
          yield* withPages([["../x", a![1], a![2], a![3], 0]]),
          yield* withPages([]),
        ]
        for (const hash of forged) {
          const error = yield* Effect.flip(loadManifest(hash))
          expect(error._tag).toBe("ManifestUnreadable")
        }
        env.artifacts.control.inject({ operation: "get", target: pages[1]![2], persistent: true })
        expect((yield* Effect.flip(loadManifest(first.manifestHash)))._tag).toBe("ArtifactStoreError")
      }),
    ).pipe(Effect.provide(env.layer()))
  })
})
