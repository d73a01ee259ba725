// A merge that adds, retargets or removes symlinks (or turns a link into a file and back), then
// `redo`: the parent's tree must equal its capture from before the merge, bytes, modes and links.
// The links are journaled beside the files (`JournaledLink`), so redo puts them back exactly.
// Table cases on the embedded default (SQLite + real files).
import { rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { parentAndFork, snapshot, tempDirs } from "./isolatedForkKit.js"
import { okValue } from "./okValue.js"

const temp = tempDirs("links")

const replace = (path: string, make: () => void) => {
  rmSync(path, { force: true })
  make()
}

/** What the child does to its tree before the merge; every case changes at least one link. */
const cases: ReadonlyArray<{ readonly name: string; readonly edit: (tree: string) => void }> = [
  { name: "adds a link", edit: (t) => symlinkSync("a.txt", join(t, "new-link")) },
  {
    name: "retargets a link",
    edit: (t) => replace(join(t, "link"), () => symlinkSync("b.txt", join(t, "link"))),
  },
  { name: "removes a link", edit: (t) => unlinkSync(join(t, "link")) },
  {
    name: "turns a link into a file",
    edit: (t) => replace(join(t, "link"), () => writeFileSync(join(t, "link"), "now a file\n")),
  },
  {
    name: "turns a file into a link",
    edit: (t) => replace(join(t, "b.txt"), () => symlinkSync("a.txt", join(t, "b.txt"))),
  },
  {
    name: "does all of it at once, with a file edit",
    edit: (t) => {
      symlinkSync("b.txt", join(t, "new-link"))
      replace(join(t, "link"), () => symlinkSync("b.txt", join(t, "link")))
      unlinkSync(join(t, "other-link"))
      writeFileSync(join(t, "a.txt"), "changed in the child\n")
    },
  },
]

describe("merge then redo puts links back exactly", () => {
  for (const c of cases) {
    it(c.name, async () => {
      const root = temp()
      writeFileSync(join(root, "a.txt"), "a\n")
      writeFileSync(join(root, "b.txt"), "b\n")
      symlinkSync("a.txt", join(root, "link"))
      symlinkSync("a.txt", join(root, "other-link"))
      const into = join(temp(), "tree")
      const { rewind, parent, child } = await parentAndFork(root, into)
      try {
        c.edit(into)
        const before = snapshot(root)

        const preview = okValue(await rewind.previewMerge(parent, child))
        expect(preview.conflicts).toEqual([])
        expect(preview.canApply).toBe(true)
        okValue(await rewind.applyMerge(parent, preview.mergePointId!, preview.restore!.token!))
        // The merge took the child's side: the parent's tree is the child's now.
        expect(snapshot(root)).toEqual(snapshot(into))

        okValue(await rewind.redo(parent))
        expect(snapshot(root)).toEqual(before)
      } finally {
        await rewind.close()
      }
    })
  }

  it("refuses the redo, writing nothing, when a link the merge made was retargeted since", async () => {
    const root = temp()
    writeFileSync(join(root, "a.txt"), "a\n")
    writeFileSync(join(root, "b.txt"), "b\n")
    const into = join(temp(), "tree")
    const { rewind, parent, child } = await parentAndFork(root, into)
    try {
      symlinkSync("a.txt", join(into, "ln"))
      writeFileSync(join(into, "a.txt"), "child\n")
      const preview = okValue(await rewind.previewMerge(parent, child))
      okValue(await rewind.applyMerge(parent, preview.mergePointId!, preview.restore!.token!))
      replace(join(root, "ln"), () => symlinkSync("b.txt", join(root, "ln")))
      const now = snapshot(root)
      const redo = await rewind.redo(parent)
      expect(redo.ok).toBe(false)
      if (!redo.ok) expect(redo.refusal.kind).toBe("conflict")
      expect(snapshot(root)).toEqual(now)
    } finally {
      await rewind.close()
    }
  })
})
