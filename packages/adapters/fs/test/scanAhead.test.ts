// A scan lists the next wave of directories while it takes in the current one (core
// `workspaceScan.ts`, over the native scanner that lists off the main thread): what it answers must
// not depend on that. A budget spent while a wave is being listed ahead still reports every
// directory it did not take in; a whole scan is the same with and without its listings sealed.
import { mkdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { parentOf } from "@rewind/contracts"
import { scanWorkspace } from "@rewind/core"
import { Effect, Layer } from "effect"
import { NodeWorkspace } from "../src/index.js"
import { sandbox } from "./treeOps.js"

const FREE = { names: [".git", ".rewind"], paths: [] }
const WHOLE = { maxFiles: 1_000_000, deadlineMs: Number.MAX_SAFE_INTEGER }

/**
 * `tops` top directories of 20 each, one file in every directory: 40 make 840 directories (four
 * waves); 300 make 6,300, enough for the scan to cut its queue down (past 4,096 taken) mid-scan.
 */
const plant = (root: string, tops: number) => {
  const directories: Array<string> = []
  for (let a = 0; a < tops; a++)
    for (let b = 0; b < 21; b++) {
      const dir = b === 0 ? `d${a}` : `d${a}/e${b}`
      mkdirSync(join(root, dir), { recursive: true })
      writeFileSync(join(root, dir, "f.txt"), dir)
      directories.push(dir)
    }
  return directories
}

describe("a scan that lists ahead", () => {
  it.live.each([
    { tops: 40, cuts: [300, 600] },
    { tops: 300, cuts: [5_000] },
  ])(
    "reports every directory it did not take in when a budget is spent, and answers a whole scan alike ($tops tops)",
    ({ tops, cuts }) => {
      const box = sandbox()
      const directories = plant(box.root, tops)
      const program = Effect.gen(function* () {
        const whole = yield* scanWorkspace(WHOLE)
        const sealed = yield* scanWorkspace(WHOLE, undefined, undefined, FREE)
        expect([...sealed.entries.keys()].sort()).toEqual([...whole.entries.keys()].sort())
        expect([...sealed.tree.scopes.keys()].sort()).toEqual([...whole.tree.scopes.keys()].sort())
        expect(sealed.skipped).toEqual(whole.skipped)
        expect(whole.tree.scopes.size).toBe(directories.length + 1)
        for (const dir of whole.tree.scopes.keys()) expect(sealed.listingSeals?.of(dir)).toBeDefined()
        // Cut within a wave while the next is being listed (40 tops: the third and the fourth; 300:
        // after the queue was cut down).
        for (const maxFiles of cuts) {
          const cut = yield* scanWorkspace({ ...WHOLE, maxFiles }, undefined, undefined, FREE)
          const left = new Set(cut.skipped.filter((s) => s.reason === "budget").map((s) => s.path))
          expect(left.size).toBeGreaterThan(0)
          // Each directory listed, or reported, or below one reported.
          const reported = (dir: string): boolean =>
            left.has(dir) || (parentOf(dir) !== "" && reported(parentOf(dir)))
          const accounted = (dir: string) => cut.tree.scopes.has(dir) || reported(dir)
          expect(directories.filter((dir) => !accounted(dir))).toEqual([])
          for (const path of cut.entries.keys()) expect(whole.entries.has(path)).toBe(true)
        }
      })
      return Effect.provide(
        program,
        Layer.orDie(NodeWorkspace.layer(box.root, { durability: "atomic" })),
      ).pipe(Effect.ensuring(Effect.sync(() => rmSync(box.base, { recursive: true, force: true }))))
    },
  )
})
