/**
 * Invariants 11 and 12 as a model-based property, run by every workspace adapter over the snapshot
 * harness. Random workspaces hold what real trees hold — `.git` directories and a nested
 * repository, Rewind's store directory, ignore files (added before or after the point), links to
 * sibling directories and out of the root, directories swapped for links — and a random sequence
 * of changes runs between a point's capture and its restore.
 *
 * - 11: no restore writes through a symlink, outside the root, or into the store, `.git` or an
 *   ignored path. Checked against a model written here, not the engine's own policy: every path
 *   under `.git`, `.rewind`, a nested repository or excluded by the model's ignore rules holds
 *   after the restore exactly what it held before; and nothing changes that the preview did not
 *   plan (a write through a link would change the link's target, which no plan names).
 * - 12: a preview that says it can apply is applied by its token when nothing changed since, and
 *   the apply does exactly the plan: every planned path holds what the point recorded.
 */
import { describe, expect, it } from "@effect/vitest"
import type { SessionId, TurnId } from "@rewind/contracts"
import { applyPointRestore, capturePoint, createSession, previewPointRestore } from "@rewind/core"
import { Effect, FastCheck as fc } from "effect"
import { withOpenHarness } from "./harnessScope.js"
import { runScenarios } from "./scenarioOutcomes.js"
import type { SnapshotHarness } from "./snapshotProperties.js"

type Files = ReturnType<SnapshotHarness["open"]>

const PLAIN = [
  "a.txt",
  "src/b.ts",
  "src/c.log",
  "docs/d.md",
  "docs/e.log",
  "build/out.js",
  "keep.txt",
] as const
const PROTECTED = [
  ".git/HEAD",
  ".git/config",
  "vendor/.git/HEAD",
  ".rewind/rewind.db",
  ".rewind/rewind.db-wal",
] as const
const RULES = "*.log\nbuild/\n"

type Step =
  | { readonly op: "write"; readonly path: string; readonly content: string }
  | { readonly op: "delete"; readonly path: string }
  | { readonly op: "rules"; readonly present: boolean }
  | { readonly op: "linkDir"; readonly path: "lnd" | "docs"; readonly target: "src" | "../outside" | "/tmp" }
  | { readonly op: "unlinkDir"; readonly path: "lnd" | "docs" }

const content = fc.string({ maxLength: 12 })
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant("write" as const),
      path: fc.constantFrom(...PLAIN, ...PROTECTED, "vendor/lib.c", "lnd/z.txt"),
      content,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant("delete" as const),
      path: fc.constantFrom(...PLAIN, ...PROTECTED),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("rules" as const), present: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("linkDir" as const),
      path: fc.constantFrom("lnd" as const, "docs" as const),
      target: fc.constantFrom("src" as const, "../outside" as const, "/tmp" as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("unlinkDir" as const),
      path: fc.constantFrom("lnd" as const, "docs" as const),
    }),
  },
)

const scenarioArb = fc.record({
  initial: fc.array(step, { minLength: 3, maxLength: 14 }),
  after: fc.array(step, { minLength: 1, maxLength: 10 }),
})

/** Runs steps as the agent's shell would (through the harness, not Rewind). */
const apply = (files: Files, steps: ReadonlyArray<Step>) => {
  for (const s of steps) {
    const isLink = (p: string) => files.tree().get(p)?.startsWith("link ") === true
    switch (s.op) {
      case "write": {
        // A write through a link the shell follows would leave the root: the model's shell
        // writes only where every directory is real.
        const first = s.path.split("/")[0]!
        if (s.path.includes("/") && isLink(first)) break
        files.write(s.path, s.content, 0o644)
        break
      }
      case "delete":
        if (!isLink(s.path.split("/")[0]!)) files.remove(s.path)
        break
      case "rules":
        if (s.present) files.write(".gitignore", RULES, 0o644)
        else files.remove(".gitignore")
        break
      case "linkDir":
        files.removeTree(s.path)
        files.symlink(s.path, s.target)
        break
      case "unlinkDir":
        if (isLink(s.path)) files.remove(s.path)
        break
    }
  }
}

