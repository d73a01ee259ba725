// Manifests and stat caches stored as deltas over the previous point's, and the decoded cache
// that lets a repeat capture start from memory: what is stored, how far a chain goes, what GC
// keeps, and that a forged or broken chain is unreadable rather than an empty tree.
import { describe, expect, it } from "@effect/vitest"
import type { ContentHash, PointCaptured, SessionId } from "@rewind/contracts"
import {
  ArtifactStore,
  applyPointRestore,
  capturePoint,
  cleanup,
  decodeStatCacheLayer,
  encodeManifest,
  layerPointArtifactCache,
  layerSessionStateCache,
  loadManifest,
  loadManifestTop,
  loadStatCacheLayers,
  type Manifest,
  previewPointRestore,
  readPointIndex,
  SessionStore,
} from "@rewind/core"
import { Effect, FastCheck as fc, Layer, TestClock, TestContext } from "effect"
import { type Env, makeEnv, newSession, ROOT } from "../support/fileRewindEnv.js"
import {
  capture,
  captureLater,
  editStep,
  firstPoint,
  later,
  sessionTree,
  sorted,
  squashesOver,
  storedDepth,
  turn,
  walkSteps,
} from "../support/manifestTrees.js"

/** The stored form of an artifact, parsed. */
const stored = (hash: ContentHash) =>
  Effect.gen(function* () {
    const bytes = yield* (yield* ArtifactStore).get(hash)
    return JSON.parse(new TextDecoder().decode(bytes)) as {
      format: string
      base?: string
      depth?: number
      entries: Array<Array<unknown>>
      removed?: Array<string>
    }
  })

/** A stored stat cache layer, decoded (binary since format 2, see statCacheBinary.ts). */
const storedStatCache = (hash: ContentHash) =>
  Effect.gen(function* () {
    const layer = decodeStatCacheLayer(yield* (yield* ArtifactStore).get(hash), 16)
    if (layer === undefined) return yield* Effect.dieMessage(`${hash} is not a binary stat cache`)
    return layer
  })

const FILES = 40

const seed = (env: Env) => {
  for (let i = 0; i < FILES; i++) env.fs.writeFile(`${ROOT}/src/f${i}.txt`, `file ${i}`)
}

