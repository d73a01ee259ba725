// Forks that put files back, through the facade on the embedded default (SQLite + files on disk):
// `/fork <checkpoint>`, `/fork latest`, forkFromCheckpoint and rewind by fork, with their refusals.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import type { SessionId, TurnId } from "@rewind/contracts"
import { dispatchSlashCommand, openRewind, type Rewind } from "../src/index.js"
import { okValue } from "./okValue.js"

const temps: Array<string> = []
const workspace = () => {
  const dir = mkdtempSync(join(tmpdir(), "rewind-fork-restore-"))
  temps.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const must = <A>(
  o: { ok: true; value: A } | { ok: false; refusal: { kind: string; message: string } },
): A => {
  if (!o.ok) throw new Error(`${o.refusal.kind}: ${o.refusal.message}`)
  return o.value
}

/** What a host does when a tool writes a file: write it on disk, then record the checkpoint. */
const toolWrite = async (
  rewind: Rewind,
  root: string,
  sessionId: SessionId,
  turnId: TurnId,
  path: string,
  content: string,
) => {
  const file = join(root, path)
  const before = existsSync(file) ? readFileSync(file, "utf8") : null
  writeFileSync(file, content)
  const r = okValue(
    await rewind.recordFileMutation({
      sessionId,
      turnId,
      path,
      toolName: "Write",
      before,
      after: content,
    }),
  )
  if (!r.recorded) throw new Error("not recorded")
  return r.checkpoint
}

const turn = async (
  rewind: Rewind,
  root: string,
  sessionId: SessionId,
  text: string,
  writes: Record<string, string>,
) => {
  const { messageId, turnId } = must(await rewind.appendUserMessage(sessionId, { text }))
  const checkpoints = []
  for (const [path, content] of Object.entries(writes)) {
    checkpoints.push(await toolWrite(rewind, root, sessionId, turnId, path, content))
  }
  must(await rewind.appendReply(sessionId, { turnId, parts: [{ kind: "text", text: "done" }] }))
  must(await rewind.completeTurnWithBoundary(sessionId, turnId))
  return { messageId, turnId, checkpoints }
}

const read = (root: string, path: string) => readFileSync(join(root, path), "utf8")

describe("forks that restore files (fs + SQLite)", () => {
  it("/fork <checkpoint> and /fork latest write the files back on disk and create the child", async () => {
    const root = workspace()
    writeFileSync(join(root, "a.txt"), "a0\n")
    const rewind = await openRewind({ workspaceRoot: root })
    try {
      const session = must(await rewind.createSession({ title: "t", cwd: root }))
      const one = await turn(rewind, root, session.id, "one", { "a.txt": "a1\n" })
      await turn(rewind, root, session.id, "two", { "a.txt": "a2\n", "b.txt": "b2\n" })

      const latest = must(await dispatchSlashCommand(rewind, session.id, "/fork latest"))
      expect(latest._tag).toBe("Forked")
      // The latest checkpoint created b.txt: forking from it removes the file again.
      expect(existsSync(join(root, "b.txt"))).toBe(false)
      expect(read(root, "a.txt")).toBe("a2\n")

      const explicit = must(
        await dispatchSlashCommand(rewind, session.id, `/fork ${one.checkpoints[0]!.checkpointId}`),
      )
      expect(read(root, "a.txt")).toBe("a0\n")
      if (explicit._tag === "Forked") {
        const log = must(await rewind.transcript(explicit.fork.childSessionId))
        expect(log.some((l) => l.parts.some((p) => p.text === "one"))).toBe(true)
        expect(log.some((l) => l.parts.some((p) => p.text === "two"))).toBe(false)
      }
      expect(okValue(await rewind.listSessions()).length).toBe(3)
    } finally {
      await rewind.close()
    }
  })

  it("an externally modified file refuses: nothing written on disk, no child session", async () => {
    const root = workspace()
    const rewind = await openRewind({ workspaceRoot: root })
    try {
      const session = must(await rewind.createSession({ title: "t", cwd: root }))
      const one = await turn(rewind, root, session.id, "one", { "a.txt": "a1\n" })
      await turn(rewind, root, session.id, "two", { "a.txt": "a2\n", "b.txt": "b2\n" })
      writeFileSync(join(root, "b.txt"), "a person edited this\n")
      const refused = await rewind.forkFromCheckpoint(session.id, { messageId: one.messageId })
      expect(refused.ok ? "ok" : refused.refusal.kind).toBe("unsafe_files")
      expect(read(root, "a.txt")).toBe("a2\n")
      expect(read(root, "b.txt")).toBe("a person edited this\n")
      expect(okValue(await rewind.listSessions()).length).toBe(1)
    } finally {
      await rewind.close()
    }
  })

  it("rewind by fork: preview, confirm, child id and prompt; files restored on disk; a reused token is refused", async () => {
    const root = workspace()
    writeFileSync(join(root, "a.txt"), "a0\n")
    const rewind = await openRewind({ workspaceRoot: root })
    try {
      const session = must(await rewind.createSession({ title: "t", cwd: root }))
      await turn(rewind, root, session.id, "one", { "a.txt": "a1\n" })
      const two = await turn(rewind, root, session.id, "make b", { "a.txt": "a2\n", "b.txt": "b2\n" })
      const points = must(await rewind.listRewindPoints(session.id))
      expect(points.map((p) => p.prompt)).toEqual(["make b"])
      const preview = must(await rewind.previewRewindByFork(session.id, two.messageId))
      expect(preview.canApply).toBe(true)
      const result = must(await rewind.rewindByFork(session.id, two.messageId, preview.token!))
      expect(result.prompt).toBe("make b")
      expect(read(root, "a.txt")).toBe("a1\n")
      expect(existsSync(join(root, "b.txt"))).toBe(false)
      const log = must(await rewind.transcript(result.childSessionId))
      expect(log.some((l) => l.parts.some((p) => p.text === "make b"))).toBe(false)
      const again = await rewind.rewindByFork(session.id, two.messageId, preview.token!)
      expect(again.ok ? "ok" : again.refusal.kind).toBe("token_used")
      expect(okValue(await rewind.listSessions()).length).toBe(2)
    } finally {
      await rewind.close()
    }
  })
})
