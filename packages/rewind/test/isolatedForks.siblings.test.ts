// Merging two sibling forks (two isolated forks of one parent) into each other, against the base
// both descend from (`commonBase`): disjoint changes merged equal applying both sides; a path both
// changed differently is reported and left as the target has it; sessions with no common fork
// base are refused with `no_common_base`. Seeded FastCheck on the embedded default (SQLite + files).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { SessionId } from "@rewind/contracts"
import { FastCheck as fc } from "effect"
import { openRewind } from "../src/index.js"
import { tempDirs, completedTurn as turn } from "./isolatedForkKit.js"
import { okValue } from "./okValue.js"

const temp = tempDirs("sib")

const FILES = ["a.txt", "b.txt", "c.txt", "d.txt", "e.txt", "f.txt"]

const siblings = async (later: boolean) => {
  const root = temp()
  for (const f of FILES) writeFileSync(join(root, f), `${f} base\n`)
  const rewind = await openRewind({ workspaceRoot: root, durability: "atomic" })
  const session = okValue(await rewind.createSession({ title: "p", cwd: root }))
  const first = await turn(rewind, session.id, "first")
  const intoA = join(temp(), "a")
  const a = okValue(
    await rewind.forkAtMessage(session.id, first, undefined, { mode: "isolated", root: intoA }),
  )
  let second = first
  if (later) {
    // The parent works on, and the second sibling is forked from that newer state.
    writeFileSync(join(root, "parent-only.txt"), "parent\n")
    second = await turn(rewind, session.id, "second")
  }
  const intoB = join(temp(), "b")
  const b = okValue(
    await rewind.forkAtMessage(session.id, second, undefined, { mode: "isolated", root: intoB }),
  )
  return {
    rewind,
    root,
    parent: session.id,
    a: { id: a.childSessionId as SessionId, root: intoA },
    b: { id: b.childSessionId as SessionId, root: intoB },
  }
}

const editArb = fc.record({
  files: fc.subarray(FILES, { minLength: 1 }),
  split: fc.nat(),
  both: fc.boolean(),
  later: fc.boolean(),
})

describe("merging sibling forks against their common base", () => {
  it("disjoint changes merged equal applying both; a path both changed is reported and left", async () => {
    await fc.assert(
      fc.asyncProperty(editArb, async ({ files, split, both, later }) => {
        const s = await siblings(later)
        try {
          const cut = split % (files.length + 1)
          const onA = files.slice(0, cut)
          const onB = files.slice(cut)
          // With `both`, the first file is changed differently on both sides too: a conflict.
          const clash = both ? FILES.find((f) => !files.includes(f)) : undefined
          for (const f of onA) writeFileSync(join(s.a.root, f), `${f} from a\n`)
          for (const f of onB) writeFileSync(join(s.b.root, f), `${f} from b\n`)
          if (clash !== undefined) {
            writeFileSync(join(s.a.root, clash), "a's line\n")
            writeFileSync(join(s.b.root, clash), "b's line\n")
          }
          const preview = okValue(await s.rewind.previewMerge(s.a.id, s.b.id))
          expect(preview.conflicts.map((c) => c.path)).toEqual(clash === undefined ? [] : [clash])
          if (preview.canApply) {
            okValue(await s.rewind.applyMerge(s.a.id, preview.mergePointId!, preview.restore!.token!))
          } else expect(onB.length === 0 && !later).toBe(true)
          for (const f of FILES) {
            const want = onA.includes(f)
              ? `${f} from a\n`
              : onB.includes(f)
                ? `${f} from b\n`
                : f === clash
                  ? "a's line\n"
                  : `${f} base\n`
            expect(readFileSync(join(s.a.root, f), "utf8")).toBe(want)
          }
          // The parent's work between the two forks is b's side of the merge (a lacked it).
          if (later) expect(readFileSync(join(s.a.root, "parent-only.txt"), "utf8")).toBe("parent\n")
          // The source sibling's tree and the parent's are untouched.
          for (const f of onB) expect(readFileSync(join(s.b.root, f), "utf8")).toBe(`${f} from b\n`)
          for (const f of FILES) expect(readFileSync(join(s.root, f), "utf8")).toBe(`${f} base\n`)
        } finally {
          await s.rewind.close()
        }
      }),
      { numRuns: 6, seed: 28 },
    )
  })

  it("refuses two sessions that share no fork base, naming the reason", async () => {
    const root = temp()
    writeFileSync(join(root, "a.txt"), "a\n")
    const rewind = await openRewind({ workspaceRoot: root, durability: "atomic" })
    try {
      const one = okValue(await rewind.createSession({ title: "one", cwd: root }))
      const reply = await turn(rewind, one.id, "go")
      const other = okValue(await rewind.createSession({ title: "two", cwd: root }))
      const into = join(temp(), "tree")
      mkdirSync(into)
      const fork = okValue(
        await rewind.forkAtMessage(one.id, reply, undefined, { mode: "isolated", root: into }),
      )
      const refused = await rewind.previewMerge(other.id, fork.childSessionId as SessionId)
      expect(refused.ok).toBe(false)
      if (!refused.ok) {
        expect(refused.refusal.kind).toBe("unavailable")
        expect(refused.refusal.details).toMatchObject({ reason: "no_common_base" })
      }
    } finally {
      await rewind.close()
    }
  })
})