describe("manifest deltas", () => {
  it.effect("a capture that changed a few files stores only them over the previous manifest", () => {
    const env = makeEnv()
    seed(env)
    return Effect.gen(function* () {
      const { sessionId, first } = yield* firstPoint
      expect((yield* stored(first.manifestHash)).format).toBe("rewind-manifest/1")

      env.fs.writeFile(`${ROOT}/src/f3.txt`, "changed")
      env.fs.writeFile(`${ROOT}/src/new.txt`, "created")
      env.fs.remove(`${ROOT}/src/f7.txt`)
      const second = yield* captureLater(sessionId, 2)
      const delta = yield* stored(second.manifestHash)
      expect(delta.format).toBe("rewind-manifest-delta/1")
      expect(delta.base).toBe(first.manifestHash)
      expect(delta.depth).toBe(1)
      expect(delta.entries.map((e) => [e[0], e[1]])).toEqual([
        ["src/f3.txt", "f"],
        ["src/f7.txt", "t"],
        ["src/new.txt", "f"],
      ])
      // Its top layer alone (what a walk over a chain already read needs): base and set entries.
      const top = yield* loadManifestTop(second.manifestHash)
      expect(top.base).toBe(first.manifestHash)
      expect([...top.entries.keys()]).toEqual(["src/f3.txt", "src/f7.txt", "src/new.txt"])
      // A full manifest's top layer is the whole manifest, with no base.
      const firstTop = yield* loadManifestTop(first.manifestHash)
      expect(firstTop.base).toBeUndefined()
      expect(firstTop.entries).toEqual(yield* loadManifest(first.manifestHash))
      // Loaded, it is the whole tree, byte-equal to a full manifest of that tree.
      const whole = yield* loadManifest(second.manifestHash)
      expect(whole.size).toBe(FILES + 1)
      expect(whole.get("src/f7.txt" as never)).toEqual({ kind: "tombstone" })
      const full = yield* (yield* ArtifactStore).put(encodeManifest(whole))
      expect(yield* loadManifest(full)).toEqual(whole)
      // The stat cache is a delta as well.
      const cache = yield* storedStatCache(second.statCacheHash!)
      expect(cache.base).toBe(first.statCacheHash)
      expect(cache.depth).toBe(1)
      expect(cache.removed).toEqual(["src/f7.txt"])
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("a chain is cut after 16 deltas, and when a delta would hold over a quarter of the tree", () => {
    const env = makeEnv()
    seed(env)
    return Effect.gen(function* () {
      const { sessionId, first } = yield* firstPoint
      const points: Array<PointCaptured> = [first]
      for (let n = 2; n <= 19; n++) {
        env.fs.writeFile(`${ROOT}/src/f${n}.txt`, `edit ${n}`)
        points.push(yield* captureLater(sessionId, n))
      }
      const depths: Array<number> = []
      for (const point of points) depths.push((yield* stored(point.manifestHash)).depth ?? 0)
      expect(depths).toEqual([0, ...Array.from({ length: 16 }, (_, i) => i + 1), 0, 1])

      // Half the tree changes at once: stored whole.
      for (let i = 0; i < FILES / 2; i++) env.fs.writeFile(`${ROOT}/src/f${i}.txt`, `rewritten ${i}`)
      const big = yield* captureLater(sessionId, 20)
      expect((yield* stored(big.manifestHash)).format).toBe("rewind-manifest/1")
      // Every point still loads, each to its own tree.
      for (const [i, point] of points.entries()) {
        const manifest = yield* loadManifest(point.manifestHash)
        expect(manifest.size).toBe(FILES)
        if (i > 0) expect(manifest.get(`src/f${i + 1}.txt` as never)).not.toEqual(undefined)
      }
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("at the depth limit the chain is squashed into one delta over the full layer", () => {
    const env = makeEnv()
    seed(env)
    return Effect.gen(function* () {
      const { sessionId, first } = yield* firstPoint
      const points: Array<PointCaptured> = [first]
      const seen = new Set<string>()
      const trees: Array<Manifest> = [sessionTree(yield* loadManifest(first.manifestHash), seen)]
      for (let n = 2; n <= 21; n++) {
        // Three files edited in turn, one created and removed again: few paths over the whole run.
        env.fs.writeFile(`${ROOT}/src/f${n % 3}.txt`, `edit ${n}`)
        if (n % 4 === 0) env.fs.writeFile(`${ROOT}/src/churn.txt`, `churn ${n}`)
        if (n % 4 === 2 && n > 2) env.fs.remove(`${ROOT}/src/churn.txt`)
        const point = yield* captureLater(sessionId, n)
        points.push(point)
        // The tree as a fresh session's first capture (a full manifest, no chain) records it.
        const fresh = yield* capture(yield* newSession, n)
        trees.push(sessionTree(yield* loadManifest(fresh.manifestHash), seen))
      }
      const layers = yield* Effect.forEach(points, (p) => stored(p.manifestHash))
      expect(layers.map((l) => l.depth ?? 0)).toEqual([
        0,
        ...Array.from({ length: 16 }, (_, i) => i + 1),
        1,
        2,
        3,
        4,
      ])
      // The 18th point's delta sits on the first point's full manifest and holds every path changed
      // since: the three edited files and the churned one (a tombstone where it is removed).
      const squashed = layers[17]!
      expect(squashed.base).toBe(first.manifestHash)
      expect(squashed.entries.map((e) => e[0])).toEqual([
        "src/churn.txt",
        "src/f0.txt",
        "src/f1.txt",
        "src/f2.txt",
      ])
      // Every point loads to the tree it recorded, and says the same of it as a full manifest.
      for (const [i, point] of points.entries())
        expect({ i, tree: sorted(yield* loadManifest(point.manifestHash)) }).toEqual({ i, tree: trees[i] })
      // The stat cache's chain is squashed the same way.
      const caches = yield* Effect.forEach(points, (p) => storedStatCache(p.statCacheHash!))
      expect(caches.map((c) => c.depth)).toEqual([
        0,
        ...Array.from({ length: 16 }, (_, i) => i + 1),
        1,
        2,
        3,
        4,
      ])
      expect(caches[17]!.base).toBe(first.statCacheHash)
      // After a GC that keeps only the newest point, it still loads and restores.
      env.fs.writeFile(`${ROOT}/src/f9.txt`, "before the restore")
      yield* TestClock.adjust("1 hour")
      expect((yield* cleanup({ retention: { keepLastPoints: 1 }, graceMs: 0 })).swept).toBe(true)
      const artifacts = yield* ArtifactStore
      expect(yield* artifacts.has(first.manifestHash)).toBe(true)
      expect(sorted(yield* loadManifest(points[20]!.manifestHash))).toEqual(trees[20])
      const preview = yield* previewPointRestore(sessionId, points[20]!.pointId)
      expect(preview.changes.map((c) => c.path)).toEqual(["src/f9.txt"])
      yield* applyPointRestore(sessionId, preview.pointId, preview.token!)
      expect(env.text("src/f9.txt")).toBe("file 9")
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("a squash that would hold over a quarter of the tree stores the map whole", () => {
    const env = makeEnv()
    seed(env)
    return Effect.gen(function* () {
      const { sessionId } = yield* firstPoint
      const depths: Array<number> = []
      // A different file each turn: past the limit, 17 paths changed since the full layer (> 40/4).
      for (let n = 2; n <= 19; n++) {
        env.fs.writeFile(`${ROOT}/src/f${n}.txt`, `edit ${n}`)
        depths.push((yield* stored((yield* captureLater(sessionId, n)).manifestHash)).depth ?? 0)
      }
      expect(depths).toEqual([...Array.from({ length: 16 }, (_, i) => i + 1), 0, 1])
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("random edits, creations and removals over many captures: every point loads to its tree", () =>
    Effect.gen(function* () {
      const paths = ["src/f0.txt", "src/f1.txt", "src/new/a.txt", "src/new/b.txt", "top.txt", "src/f2.txt"]
      const step = editStep(paths, 3)
      let squashes = 0
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(fc.array(step, { minLength: 18, maxLength: 40 }), (steps) => {
            const env = makeEnv()
            seed(env)
            const program = Effect.gen(function* () {
              const { sessionId, first } = yield* firstPoint
              const { points, fresh, trees } = yield* walkSteps(env, sessionId, first, steps)
              for (const point of points)
                expect((yield* storedDepth(point.manifestHash)).depth).toBeLessThanOrEqual(16)
              squashes += yield* squashesOver(first, points)
              // The stat caches too (a removed file's entry is removed, not a tombstone: a squash
              // removes paths that came and went since its full layer).
              for (const [i, point] of points.entries())
                expect({
                  i,
                  cache: sorted((yield* loadStatCacheLayers(point.statCacheHash!)).map as never),
                }).toEqual({
                  i,
                  cache: sorted((yield* loadStatCacheLayers(fresh[i]!.statCacheHash!)).map as never),
                })
              for (const [i, point] of points.entries())
                expect({ i, tree: sorted(yield* loadManifest(point.manifestHash)) }).toEqual({
                  i,
                  tree: trees[i],
                })
            })
            return Effect.runPromise(
              Effect.provide(program, Layer.merge(env.layer(), TestContext.TestContext)),
            )
          }),
          { numRuns: 8, seed: 28 },
        ),
      )
      // A run that never reached the limit with a small chain proves nothing of the squash.
      expect(squashes).toBeGreaterThan(3)
    }),
  )

  it.effect("GC keeps every layer below a kept point, and a released point stays readable", () => {
    const env = makeEnv()
    seed(env)
    return Effect.gen(function* () {
      const { sessionId, first } = yield* firstPoint
      for (let n = 2; n <= 5; n++) {
        env.fs.writeFile(`${ROOT}/src/f${n}.txt`, `edit ${n}`)
        yield* captureLater(sessionId, n)
      }
      env.fs.writeFile(`${ROOT}/src/f9.txt`, "before the restore")
      yield* TestClock.adjust("1 hour")
      const report = yield* cleanup({ retention: { keepLastPoints: 1 }, graceMs: 0 })
      expect(report.swept).toBe(true)
      expect(report.releasedPoints).toHaveLength(4)
      // The newest point is a delta four deep: its base (the first point's manifest) survives.
      const artifacts = yield* ArtifactStore
      expect(yield* artifacts.has(first.manifestHash)).toBe(true)
      // A second collection can read every root again.
      expect((yield* cleanup({ graceMs: 0 })).swept).toBe(true)
      // And the newest point restores (capturing turn 5 again finds its point).
      const preview = yield* previewPointRestore(sessionId, (yield* capture(sessionId, 5)).pointId)
      expect(preview.conflicts).toEqual([])
      expect(preview.changes.map((c) => c.path)).toEqual(["src/f9.txt"])
      yield* applyPointRestore(sessionId, preview.pointId, preview.token!)
      expect(env.text("src/f9.txt")).toBe("file 9")
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("a forged or broken chain is unreadable, never an empty or partial tree", () => {
    const env = makeEnv()
    seed(env)
    return Effect.gen(function* () {
      const { sessionId, first } = yield* firstPoint
      const artifacts = yield* ArtifactStore
      const put = (value: unknown) => artifacts.put(new TextEncoder().encode(JSON.stringify(value)))
      const delta = (fields: Record<string, unknown>) =>
        put({ format: "rewind-manifest-delta/1", entries: [], removed: [], ...fields })
      const forged = [
        yield* delta({ base: first.manifestHash, depth: 2 }),
        yield* delta({ base: first.manifestHash, depth: 0 }),
        yield* delta({ base: first.manifestHash, depth: 99 }),
        yield* delta({ base: "0".repeat(64), depth: 1 }),
        yield* delta({ base: first.manifestHash, depth: 1, removed: ["../escape"] }),
        yield* delta({ base: first.manifestHash, depth: 1, entries: [["a.txt", "f", "nothex", 420, 1]] }),
        yield* delta({ base: "not a hash", depth: 1 }),
      ]
      for (const hash of forged) {
        const error = yield* Effect.flip(loadManifest(hash))
        expect(["ManifestUnreadable", "ArtifactNotFound"]).toContain(error._tag)
      }
      // A chain whose base went missing cannot be read either.
      env.fs.writeFile(`${ROOT}/src/f1.txt`, "edit")
      const second = yield* captureLater(sessionId, 2)
      env.artifacts.control.inject({ operation: "get", target: first.manifestHash, persistent: true })
      expect((yield* Effect.flip(loadManifest(second.manifestHash)))._tag).toBe("ArtifactStoreError")
    }).pipe(Effect.provide(env.layer()))
  })
})

describe("decoded manifest cache", () => {
  it.effect("a repeat capture starts from memory and stores the same artifacts as without it", () => {
    const withCache = makeEnv()
    const without = makeEnv()
    seed(withCache)
    seed(without)
    const run = (env: Env) =>
      Effect.gen(function* () {
        const { sessionId, first } = yield* firstPoint
        const hashes: Array<string> = [first.manifestHash]
        env.fs.writeFile(`${ROOT}/src/f1.txt`, "edit")
        const second = yield* captureLater(sessionId, 2)
        hashes.push(second.manifestHash)
        // The store can no longer give the base manifest back: only the cache can.
        env.artifacts.control.inject({ operation: "get", target: second.manifestHash, persistent: true })
        env.fs.writeFile(`${ROOT}/src/f2.txt`, "edit")
        yield* later
        const third = yield* capturePoint(sessionId, turn(3))
        env.artifacts.control.clear()
        return { hashes, third }
      })
    return Effect.gen(function* () {
      const cached = yield* run(withCache).pipe(
        Effect.provide(Layer.merge(withCache.layer(), layerPointArtifactCache())),
      )
      const plain = yield* run(without).pipe(Effect.provide(without.layer()))
      expect(cached.hashes).toEqual(plain.hashes)
      expect(cached.third._tag).toBe("Captured")
      expect(plain.third._tag).toBe("NotCaptured")
    })
  })
})

describe("point index", () => {
  it.effect("is projected with the session, so a repeat capture does not re-read the stream", () => {
    const env = makeEnv()
    seed(env)
    const reads: Array<number> = []
    const counting = Layer.effect(
      SessionStore,
      Effect.map(SessionStore, (inner) => ({
        ...inner,
        read: (sessionId: SessionId, options?: { readonly afterSequence?: number }) => {
          reads.push(options?.afterSequence ?? 0)
          return inner.read(sessionId, options)
        },
      })),
    ).pipe(Layer.provide(env.layer()))
    return Effect.gen(function* () {
      const { sessionId, first } = yield* firstPoint
      reads.length = 0
      env.fs.writeFile(`${ROOT}/src/f1.txt`, "edit")
      const second = yield* captureLater(sessionId, 2)
      // Only the events after the cached state are read: never the stream from its start.
      expect(reads.length).toBeGreaterThan(0)
      expect(reads.every((after) => after > 0)).toBe(true)
      const index = yield* readPointIndex(sessionId)
      expect(index.points.map((p) => p.pointId)).toEqual([first.pointId, second.pointId])
      expect((yield* readPointIndex("nobody" as SessionId)).points).toEqual([])
    }).pipe(Effect.provide(Layer.mergeAll(env.layer(), layerSessionStateCache(), counting)))
  })
})