/**
 * The model's protection: by name, a nested repository's files (while `vendor/.git` is there), and
 * the one rule file the scenarios write.
 */
const protectedInModel = (path: string, tree: ReadonlyMap<string, string>) => {
  const segments = path.split("/")
  if (segments.includes(".git") || segments.includes(".rewind")) return true
  if (path.startsWith("vendor/") && tree.has("vendor/.git/HEAD")) return true
  return tree.has(".gitignore") && (path.endsWith(".log") || path.startsWith("build/"))
}

interface Tally {
  applied: number
  refused: number
  changed: number
}

const runScenario = (
  harness: SnapshotHarness,
  scenario: typeof scenarioArb extends fc.Arbitrary<infer S> ? S : never,
  tally: Tally,
) => {
  return withOpenHarness(harness, (files) =>
    Effect.gen(function* () {
      const sessionId: SessionId = (yield* createSession({ title: "protection", cwd: "/" })).id
      apply(files, scenario.initial)
      const atCapture = files.tree()
      const outcome = yield* capturePoint(sessionId, "turn-1" as TurnId)
      if (outcome._tag !== "Captured") return yield* Effect.dieMessage(outcome.reason)
      apply(files, scenario.after)
      const before = files.tree()
      const preview = yield* previewPointRestore(sessionId, outcome.point.pointId)
      // A preview writes nothing.
      expect(files.tree()).toEqual(before)
      if (!preview.canApply || preview.token === undefined) {
        tally.refused++
        return
      }
      const applied = yield* Effect.either(applyPointRestore(sessionId, outcome.point.pointId, preview.token))
      // Invariant 12: nothing changed since the preview, so its token applies.
      if (applied._tag === "Left")
        return yield* Effect.dieMessage(
          `a preview that could apply was refused: ${JSON.stringify(applied.left)}`,
        )
      tally.applied++
      const after = files.tree()
      const planned = new Map(preview.changes.map((c) => [c.path as string, c]))
      for (const path of new Set([...before.keys(), ...after.keys()])) {
        const change = planned.get(path)
        if (change === undefined) {
          // Invariant 11: what the plan does not name is untouched (a write through a link would
          // show here, on the link's target).
          expect(after.get(path), `${path} changed without being planned`).toBe(before.get(path))
          continue
        }
        tally.changed++
        expect(protectedInModel(path, before), `${path} is protected but was planned`).toBe(false)
        // Invariant 12: the apply did what the plan said, and the point recorded.
        if (change.action === "delete") expect(after.has(path), `${path} deleted`).toBe(false)
        else expect(after.get(path), `${path} restored`).toBe(atCapture.get(path))
      }
      for (const path of before.keys()) {
        if (protectedInModel(path, before))
          expect(after.get(path), `${path} protected`).toBe(before.get(path))
      }
    }),
  )
}

export const protectionProperties = (
  name: string,
  harness: SnapshotHarness,
  options: { readonly runs?: number } = {},
) => {
  describe(`protection properties: ${name}`, () => {
    it.effect(
      "invariants 11 and 12: restores never write through a link or into protected paths; a preview that can apply is applied as planned",
      () =>
        Effect.gen(function* () {
          const tally: Tally = { applied: 0, refused: 0, changed: 0 }
          const parameters = yield* runScenarios(
            `protection (${name})`,
            options.runs ?? 60,
            scenarioArb,
            (scenario) => runScenario(harness, scenario, tally),
          )
          console.info(`[property] protection (${name}): ${JSON.stringify(tally)}`)
          // A run whose previews never applied, or whose applies changed nothing, proves nothing.
          if (parameters.numRuns >= 20) {
            expect(tally.applied).toBeGreaterThan(0)
            expect(tally.changed).toBeGreaterThan(0)
          }
        }),
    )
  })
}
