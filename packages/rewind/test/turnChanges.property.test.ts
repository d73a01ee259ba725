// The timeline's per-turn changes taken from manifest deltas (`manifestWalk`: the tree moved on by
// each delta alone) against comparing the two whole manifests (`manifestChanges`), on a real store: random
// edits, deletions, re-creations, `.gitignore` edits and large rewrites (which cut a delta chain, as
// 16 layers do), each followed by a capture; every pair of points, in order and out of order, must
// agree, and so must the ignore files reported when a step changed them (`rulesBefore`).
import { mkdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { ContentHash, TurnId } from "@rewind/contracts"
import {
  capturePoint,
  isIgnoreFile,
  loadManifest,
  type ManifestEntry,
  manifestChanges,
  manifestWalk,
} from "@rewind/core"
import { Effect, FastCheck as fc } from "effect"

import { openRewind } from "../src/index.js"
import { tempDirs } from "./isolatedForkKit.js"
import { okValue } from "./okValue.js"

const temp = tempDirs("turn-changes")

const FILES = 12
const name = (i: number) => (i % 3 === 0 ? `dir${i % 2}/f${i}.txt` : `f${i}.txt`)

type Step =
  | { readonly kind: "write" | "delete"; readonly file: number }
  | { readonly kind: "rewrite all" }
  | { readonly kind: "rules"; readonly at: "" | "dir0/"; readonly text: string }

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("write" as const), file: fc.nat(FILES - 1) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("delete" as const), file: fc.nat(FILES - 1) }) },
  { weight: 1, arbitrary: fc.constant({ kind: "rewrite all" as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("rules" as const),
      at: fc.constantFrom("" as const, "dir0/" as const),
      text: fc.constantFrom("*.tmp\n", "f1*.txt\n", "", "f2.txt\n"),
    }),
  },
)

/** The ignore files of a manifest, as `rulesBefore` reports them. */
const rulesOf = (manifest: ReadonlyMap<string, ManifestEntry>) =>
  Object.fromEntries([...manifest].filter(([p, e]) => isIgnoreFile(p) && e.kind !== "tombstone"))

describe("turn changes from manifest deltas", () => {
  it("equal the whole-manifest comparison for every pair of points", async () => {
    const root = temp()
    for (let i = 0; i < FILES; i++) {
      mkdirSync(join(root, name(i), ".."), { recursive: true })
      writeFileSync(join(root, name(i)), `file ${i}\n`)
    }
    const rewind = await openRewind({ workspaceRoot: root })
    try {
      const session = okValue(await rewind.createSession({ title: "t", cwd: root }))
      const steps = fc.sample(fc.array(step, { minLength: 24, maxLength: 24 }), { seed: 27, numRuns: 1 })[0]!
      const hashes: Array<ContentHash> = []
      let version = 0
      for (const [n, s] of [{ kind: "write", file: 0 } as Step, ...steps].entries()) {
        version++
        if (s.kind === "rewrite all")
          for (let i = 0; i < FILES; i++) writeFileSync(join(root, name(i)), `rewritten ${version} ${i}\n`)
        else if (s.kind === "rules") writeFileSync(join(root, `${s.at}.gitignore`), s.text)
        else if (s.kind === "write") writeFileSync(join(root, name(s.file)), `v${version} of ${s.file}\n`)
        else rmSync(join(root, name(s.file)), { force: true })
        const outcome = await rewind.run(capturePoint(session.id, `turn-${n}` as TurnId))
        if (outcome._tag !== "Captured") throw new Error(outcome.reason)
        hashes.push(outcome.point.manifestHash)
      }
      const expected = (from: ContentHash, to: ContentHash) =>
        Effect.gen(function* () {
          const [before, after] = [yield* loadManifest(from), yield* loadManifest(to)]
          const rulesBefore = rulesOf(before)
          const sameRules = JSON.stringify(rulesBefore) === JSON.stringify(rulesOf(after))
          return {
            changes: Object.fromEntries(manifestChanges(before, after)),
            rulesBefore: sameRules ? undefined : rulesBefore,
          }
        })
      // In order (as the timeline walks), then pairs in a random order (chain jumps, going back).
      const pairs: Array<[number, number]> = hashes.slice(1).map((_, i) => [i, i + 1])
      pairs.push(
        ...fc.sample(fc.tuple(fc.nat(hashes.length - 1), fc.nat(hashes.length - 1)), {
          seed: 28,
          numRuns: 30,
        }),
      )
      const walked = await rewind.run(
        Effect.gen(function* () {
          const between = manifestWalk()
          const out: Array<{ changes: Record<string, string>; rulesBefore: unknown }> = []
          for (const [a, b] of pairs) {
            const { changes, rulesBefore } = yield* between(hashes[a]!, hashes[b]!)
            out.push({
              changes: Object.fromEntries(changes),
              rulesBefore: rulesBefore === undefined ? undefined : Object.fromEntries(rulesBefore),
            })
          }
          return out
        }),
      )
      const whole = await rewind.run(Effect.forEach(pairs, ([a, b]) => expected(hashes[a]!, hashes[b]!)))
      expect(walked).toEqual(whole)
      // The walk did take deltas: most consecutive pairs changed something.
      expect(
        whole.slice(0, hashes.length - 1).filter((c) => Object.keys(c.changes).length > 0).length,
      ).toBeGreaterThan(10)
      // And the rules did change along the way (the report is not always "unchanged").
      expect(whole.filter((c) => c.rulesBefore !== undefined).length).toBeGreaterThan(2)
    } finally {
      await rewind.close()
    }
  })
})
