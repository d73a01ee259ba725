// A repeat capture that finds the tree unchanged without decoding the base manifest (issue 23, the
// cold CLI): the point must be exactly the one the full path records. The property runs the same
// random trees, edits and capture settings in two environments, one with the shortcut and one
// without it (`CaptureShortcuts`), and compares every point they record, field for field; and
// the shortcut is checked to be taken where it should be, through the decoded manifests a capture
// hands the point artifact cache (the full path decodes the base manifest, the shortcut does not).
import { describe, expect, it } from "@effect/vitest"
import type { ContentHash, PointCaptured, TurnId } from "@rewind/contracts"
import {
  type CaptureOptions,
  CaptureShortcuts,
  capturePoint,
  LayerPaging,
  type Paging,
  PointArtifactCache,
  type PointArtifactCacheService,
} from "@rewind/core"
import { Effect, FastCheck as fc, Layer, TestClock, TestContext } from "effect"
import { type Env, makeEnv, newSession, OUTSIDE, ROOT } from "../support/fileRewindEnv.js"
import { SMALL_PAGING } from "../support/manifestTrees.js"

const SEED = Number(process.env.REWIND_FUZZ_SEED ?? 20261205)

const dirs = ["", "a", "a/b", "build", "c"]
const names = ["x.log", "y.ts", "z.md", "build", "l", "é.ts", 'q"x.md']
const rulePool = ["*.log", "!keep.log", "build/", "/a/y.ts", "z.md", ".gitignore", "c", "!y.ts"]
const join = (dir: string, name: string) => (dir === "" ? name : `${dir}/${name}`)

type Change =
  | {
      readonly op: "write"
      readonly dir: string
      readonly name: string
      readonly text: string
      readonly exec: boolean
    }
  | { readonly op: "ignore"; readonly dir: string; readonly text: string }
  | { readonly op: "remove"; readonly dir: string; readonly name: string }
  | { readonly op: "mkdir"; readonly dir: string; readonly name: string }
  | { readonly op: "link"; readonly dir: string; readonly name: string; readonly outside: boolean }

const dir = fc.constantFrom(...dirs)
const name = fc.constantFrom(...names)
const change: fc.Arbitrary<Change> = fc.oneof(
  fc.record({
    op: fc.constant("write" as const),
    dir,
    name,
    text: fc.string({ maxLength: 12 }),
    exec: fc.boolean(),
  }),
  fc.record({
    op: fc.constant("ignore" as const),
    dir,
    text: fc.array(fc.constantFrom(...rulePool), { maxLength: 4 }).map((l) => `${l.join("\n")}\n`),
  }),
  fc.record({ op: fc.constant("remove" as const), dir, name: fc.constantFrom(...names, ".gitignore") }),
  fc.record({ op: fc.constant("mkdir" as const), dir, name }),
  fc.record({ op: fc.constant("link" as const), dir, name, outside: fc.boolean() }),
)

/** One capture: the edits before it, whether the clock moves past the racy window, its options. */
interface Round {
  readonly changes: ReadonlyArray<Change>
  readonly later: boolean
  readonly maxFileBytes: number | undefined
  readonly declared: ReadonlyArray<string>
}

const round: fc.Arbitrary<Round> = fc.record({
  // Often nothing at all: the case the shortcut is for.
  changes: fc.oneof(
    { arbitrary: fc.constant([]), weight: 3 },
    { arbitrary: fc.array(change, { minLength: 1, maxLength: 4 }), weight: 2 },
  ),
  later: fc.constantFrom(true, true, false),
  maxFileBytes: fc.constantFrom(undefined, undefined, 6),
  declared: fc.oneof(
    fc.constant([]),
    fc.array(fc.constantFrom("y.ts", "a/new.ts", "gone.txt", ".git/x", "l/inside.ts"), { maxLength: 2 }),
  ),
})

const apply = (env: Env, c: Change) => {
  const at = `${ROOT}/${join(c.dir, c.op === "ignore" ? ".gitignore" : c.name)}`
  const node = env.fs.node(at)
  // A change that needs a parent that is not a directory, or to replace a directory, is skipped.
  const parent = env.fs.node(c.dir === "" ? ROOT : `${ROOT}/${c.dir}`)
  if (parent !== undefined && parent.kind !== "directory") return
  switch (c.op) {
    case "write":
    case "ignore":
      if (node?.kind === "directory") return
      if (node !== undefined) env.fs.remove(at)
      env.fs.writeFile(at, c.text, c.op === "write" && c.exec ? 0o755 : 0o644)
      return
    case "remove":
      if (node !== undefined) env.fs.remove(at)
      return
    case "mkdir":
      if (node !== undefined) return
      env.fs.mkdirp(at)
      env.fs.writeFile(`${at}/inner.ts`, "inner")
      return
    case "link":
      if (node !== undefined) return
      env.fs.symlink(at, c.outside ? OUTSIDE : "y.ts")
  }
}

/**
 * A point artifact cache that keeps nothing and records the manifests a capture decoded: what the
 * full path hands it, and the shortcut never does.
 */
const recordingCache = (decoded: Set<string>) =>
  Layer.succeed(PointArtifactCache, {
    getManifest: () => undefined,
    setManifest: (hash: ContentHash) => void decoded.add(hash),
    getStatCache: () => undefined,
    setStatCache: () => {},
  } satisfies PointArtifactCacheService)

interface Captured {
  readonly point: PointCaptured
  /** Whether the capture recorded its base's manifest without decoding it. */
  readonly shortcut: boolean
}

