// A merge that adds, retargets or removes symlinks (or turns a link into a file and back), then
// `redo`: the parent's tree must equal its capture from before the merge, bytes, modes and links.
// The links are journaled beside the files (`JournaledLink`), so redo puts them back exactly.
// Table cases on the embedded default (SQLite + real files).
import {
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import type { SessionId, TurnId } from "@rewind/contracts"
import { openRewind } from "../src/index.js"
import { okValue } from "./okValue.js"

const temps: Array<string> = []
const temp = () => {
  const dir = mkdtempSync(join(tmpdir(), "rewind-isolated-links-"))
  temps.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** Everything in a tree but the store: path → kind, mode and bytes, or link target. */
const snapshot = (root: string): Map<string, string> => {
  const out = new Map<string, string>()
  const walk = (dir: string, rel: string) => {
    for (const name of readdirSync(dir).sort()) {
      if (rel === "" && name === ".rewind") continue
      const path = join(dir, name)
      const r = rel === "" ? name : `${rel}/${name}`
      const s = lstatSync(path)
      if (s.isSymbolicLink()) out.set(r, `link:${readlinkSync(path)}`)
      else if (s.isDirectory()) walk(path, r)
      else out.set(r, `file:${(s.mode & 0o777).toString(8)}:${readFileSync(path).toString("base64")}`)
    }
  }
  walk(root, "")
  return out
}

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
      const rewind = await openRewind({ workspaceRoot: root, durability: "atomic" })
      try {
        const session = okValue(await rewind.createSession({ title: "p", cwd: root }))
        const { turnId } = okValue(await rewind.appendUserMessage(session.id, { text: "go" }))
        okValue(await rewind.capturePoint(session.id, turnId as TurnId))
        const reply = okValue(
          await rewind.appendReply(session.id, { turnId, parts: [{ kind: "text", text: "ok" }] }),
        )
        okValue(await rewind.completeTurnWithBoundary(session.id, turnId))
        const into = join(temp(), "tree")
        const fork = okValue(
          await rewind.forkAtMessage(session.id, reply.messageId, undefined, {
            mode: "isolated",
            root: into,
          }),
        )
        const child = fork.childSessionId as SessionId
        c.edit(into)
        const before = snapshot(root)

        const preview = okValue(await rewind.previewMerge(session.id, child))
        expect(preview.conflicts).toEqual([])
        expect(preview.canApply).toBe(true)
        okValue(await rewind.applyMerge(session.id, preview.mergePointId!, preview.restore!.token!))
        // The merge took the child's side: the parent's tree is the child's now.
        expect(snapshot(root)).toEqual(snapshot(into))

        okValue(await rewind.redo(session.id))
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
    const rewind = await openRewind({ workspaceRoot: root, durability: "atomic" })
    try {
      const session = okValue(await rewind.createSession({ title: "p", cwd: root }))
      const { turnId } = okValue(await rewind.appendUserMessage(session.id, { text: "go" }))
      okValue(await rewind.capturePoint(session.id, turnId as TurnId))
      const reply = okValue(
        await rewind.appendReply(session.id, { turnId, parts: [{ kind: "text", text: "ok" }] }),
      )
      okValue(await rewind.completeTurnWithBoundary(session.id, turnId))
      const into = join(temp(), "tree")
      const fork = okValue(
        await rewind.forkAtMessage(session.id, reply.messageId, undefined, { mode: "isolated", root: into }),
      )
      symlinkSync("a.txt", join(into, "ln"))
      writeFileSync(join(into, "a.txt"), "child\n")
      const preview = okValue(await rewind.previewMerge(session.id, fork.childSessionId as SessionId))
      okValue(await rewind.applyMerge(session.id, preview.mergePointId!, preview.restore!.token!))
      replace(join(root, "ln"), () => symlinkSync("b.txt", join(root, "ln")))
      const now = snapshot(root)
      const redo = await rewind.redo(session.id)
      expect(redo.ok).toBe(false)
      if (!redo.ok) expect(redo.refusal.kind).toBe("conflict")
      expect(snapshot(root)).toEqual(now)
    } finally {
      await rewind.close()
    }
  })
})
