// The one-step confinement check (dirscan.c `probePath`, core's `probeWhole`) answers exactly what
// the component walk answers: after random steps on a real tree (files, directories, renames,
// links to files, directories, outside and nowhere, a FIFO, a link whose target is not UTF-8), every
// operation that resolves a path (stat, read, readLink, list) gives the same value or the same
// refusal (tag, reason, code and sentence) on a workspace that has the one step as on one walked a
// component at a time, for every path in the tree, below its files and links, and missing ones.
// The counters prove both ways were taken.
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { WorkspacePath } from "@rewind/contracts"
import { type FileSystemPrimitives, makeConfinedWorkspace } from "@rewind/core"
import { Effect, Either, FastCheck as fc, Option } from "effect"
import { nodePrimitives } from "../src/NodeWorkspace.js"
import { apply, opArb } from "./treeOps.js"

const available = typeof nodePrimitives("/", { durability: "atomic" }).probeWhole === "function"

/**
 * Every path in the tree (links not followed), with a child and a grandchild below each, what
 * lies one link away, and missing paths.
 */
const candidates = (root: string): Array<string> => {
  const out = new Set<string>(["missing", "missing/deeper", "a/missing/deeper"])
  const walk = (rel: string) => {
    for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
      const path = rel === "" ? entry.name : `${rel}/${entry.name}`
      out.add(path)
      out.add(`${path}/below`)
      out.add(`${path}/below/deeper`)
      if (entry.isDirectory()) walk(path)
      // Through a link to a directory: paths that exist, one link away (the walk refuses them).
      if (entry.isSymbolicLink())
        try {
          for (const name of readdirSync(join(root, path)).slice(0, 3)) out.add(`${path}/${name}`)
        } catch {
          // Not a directory, or nothing there.
        }
    }
  }
  walk("")
  return [...out].sort()
}

/** A value or a refusal, in a form two workspaces' answers compare by. */
const outcome = <A>(effect: Effect.Effect<A, unknown>) =>
  Effect.map(Effect.either(effect), (either) =>
    Either.isRight(either)
      ? { ok: either.right }
      : {
          refused: (({ _tag, reason, code, message }) => ({ _tag, reason, code, message }))(
            either.left as Record<string, unknown>,
          ),
        },
  )

const answers = (workspace: ReturnType<typeof makeConfinedWorkspace>, path: WorkspacePath) =>
  Effect.all({
    stat: outcome(workspace.stat(path)),
    read: outcome(
      Effect.map(
        workspace.read(path),
        Option.map((f) => ({ mode: f.mode, text: new TextDecoder().decode(f.content) })),
      ),
    ),
    readLink: outcome(workspace.readLink(path)),
    list: outcome(Effect.map(workspace.list(path), (entries) => entries.map((e) => [e.name, e.kind]))),
  })

describe("the one-step confinement check", () => {
  it.live.skipIf(!available)("answers what the component walk answers, for every path of random trees", () =>
    Effect.promise(async () => {
      let oneStep = 0
      let handedToWalk = 0
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 25 }), async (ops) => {
          const base = mkdtempSync(join(tmpdir(), "rewind-probe-"))
          const root = join(base, "ws")
          mkdirSync(root)
          try {
            for (const op of ops) apply(root, op)
            // What the random steps do not make: a FIFO, links out of the root, a target not UTF-8.
            mkdirSync(join(root, "a"), { recursive: true })
            execFileSync("mkfifo", [join(root, "a", "fifo")])
            symlinkSync(base, join(root, "out"))
            symlinkSync(Buffer.from([0x61, 0xff, 0x62]), join(root, "a", "latin1"))
            const primitives = nodePrimitives(root, { durability: "atomic" })
            const probeWhole = primitives.probeWhole!
            const counted: FileSystemPrimitives = {
              ...primitives,
              probeWhole: (absolute) =>
                Effect.tap(probeWhole(absolute), (entry) => {
                  if (entry === undefined) handedToWalk++
                  else oneStep++
                }),
            }
            const { probeWhole: _, ...walked } = primitives
            const fast = makeConfinedWorkspace(root, counted)
            const slow = makeConfinedWorkspace(root, walked)
            for (const path of candidates(root)) {
              const [a, b] = await Effect.runPromise(
                Effect.all([answers(fast, path as WorkspacePath), answers(slow, path as WorkspacePath)]),
              )
              expect(a, path).toEqual(b)
            }
          } finally {
            rmSync(base, { recursive: true, force: true })
          }
        }),
        { numRuns: 15, seed: 34 },
      )
      // Both ways were taken: the paths in the tree in one step; those below a file, a link or a
      // missing directory (most of the candidates here) by the walk, compared all the same.
      expect(oneStep).toBeGreaterThan(300)
      expect(handedToWalk).toBeGreaterThan(300)
    }),
  )
})
