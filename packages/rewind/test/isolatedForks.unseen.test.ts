// A path the child's scan did not see is not a deletion: `previewMerge` reads the child's tree by a
// scan, and what that scan reports leaving out (a directory that became a nested repository, a file
// that became a FIFO) is absent from its manifest. Read as "deleted in the child", the merge used to
// plan the deletion of the parent's copies, which nothing in the child had deleted. Now such a path
// keeps the parent's version (core's `unseenBy`), and the child's skips are reported; so does a path
// the child's own ignore rules now exclude (core's `ignoredInTree`).
import { execFileSync } from "node:child_process"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { parentAndFork, snapshot, tempDirs } from "./isolatedForkKit.js"
import { okValue } from "./okValue.js"

const temp = tempDirs("unseen")

describe("previewMerge and what the child's scan did not see", () => {
  it("a directory that became a nested repository, a file that became a FIFO: the parent's copies stay", async () => {
    const root = temp()
    mkdirSync(join(root, "lib"))
    writeFileSync(join(root, "lib", "a.js"), "a\n")
    writeFileSync(join(root, "lib", "b.js"), "b\n")
    writeFileSync(join(root, "pipe"), "a file in the parent\n")
    writeFileSync(join(root, "one.txt"), "one\n")
    const into = join(temp(), "tree")
    const { rewind, parent, child } = await parentAndFork(root, into)
    try {
      // In the child: lib/ becomes a repository of its own (its files are still there), `pipe` a
      // FIFO, and one ordinary change that the merge is to bring back.
      mkdirSync(join(into, "lib", ".git"))
      execFileSync("rm", [join(into, "pipe")])
      execFileSync("mkfifo", [join(into, "pipe")])
      writeFileSync(join(into, "one.txt"), "changed in the child\n")
      const before = snapshot(root)

      const preview = okValue(await rewind.previewMerge(parent, child))
      expect(preview.files.map((f) => `${f.action} ${f.path}`)).toEqual(["write one.txt"])
      expect(preview.conflicts).toEqual([])
      expect(preview.skipped.map((s) => `${s.reason} ${s.path}`).sort()).toEqual([
        "not_a_regular_file pipe",
        "skipped_directory lib",
      ])
      okValue(await rewind.applyMerge(parent, preview.mergePointId!, preview.restore!.token!))

      const after = snapshot(root)
      expect(readFileSync(join(root, "one.txt"), "utf8")).toBe("changed in the child\n")
      after.delete("one.txt")
      before.delete("one.txt")
      expect(after).toEqual(before)
    } finally {
      await rewind.close()
    }
  })

  it("a path the child's own ignore rules now exclude: the parent's copy stays", async () => {
    const root = temp()
    writeFileSync(join(root, "app.log"), "the parent's log\n")
    writeFileSync(join(root, "one.txt"), "one\n")
    const into = join(temp(), "tree")
    const { rewind, parent, child } = await parentAndFork(root, into)
    try {
      // The child's agent ignores logs (its app.log is still there, now out of its tree's scope).
      writeFileSync(join(into, ".gitignore"), "*.log\n")
      const preview = okValue(await rewind.previewMerge(parent, child))
      expect(preview.files.map((f) => `${f.action} ${f.path}`)).toEqual(["write .gitignore"])
      okValue(await rewind.applyMerge(parent, preview.mergePointId!, preview.restore!.token!))
      expect(readFileSync(join(root, "app.log"), "utf8")).toBe("the parent's log\n")
      expect(readFileSync(join(root, ".gitignore"), "utf8")).toBe("*.log\n")
    } finally {
      await rewind.close()
    }
  })
})