/** `effect` with manifests paged as `paging` says (the store's default when undefined). */
const pagedAs =
  (paging: Paging | undefined) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    paging === undefined ? effect : Effect.provideService(effect, LayerPaging, paging)

/** Every point of the rounds, in an environment with the shortcut on or off. */
const runRounds = (
  initial: ReadonlyArray<Change>,
  rounds: ReadonlyArray<Round>,
  shortcut: boolean,
  paging: Paging | undefined,
) => {
  const env = makeEnv()
  for (const d of dirs)
    for (const n of ["y.ts", "x.log", "z.md"]) env.fs.writeFile(`${ROOT}/${join(d, n)}`, `${d}/${n}`)
  for (const c of initial) apply(env, c)
  return Effect.gen(function* () {
    const sessionId = yield* newSession
    const out: Array<Captured> = []
    for (const [i, r] of rounds.entries()) {
      for (const c of r.changes) apply(env, c)
      if (r.later) yield* TestClock.adjust("10 seconds")
      const options: CaptureOptions = {
        declaredPaths: r.declared,
        ...(r.maxFileBytes === undefined ? {} : { settings: { maxFileBytes: r.maxFileBytes } }),
      }
      const decoded = new Set<string>()
      const outcome = yield* capturePoint(sessionId, `turn-${i}` as TurnId, options).pipe(
        Effect.provide(recordingCache(decoded)),
      )
      if (outcome._tag !== "Captured") return yield* Effect.dieMessage(outcome.reason)
      const base = out.at(-1)?.point
      out.push({
        point: outcome.point,
        shortcut: base !== undefined && !decoded.has(base.manifestHash),
      })
    }
    return out
  }).pipe(
    pagedAs(paging),
    Effect.provide(env.layer()),
    Effect.provideService(CaptureShortcuts, {
      matchUnchangedManifest: shortcut,
      scanSeal: shortcut,
      readDuringScan: shortcut,
    }),
    Effect.provide(TestContext.TestContext),
  )
}

describe.each([
  ["", undefined, 100],
  [", its manifest stored as pages", SMALL_PAGING, 40],
] as const)("a repeat capture of an unchanged tree%s", (_, paging, runs) => {
  it.effect("records the very point the full path records (seeded)", () =>
    Effect.gen(function* () {
      let shortcuts = 0
      let fullPaths = 0
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(
            fc.array(change, { maxLength: 8 }),
            fc.array(round, { minLength: 3, maxLength: 8 }),
            async (initial, rounds) => {
              const fast = await Effect.runPromise(runRounds(initial, rounds, true, paging))
              const full = await Effect.runPromise(runRounds(initial, rounds, false, paging))
              expect(fast.map((c) => ({ ...c.point }))).toEqual(full.map((c) => ({ ...c.point })))
              // Without the shortcut every repeat capture decodes its base manifest.
              expect(full.every((c) => !c.shortcut)).toBe(true)
              for (const c of fast.slice(1)) c.shortcut ? shortcuts++ : fullPaths++
            },
          ),
          { numRuns: runs, seed: SEED },
        ),
      )
      // Both paths were exercised: the comparison is not between two full paths.
      expect(shortcuts).toBeGreaterThan(runs / 7)
      expect(fullPaths).toBeGreaterThan(runs / 7)
    }),
  )

  it.effect("takes the shortcut only where the tree is the base point's", () =>
    Effect.gen(function* () {
      const write = (env: Env, path: string, text: string) => env.fs.writeFile(`${ROOT}/${path}`, text)
      const env = makeEnv()
      for (let i = 0; i < 10; i++) write(env, `src/f${i}.ts`, `file ${i}`)
      env.fs.symlink(`${ROOT}/src/link`, "f0.ts")
      const steps: Array<Captured> = yield* Effect.gen(function* () {
        const sessionId = yield* newSession
        const out: Array<Captured> = []
        const capture = (i: number) =>
          Effect.gen(function* () {
            const decoded = new Set<string>()
            const outcome = yield* capturePoint(sessionId, `turn-${i}` as TurnId).pipe(
              Effect.provide(recordingCache(decoded)),
            )
            if (outcome._tag !== "Captured") return yield* Effect.dieMessage(outcome.reason)
            const base = out.at(-1)?.point
            out.push({
              point: outcome.point,
              shortcut: base !== undefined && !decoded.has(base.manifestHash),
            })
          })
        // At time 0 every file (mtime 0) is racy: hashed, never cached.
        yield* capture(0)
        yield* capture(1) // unchanged, but nothing cached: the full path
        yield* TestClock.adjust("10 seconds")
        yield* capture(2) // the full path, which caches every file now
        yield* capture(3) // unchanged, every file cached, the manifest a full layer: the shortcut
        write(env, "src/f3.ts", "file 3, changed")
        yield* capture(4) // a file changed: the full path
        yield* capture(5) // unchanged, but the manifest is now a delta over another: the full path
        return out
      }).pipe(pagedAs(paging), Effect.provide(env.layer()), Effect.provide(TestContext.TestContext))
      expect(steps.map((s) => s.shortcut)).toEqual([false, false, false, true, false, false])
      const [, , second, third, fourth] = steps.map((s) => s.point)
      expect(third!.manifestHash).toBe(second!.manifestHash)
      expect(third!.statCacheHash).toBe(second!.statCacheHash)
      expect(third!.reusedManifest).toBe(true)
      expect({ files: third!.files, links: third!.links, tombstones: third!.tombstones }).toEqual({
        files: 10,
        links: 1,
        tombstones: 0,
      })
      expect(fourth!.manifestHash).not.toBe(third!.manifestHash)
    }),
  )
})
