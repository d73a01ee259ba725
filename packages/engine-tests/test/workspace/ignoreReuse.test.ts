// Reused ignore decisions (issue 23 item 3): a repeat capture takes the previous point's in-scope
// paths as in scope without asking the rules, as long as the ignore files it applies are the ones
// those decisions were made under. A wrong reuse is a wrong point, so the property compares the
// repeat capture (reusing) with a capture of the same tree that decides everything, after random
// changes to the ignore files and the tree; and the scan itself is checked to reuse, and to decide
// afresh when the rules changed.
import { describe, expect, it } from "@effect/vitest"
import type { TurnId, WorkspacePath } from "@rewind/contracts"
import {
  capturePoint,
  loadManifest,
  loadStatCacheLayers,
  type Manifest,
  reusableDecisions,
  scanWorkspace,
} from "@rewind/core"
import { Effect, FastCheck as fc } from "effect"
import { type Env, makeEnv, newSession, ROOT } from "../support/fileRewindEnv.js"

const SEED = Number(process.env.REWIND_FUZZ_SEED ?? 20261202)

const dirs = ["", "a", "a/b", "a/b/c", "build", "a/build", "node_modules", "a/node_modules", "d"]
const names = ["x.log", "keep.log", "y.ts", "z.md", "build", "c"]
const rulePool = [
  "*.log",
  "!keep.log",
  "build/",
  "b/",
  "/a/y.ts",
  "**/c/**",
  "!b/",
  "z.md",
  "!node_modules/",
  ".gitignore",
  "!a/",
  "c",
  "y.ts",
  "!y.ts",
  "d/",
]
const ignoreName = fc.constantFrom(".gitignore", ".rewindignore")
const rules = fc.array(fc.constantFrom(...rulePool), { maxLength: 5 }).map((l) => `${l.join("\n")}\n`)
const join = (dir: string, name: string) => (dir === "" ? name : `${dir}/${name}`)

type Change =
  | { readonly op: "ignore"; readonly dir: string; readonly name: string; readonly text: string }
  | { readonly op: "write"; readonly dir: string; readonly name: string; readonly text: string }
  | { readonly op: "remove"; readonly dir: string; readonly name: string }
  | { readonly op: "mkdir"; readonly dir: string; readonly name: string }
  | { readonly op: "link"; readonly dir: string; readonly name: string }

const dir = fc.constantFrom(...dirs)
const change: fc.Arbitrary<Change> = fc.oneof(
  fc.record({ op: fc.constant("ignore" as const), dir, name: ignoreName, text: rules }),
  fc.record({ op: fc.constant("write" as const), dir, name: fc.constantFrom(...names), text: fc.string() }),
  fc.record({ op: fc.constant("remove" as const), dir, name: fc.constantFrom(...names, ".gitignore") }),
  fc.record({ op: fc.constant("mkdir" as const), dir, name: fc.constantFrom(...names) }),
  fc.record({ op: fc.constant("link" as const), dir, name: fc.constantFrom(...names) }),
)

const apply = (env: Env, c: Change) => {
  const at = `${ROOT}/${join(c.dir, c.name)}`
  const node = env.fs.node(at)
  // A change that needs a parent that is not a directory, or to replace a directory, is skipped.
  const parent = env.fs.node(c.dir === "" ? ROOT : `${ROOT}/${c.dir}`)
  if (parent !== undefined && parent.kind !== "directory") return
  switch (c.op) {
    case "ignore":
    case "write":
      if (node?.kind === "directory") return
      if (node !== undefined) env.fs.remove(at)
      env.fs.writeFile(at, c.text)
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
      env.fs.symlink(at, "y.ts")
  }
}

const inScope = (m: Manifest) =>
  Object.fromEntries([...m].filter(([, e]) => e.kind !== "tombstone").map(([p, e]) => [p, e]))

const captureIn = (sessionId: Effect.Effect.Success<typeof newSession>, turn: string) =>
  Effect.gen(function* () {
    const outcome = yield* capturePoint(sessionId, turn as TurnId)
    if (outcome._tag !== "Captured") throw new Error(outcome.reason)
    return {
      point: outcome.point,
      manifest: yield* loadManifest(outcome.point.manifestHash),
    }
  })

