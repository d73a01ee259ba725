// Per-file refusals of a merge (issue 28, item 3) and GC with a live isolated tree (item 2), on the
// embedded default. A mode changed differently on both sides, a link retargeted differently on both
// sides, and a file deleted on one side and changed on the other are each a conflict of their own
// (`mode`, `link`, `delete_modify`) left as the target has them, while a clean change beside them is
// merged. A cleanup (grace 0, keep only the newest point of each session) releases the parent's
// old points but keeps what the child's fork base needs: doctor finds nothing missing and a merge
// against that base still plans.
import { chmodSync, lstatSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { TurnId } from "@rewind/contracts"
import { parentAndFork, tempDirs } from "./isolatedForkKit.js"
import { okValue } from "./okValue.js"

const temp = tempDirs("conflicts")

const relink = (path: string, target: string) => {
  rmSync(path, { force: true })
  symlinkSync(target, path)
}

const fill = (root: string) => {
  writeFileSync(join(root, "clean.txt"), "clean\n")
  writeFileSync(join(root, "run.sh"), "#!/bin/sh\n")
  chmodSync(join(root, "run.sh"), 0o755)
  writeFileSync(join(root, "gone.txt"), "gone\n")
  writeFileSync(join(root, "a.txt"), "a\n")
  writeFileSync(join(root, "b.txt"), "b\n")
  writeFileSync(join(root, "c.txt"), "c\n")
  symlinkSync("a.txt", join(root, "link"))
}

describe("merge conflicts refused per file", () => {
  it("mode, link and delete/modify conflicts are each reported and left; a clean change merges", async () => {
    const root = temp()
    fill(root)
    const into = join(temp(), "tree")
    const { rewind, parent, child } = await parentAndFork(root, into)
    try {
      // The child's side.
      writeFileSync(join(into, "clean.txt"), "clean, changed in the child\n")
      chmodSync(join(into, "run.sh"), 0o700)
      relink(join(into, "link"), "b.txt")
      rmSync(join(into, "gone.txt"))
      // The parent's side, on the same paths, differently.
      chmodSync(join(root, "run.sh"), 0o750)
      relink(join(root, "link"), "c.txt")
      writeFileSync(join(root, "gone.txt"), "gone, but changed in the parent\n")

      const preview = okValue(await rewind.previewMerge(parent, child))
      expect(preview.conflicts.map((c) => [c.path, c.reason]).sort()).toEqual([
        ["gone.txt", "delete_modify"],
        ["link", "link"],
        ["run.sh", "mode"],
      ])
      expect(preview.files.map((f) => f.path)).toEqual(["clean.txt"])
      okValue(await rewind.applyMerge(parent, preview.mergePointId!, preview.restore!.token!))
      expect(readFileSync(join(root, "clean.txt"), "utf8")).toBe("clean, changed in the child\n")
      // Each conflicting path as the target had it.
      expect(lstatSync(join(root, "run.sh")).mode & 0o777).toBe(0o750)
      expect(readlinkSync(join(root, "link"))).toBe("c.txt")
      expect(readFileSync(join(root, "gone.txt"), "utf8")).toBe("gone, but changed in the parent\n")
    } finally {
      await rewind.close()
    }
  })
})

describe("GC with a live isolated tree", () => {
  it("a cleanup keeps what the child's fork base needs: doctor is clean and a merge still plans", async () => {
    const root = temp()
    fill(root)
    const into = join(temp(), "tree")
    const { rewind, parent, child } = await parentAndFork(root, into)
    try {
      // The parent moves on: new points with new content, so the fork base's is the parent's no more.
      for (let n = 1; n <= 3; n++) {
        writeFileSync(join(root, "a.txt"), `a, parent version ${n}\n`)
        writeFileSync(join(root, "clean.txt"), `clean, parent version ${n}\n`)
        const { turnId } = okValue(await rewind.appendUserMessage(parent, { text: `turn ${n}` }))
        okValue(await rewind.capturePoint(parent, turnId as TurnId))
      }
      const report = okValue(await rewind.cleanup({ retention: { keepLastPoints: 1 }, graceMs: 0 }))
      expect(report.swept).toBe(true)
      expect(report.releasedPoints.length).toBeGreaterThan(0)
      const doctor = okValue(await rewind.doctor())
      expect(doctor.problems).toEqual([])

      // The child's change merges against its base, whose content survived the cleanup.
      writeFileSync(join(into, "b.txt"), "b, changed in the child\n")
      const preview = okValue(await rewind.previewMerge(parent, child))
      expect(preview.conflicts).toEqual([])
      expect(preview.files.map((f) => f.path)).toEqual(["b.txt"])
      okValue(await rewind.applyMerge(parent, preview.mergePointId!, preview.restore!.token!))
      expect(readFileSync(join(root, "b.txt"), "utf8")).toBe("b, changed in the child\n")
      expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a, parent version 3\n")
    } finally {
      await rewind.close()
    }
  })
})
