// Isolated forks through the facade on the embedded default (SQLite + files on disk): a fork into a
// tree of its own, materialised from the fork point; work in the child never touches the parent's
// tree; diff between the two trees; a three-way merge back (preview → token → apply, redo); the
// refusals for a target directory that cannot be used.
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import type { SessionId, TurnId } from "@rewind/contracts"
import { dispatchSlashCommand, openRewind, type Rewind } from "../src/index.js"
import { okValue } from "./okValue.js"

const temps: Array<string> = []
const temp = (name: string) => {
  const dir = mkdtempSync(join(tmpdir(), `rewind-isolated-${name}-`))
  temps.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const read = (root: string, path: string) => readFileSync(join(root, path), "utf8")

/** One completed turn: the prompt, a point of the tree as it is, the reply with a pinned boundary. */
const turn = async (rewind: Rewind, sessionId: SessionId, text: string) => {
  const { turnId } = okValue(await rewind.appendUserMessage(sessionId, { text }))
  okValue(await rewind.capturePoint(sessionId, turnId as TurnId))
  const reply = okValue(
    await rewind.appendReply(sessionId, { turnId, parts: [{ kind: "text", text: "ok" }] }),
  )
  okValue(await rewind.completeTurnWithBoundary(sessionId, turnId))
  return { turnId, replyId: reply.messageId }
}

const setup = async () => {
  const root = temp("parent")
  writeFileSync(join(root, "a.txt"), "one\ntwo\nthree\nfour\nfive\n")
  mkdirSync(join(root, "bin"))
  writeFileSync(join(root, "bin", "run.sh"), "#!/bin/sh\necho hi\n")
  chmodSync(join(root, "bin", "run.sh"), 0o755)
  symlinkSync("a.txt", join(root, "link"))
  mkdirSync(join(root, "node_modules", "dep"), { recursive: true })
  writeFileSync(join(root, "node_modules", "dep", "index.js"), "module.exports = 1\n")
  const rewind = await openRewind({ workspaceRoot: root })
  const session = okValue(await rewind.createSession({ title: "parent", cwd: root }))
  const first = await turn(rewind, session.id, "first")
  return { root, rewind, sessionId: session.id, first }
}

describe("isolated forks (fs + SQLite)", () => {
  it("materialises the fork point into a new tree: bytes, modes and links; node_modules left out and listed", async () => {
    const { root, rewind, sessionId, first } = await setup()
    try {
      // The parent moves on after the fork point: the child's tree is the point's, not today's.
      writeFileSync(join(root, "a.txt"), "changed later\n")
      const into = join(temp("child"), "tree")
      const fork = okValue(
        await rewind.forkAtMessage(sessionId, first.replyId, undefined, { mode: "isolated", root: into }),
      )
      const report = fork.isolated!
      expect(report.root).toBe(into)
      expect(read(into, "a.txt")).toBe("one\ntwo\nthree\nfour\nfive\n")
      expect(statSync(join(into, "bin", "run.sh")).mode & 0o777).toBe(0o755)
      expect(lstatSync(join(into, "link")).isSymbolicLink()).toBe(true)
      expect(readlinkSync(join(into, "link"))).toBe("a.txt")
      expect(existsSync(join(into, "node_modules"))).toBe(false)
      expect(report.leftOut.some((s) => s.path === "node_modules")).toBe(true)
      expect(report.files).toBe(2)
      expect(report.links).toBe(1)
      expect(report.cloned + report.written).toBe(2)
      expect(existsSync(join(into, ".rewind"))).toBe(false)
      // The parent's tree is as it was.
      expect(read(root, "a.txt")).toBe("changed later\n")
    } finally {
      await rewind.close()
    }
  })

  it("copies what the point left out only when asked", async () => {
    const { rewind, sessionId, first } = await setup()
    try {
      const into = join(temp("child"), "tree")
      const fork = okValue(
        await rewind.forkAtMessage(sessionId, first.replyId, undefined, {
          mode: "isolated",
          root: into,
          copyUnrecorded: true,
        }),
      )
      expect(read(into, "node_modules/dep/index.js")).toBe("module.exports = 1\n")
      expect(fork.isolated!.copied).toContain("node_modules/dep/index.js")
    } finally {
      await rewind.close()
    }
  })

  it("refuses a target that is not empty, lies inside the parent's tree, or is relative; nothing is created", async () => {
    const { root, rewind, sessionId, first } = await setup()
    try {
      const full = temp("full")
      writeFileSync(join(full, "keep.txt"), "mine\n")
      const kinds = []
      for (const target of [full, join(root, "sub"), "relative/dir"]) {
        const answer = await rewind.forkAtMessage(sessionId, first.replyId, undefined, {
          mode: "isolated",
          root: target,
        })
        expect(answer.ok).toBe(false)
        if (!answer.ok)
          kinds.push([answer.refusal.kind, (answer.refusal.details as { reason: string }).reason])
      }
      expect(kinds).toEqual([
        ["workspace_refused", "not_empty"],
        ["workspace_refused", "overlaps_tree"],
        ["workspace_refused", "not_absolute"],
      ])
      expect(read(full, "keep.txt")).toBe("mine\n")
      expect(existsSync(join(root, "sub"))).toBe(false)
      expect(okValue(await rewind.listSessions()).length).toBe(1)
    } finally {
      await rewind.close()
    }
  })

  it("work in the child stays in its tree; diff shows it; a merge brings it back and redo takes it away", async () => {
    const { root, rewind, sessionId, first } = await setup()
    try {
      const into = join(temp("child"), "tree")
      const fork = okValue(
        await rewind.forkAtMessage(sessionId, first.replyId, undefined, { mode: "isolated", root: into }),
      )
      const child = fork.childSessionId
      // The child edits line 1 and adds a file; the parent edits line 5: disjoint changes.
      writeFileSync(join(into, "a.txt"), "ONE\ntwo\nthree\nfour\nfive\n")
      writeFileSync(join(into, "new.txt"), "from the child\n")
      const { turnId } = okValue(await rewind.appendUserMessage(child, { text: "child work" }))
      okValue(await rewind.capturePoint(child, turnId as TurnId))
      writeFileSync(join(root, "a.txt"), "one\ntwo\nthree\nfour\nFIVE\n")
      expect(existsSync(join(root, "new.txt"))).toBe(false)

      const diff = okValue(await rewind.diffSessions(sessionId, child))
      expect(diff.entries.map((e) => [e.path, e.change])).toEqual([
        ["a.txt", "modified"],
        ["new.txt", "added"],
      ])

      const preview = okValue(await rewind.previewMerge(sessionId, child))
      expect(preview.conflicts).toEqual([])
      expect(preview.files.map((f) => [f.path, f.from])).toEqual([
        ["a.txt", "merged"],
        ["new.txt", "source"],
      ])
      expect(preview.canApply).toBe(true)
      okValue(await rewind.applyMerge(sessionId, preview.mergePointId!, preview.restore!.token!))
      expect(read(root, "a.txt")).toBe("ONE\ntwo\nthree\nfour\nFIVE\n")
      expect(read(root, "new.txt")).toBe("from the child\n")
      // The child's tree did not move.
      expect(read(into, "a.txt")).toBe("ONE\ntwo\nthree\nfour\nfive\n")

      okValue(await rewind.redo(sessionId))
      expect(read(root, "a.txt")).toBe("one\ntwo\nthree\nfour\nFIVE\n")
      expect(existsSync(join(root, "new.txt"))).toBe(false)
    } finally {
      await rewind.close()
    }
  })

  it("reports an overlapping change with both sides and leaves the target's file; markers only when asked", async () => {
    const { root, rewind, sessionId, first } = await setup()
    try {
      const into = join(temp("child"), "tree")
      const child = okValue(
        await rewind.forkAtMessage(sessionId, first.replyId, undefined, { mode: "isolated", root: into }),
      ).childSessionId
      writeFileSync(join(into, "a.txt"), "one\nCHILD\nthree\nfour\nfive\n")
      writeFileSync(join(root, "a.txt"), "one\nPARENT\nthree\nfour\nfive\n")
      const preview = okValue(await rewind.previewMerge(sessionId, child))
      expect(preview.conflicts.map((c) => [c.path, c.reason, c.hunks])).toEqual([
        ["a.txt", "text", [{ base: "two\n", source: "CHILD\n", target: "PARENT\n" }]],
      ])
      expect(preview.canApply).toBe(false)
      expect(read(root, "a.txt")).toBe("one\nPARENT\nthree\nfour\nfive\n")

      const marked = okValue(await rewind.previewMerge(sessionId, child, { markers: true }))
      okValue(await rewind.applyMerge(sessionId, marked.mergePointId!, marked.restore!.token!))
      expect(read(root, "a.txt")).toBe(
        `one\n<<<<<<< target ${sessionId}\nPARENT\n=======\nCHILD\n>>>>>>> source ${child}\nthree\nfour\nfive\n`,
      )
    } finally {
      await rewind.close()
    }
  })

  it("never overwrites a file changed after the preview", async () => {
    const { root, rewind, sessionId, first } = await setup()
    try {
      const into = join(temp("child"), "tree")
      const child = okValue(
        await rewind.forkAtMessage(sessionId, first.replyId, undefined, { mode: "isolated", root: into }),
      ).childSessionId
      writeFileSync(join(into, "a.txt"), "child\n")
      const preview = okValue(await rewind.previewMerge(sessionId, child))
      writeFileSync(join(root, "a.txt"), "edited after the preview\n")
      const applied = await rewind.applyMerge(sessionId, preview.mergePointId!, preview.restore!.token!)
      expect(applied.ok).toBe(false)
      expect(read(root, "a.txt")).toBe("edited after the preview\n")
    } finally {
      await rewind.close()
    }
  })

  it("/fork --isolated <dir> forks from the latest checkpoint into a tree of its own", async () => {
    const { root, rewind, sessionId } = await setup()
    try {
      const { turnId } = okValue(await rewind.appendUserMessage(sessionId, { text: "edit" }))
      writeFileSync(join(root, "a.txt"), "tool wrote\n")
      okValue(
        await rewind.recordFileMutation({
          sessionId,
          turnId,
          path: "a.txt",
          toolName: "Write",
          before: "one\ntwo\nthree\nfour\nfive\n",
          after: "tool wrote\n",
        }),
      )
      const into = join(temp("child"), "tree")
      const forked = okValue(await dispatchSlashCommand(rewind, sessionId, `/fork latest --isolated ${into}`))
      expect(forked._tag).toBe("Forked")
      // Just before the checkpoint: the content it replaced; the parent keeps what the tool wrote.
      expect(read(into, "a.txt")).toBe("one\ntwo\nthree\nfour\nfive\n")
      expect(read(root, "a.txt")).toBe("tool wrote\n")
    } finally {
      await rewind.close()
    }
  })
  it("rewind by fork into a tree of its own: the tree before the message; the parent's stays as it is", async () => {
    const { root, rewind, sessionId } = await setup()
    try {
      const original = read(root, "a.txt")
      const write = async (turnId: string, before: string, after: string) => {
        writeFileSync(join(root, "a.txt"), after)
        okValue(
          await rewind.recordFileMutation({
            sessionId,
            turnId: turnId as TurnId,
            path: "a.txt",
            toolName: "Write",
            before,
            after,
          }),
        )
      }
      const t1 = okValue(await rewind.appendUserMessage(sessionId, { text: "one" }))
      await write(t1.turnId, original, "t1\n")
      okValue(
        await rewind.appendReply(sessionId, { turnId: t1.turnId, parts: [{ kind: "text", text: "ok" }] }),
      )
      okValue(await rewind.completeTurnWithBoundary(sessionId, t1.turnId))
      const t2 = okValue(await rewind.appendUserMessage(sessionId, { text: "two" }))
      await write(t2.turnId, "t1\n", "t2\n")
      const preview = okValue(await rewind.previewRewindByFork(sessionId, t2.messageId))
      const into = join(temp("child"), "tree")
      const done = okValue(
        await rewind.rewindByFork(sessionId, t2.messageId, preview.token!, undefined, {
          mode: "isolated",
          root: into,
        }),
      )
      expect(done.prompt).toBe("two")
      expect(done.files).toEqual([])
      expect(read(into, "a.txt")).toBe("t1\n")
      expect(read(root, "a.txt")).toBe("t2\n")
      expect(done.fork.isolated?.root).toBe(into)
    } finally {
      await rewind.close()
    }
  })
})
