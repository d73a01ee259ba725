// Recovery of an interrupted restore that journaled links: a merge that adds, retargets and removes
// symlinks, turns a file into a link and edits a file "crashes" (the parent's Workspace dies, so no
// compensation runs and the journal stays pending, as when the process is killed) at three places:
// after the links in the way were removed and before the first file write, after the files and
// before the first new link, and between two new links. `recover()` lists the operation with each
// link's state; `rollback` must give back the tree from before the merge exactly (bytes, modes,
// links), `continue` the merged tree exactly, and a continued merge can still be redone away.
import { rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { PointId, SessionId } from "@rewind/contracts"
import { applyMerge, Workspace } from "@rewind/core"
import { Effect, Exit } from "effect"
import { parentAndFork, snapshot, tempDirs } from "./isolatedForkKit.js"
import { okValue } from "./okValue.js"

const temp = tempDirs("recover-links")

/** The child's edit: every kind of link change and a file edit. */
const edit = (t: string) => {
  symlinkSync("b.txt", join(t, "new-link"))
  rmSync(join(t, "link"))
  symlinkSync("b.txt", join(t, "link"))
  unlinkSync(join(t, "other-link"))
  rmSync(join(t, "c.txt"))
  symlinkSync("a.txt", join(t, "c.txt"))
  writeFileSync(join(t, "a.txt"), "changed in the child\n")
}

type CrashAt = { readonly call: "write" | "symlink"; readonly nth: number; readonly name: string }

const crashes: ReadonlyArray<CrashAt> = [
  { call: "write", nth: 1, name: "after the links in the way were removed, before the files" },
  { call: "symlink", nth: 1, name: "after the files, before the first new link" },
  { call: "symlink", nth: 2, name: "between two new links" },
]

/** The merge applied with the parent's Workspace dying at the `nth` call of `call`. */
const crashingMerge = (parent: SessionId, pointId: PointId, token: string, crash: CrashAt) => {
  let calls = 0
  const die = <A, E>(real: Effect.Effect<A, E>) =>
    Effect.suspend(() =>
      ++calls === crash.nth ? Effect.dieMessage(`crash at ${crash.call} #${crash.nth}`) : real,
    )
  return applyMerge(parent, pointId, token).pipe(
    Effect.updateService(Workspace, (ws) => ({
      ...ws,
      ...(crash.call === "write"
        ? { write: (path, content, options) => die(ws.write(path, content, options)) }
        : { symlink: (path, target) => die(ws.symlink(path, target)) }),
    })),
  )
}

describe("recover() of a restore with journaled links", () => {
  for (const crash of crashes) {
    for (const resolution of ["rollback", "continue"] as const) {
      it(`${resolution} after a crash ${crash.name}`, async () => {
        const root = temp()
        writeFileSync(join(root, "a.txt"), "a\n")
        writeFileSync(join(root, "b.txt"), "b\n")
        writeFileSync(join(root, "c.txt"), "c\n")
        symlinkSync("a.txt", join(root, "link"))
        symlinkSync("a.txt", join(root, "other-link"))
        const into = join(temp(), "tree")
        const { rewind, parent, child } = await parentAndFork(root, into)
        try {
          edit(into)
          const before = snapshot(root)
          const merged = snapshot(into)
          const preview = okValue(await rewind.previewMerge(parent, child))
          expect(preview.canApply).toBe(true)
          const exit = await rewind.run(
            Effect.exit(
              crashingMerge(parent, preview.mergePointId! as PointId, preview.restore!.token!, crash),
            ),
          )
          expect(Exit.isFailure(exit)).toBe(true)
          // Interrupted: neither the tree before nor the merged one.
          const halfway = snapshot(root)
          expect(halfway).not.toEqual(before)
          expect(halfway).not.toEqual(merged)

          const [op, ...rest] = okValue(await rewind.recover())
          expect(rest).toEqual([])
          expect(op!.resolvable).toBe(true)
          expect(op!.links.map((l) => l.path).sort()).toEqual(["c.txt", "link", "new-link", "other-link"])
          expect(op!.links.every((l) => ["rescue", "planned", "removed"].includes(l.state))).toBe(true)

          okValue(await rewind.resolveOperation(op!.record.intent.operationId, resolution))
          expect(okValue(await rewind.recover())).toEqual([])
          if (resolution === "rollback") {
            expect(snapshot(root)).toEqual(before)
          } else {
            expect(snapshot(root)).toEqual(merged)
            // Finished by recovery, the merge is a restore like any other: redo takes it away.
            okValue(await rewind.redo(parent))
            expect(snapshot(root)).toEqual(before)
          }
        } finally {
          await rewind.close()
        }
      })
    }
  }

  it("refuses to resolve, changing nothing, when a journaled link was retargeted after the crash", async () => {
    const root = temp()
    writeFileSync(join(root, "a.txt"), "a\n")
    writeFileSync(join(root, "b.txt"), "b\n")
    writeFileSync(join(root, "c.txt"), "c\n")
    symlinkSync("a.txt", join(root, "link"))
    symlinkSync("a.txt", join(root, "other-link"))
    const into = join(temp(), "tree")
    const { rewind, parent, child } = await parentAndFork(root, into)
    try {
      edit(into)
      const preview = okValue(await rewind.previewMerge(parent, child))
      await rewind.run(
        Effect.exit(
          crashingMerge(parent, preview.mergePointId! as PointId, preview.restore!.token!, crashes[1]!),
        ),
      )
      // Someone makes a link the merge removed point somewhere else meanwhile.
      symlinkSync("c.txt", join(root, "other-link"))
      const now = snapshot(root)
      const [op] = okValue(await rewind.recover())
      expect(op!.resolvable).toBe(false)
      expect(op!.links.find((l) => l.path === "other-link")!.state).toBe("changed")
      for (const resolution of ["rollback", "continue"] as const) {
        const refused = await rewind.resolveOperation(op!.record.intent.operationId, resolution)
        expect(refused.ok).toBe(false)
        if (!refused.ok) expect(refused.refusal.kind).toBe("conflict")
        expect(snapshot(root)).toEqual(now)
      }
    } finally {
      await rewind.close()
    }
  })
})