const baseTree = (env: Env, initial: ReadonlyArray<Change>) => {
  for (const d of dirs)
    for (const n of ["y.ts", "x.log", "keep.log", "z.md"]) {
      env.fs.writeFile(`${ROOT}/${join(d, n)}`, `${d}/${n}`)
    }
  for (const c of initial) apply(env, c)
}

describe("reused ignore decisions", () => {
  it.effect("a repeat capture that reuses decisions equals one that decides everything (seeded)", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          fc.array(change, { maxLength: 12 }),
          fc.array(change, { minLength: 1, maxLength: 12 }),
          async (initial, changes) => {
            const env = makeEnv()
            baseTree(env, initial)
            const { repeat, fresh } = await Effect.runPromise(
              Effect.gen(function* () {
                const sessionId = yield* newSession
                yield* captureIn(sessionId, "turn-1")
                for (const c of changes) apply(env, c)
                const repeat = yield* captureIn(sessionId, "turn-2")
                const fresh = yield* captureIn(yield* newSession, "turn-1")
                return { repeat, fresh }
              }).pipe(Effect.provide(env.layer())),
            )
            expect(inScope(repeat.manifest)).toEqual(inScope(fresh.manifest))
            // What the scan's decisions report (a tracked path that became a directory is reported by
            // the repeat capture alone, as it always was).
            const reasons = (p: typeof fresh.point) =>
              p.skipped
                .filter((s) => s.reason === "skipped_directory" || s.reason === "ignore_file_refused")
                .map((s) => `${s.reason} ${s.path}`)
                .sort()
            expect(reasons(repeat.point)).toEqual(reasons(fresh.point))
          },
        ),
        { numRuns: 150, seed: SEED },
      ),
    ),
  )

  it.effect("the scan reuses the previous point's decisions, and decides afresh when the rules changed", () =>
    Effect.gen(function* () {
      const env = makeEnv()
      baseTree(env, [
        { op: "ignore", dir: "", name: ".gitignore", text: "*.log\n!keep.log\n" },
        { op: "ignore", dir: "a/b", name: ".gitignore", text: "nothing.tmp\n" },
      ])
      const first = yield* Effect.flatMap(newSession, (id) => captureIn(id, "turn-1")).pipe(
        Effect.provide(env.layer()),
      )
      const cache = yield* loadStatCacheLayers(first.point.statCacheHash!).pipe(Effect.provide(env.layer()))
      // The stat cache carries the identity of the rules the scan applied.
      expect(cache.rules).toMatch(/^[0-9a-f]{64}$/)
      const budget = { maxFiles: 1_000, deadlineMs: Number.MAX_SAFE_INTEGER }
      const scan = (reuse: ReturnType<typeof reusableDecisions>) =>
        scanWorkspace(budget, undefined, reuse).pipe(Effect.provide(env.layer()))
      const reuse = reusableDecisions(first.manifest, cache.rules)
      const reused = yield* scan(reuse)
      expect(reused.reusedDecisions).toBeGreaterThan(0)
      expect(reused.rules).toBe(cache.rules)
      expect([...reused.entries.keys()].sort()).toEqual([...(yield* scan(undefined)).entries.keys()].sort())
      // A budget that cuts the scan short sees only part of the rules: the provisional answers are
      // checked against the rules in force, not thrown away with a second scan of the tree.
      const cut = yield* scanWorkspace({ ...budget, maxFiles: 5 }, undefined, reuse).pipe(
        Effect.provide(env.layer()),
      )
      expect(cut.rules).not.toBe(cache.rules)
      expect(cut.reusedDecisions).toBeGreaterThan(0)
      expect(cut.entries.size).toBe(5)
      expect(cut.skipped.some((s) => s.reason === "budget")).toBe(true)
      // A rule added: what the previous point held is decided again (y.ts goes, x.log stays out).
      env.fs.writeFile(`${ROOT}/.gitignore`, "*.log\n!keep.log\ny.ts\n")
      const changed = yield* scan(reuse)
      expect(changed.reusedDecisions).toBe(0)
      expect(changed.rules).not.toBe(cache.rules)
      expect(changed.entries.has("y.ts" as WorkspacePath)).toBe(false)
      expect(changed.entries.has("a/b/y.ts" as WorkspacePath)).toBe(false)
      expect(changed.entries.has("keep.log" as WorkspacePath)).toBe(true)
      expect(changed.entries.has("x.log" as WorkspacePath)).toBe(false)
    }),
  )
})
