/**
 * `Rewind.diffPoint` on the embedded default: each kind of difference (content, mode only, link
 * target, tombstone brought back, untracked file), why a path has no unified diff, and refusals.
 */
import { execFileSync } from "node:child_process"
import { chmodSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import type { PointId, SessionId, TurnId } from "@rewind/contracts"
import { openRewind, type Rewind } from "../src/index.js"
import { okValue } from "./okValue.js"

const temps: Array<string> = []
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const captured = async (rewind: Rewind, sessionId: SessionId, turn: string): Promise<PointId> => {
  const outcome = okValue(await rewind.capturePoint(sessionId, turn as TurnId))
  if (outcome._tag !== "Captured") throw new Error(outcome.reason)
  return outcome.point.pointId
}

describe("diffPoint", () => {
  it("reports content, mode, link and tombstone differences, each with the right patch or reason", async () => {
    const root = mkdtempSync(join(tmpdir(), "rewind-diff-"))
    temps.push(root)
    const file = (path: string, content: string | Uint8Array) => writeFileSync(join(root, path), content)
    file("same.txt", "unchanged\n")
    file("text.txt", "alpha\nbeta\n")
    file("run.sh", "echo hi\n")
    chmodSync(join(root, "run.sh"), 0o644)
    file("big.txt", "x".repeat(64))
    file("comeback.txt", "first life\n")
    symlinkSync("same.txt", join(root, "link"))
    const rewind = await openRewind({ workspaceRoot: root, durability: "atomic" })
    try {
      const session = await rewind.createSession({ title: "diff", cwd: root })
      if (!session.ok) throw new Error(session.refusal.message)
      const sessionId = session.value.id
      await captured(rewind, sessionId, "t1")
      unlinkSync(join(root, "comeback.txt"))
      const pointId = await captured(rewind, sessionId, "t2") // records comeback.txt as a tombstone

      file("text.txt", "alpha\ngamma\n")
      chmodSync(join(root, "run.sh"), 0o755)
      file("big.txt", "y".repeat(64))
      file("comeback.txt", "second life\n")
      file("fresh.txt", "never captured\n")
      unlinkSync(join(root, "link"))
      symlinkSync("text.txt", join(root, "link"))

      const diff = await rewind.diffPoint(sessionId, pointId, { maxPatchBytes: 32 })
      if (!diff.ok) throw new Error(diff.refusal.message)
      const byPath = new Map(diff.value.entries.map((e) => [e.path as string, e]))
      expect([...byPath.keys()]).toEqual([
        "big.txt",
        "comeback.txt",
        "fresh.txt",
        "link",
        "run.sh",
        "text.txt",
      ])
      expect(diff.value.unchanged).toBe(1)
      expect(diff.value.skipped).toEqual([])

      expect(byPath.get("text.txt")).toMatchObject({ change: "modified", untracked: false })
      expect(byPath.get("text.txt")!.patch).toMatch(/@@ -1,2 \+1,2 @@\n alpha\n-beta\n\+gamma\n/)
      expect(byPath.get("run.sh")).toMatchObject({
        change: "modified",
        noPatch: "mode_only",
        point: { kind: "file", mode: 0o644 },
        now: { kind: "file", mode: 0o755 },
      })
      expect(byPath.get("big.txt")).toMatchObject({ change: "modified", noPatch: "too_large" })
      expect(byPath.get("link")).toMatchObject({
        change: "modified",
        noPatch: "link",
        point: { kind: "link", target: "same.txt" },
        now: { kind: "link", target: "text.txt" },
      })
      // A tombstone in the point: the file is "added", but the point does know the path.
      expect(byPath.get("comeback.txt")).toMatchObject({ change: "added", untracked: false, point: null })
      expect(byPath.get("comeback.txt")!.patch).toContain("+second life")
      expect(byPath.get("fresh.txt")).toMatchObject({ change: "added", untracked: true })

      const noPatches = await rewind.diffPoint(sessionId, pointId, { patches: false })
      expect(noPatches.ok && noPatches.value.entries.every((e) => e.noPatch === "disabled")).toBe(true)

      const missing = await rewind.diffPoint(sessionId, "pt-nothing" as PointId)
      expect(missing.ok ? undefined : missing.refusal.kind).toBe("not_found")
      const nobody = await rewind.diffPoint("ses_nobody" as SessionId, pointId)
      expect(nobody.ok ? undefined : nobody.refusal.kind).toBe("session_not_found")
    } finally {
      await rewind.close()
    }
  })

  it("leaves out, unread and with the capture's words, a file over the capture's cap and a FIFO", async () => {
    const root = mkdtempSync(join(tmpdir(), "rewind-diff-"))
    temps.push(root)
    writeFileSync(join(root, "data.bin"), "small")
    const rewind = await openRewind({ workspaceRoot: root, durability: "atomic" })
    try {
      const session = await rewind.createSession({ title: "diff", cwd: root })
      if (!session.ok) throw new Error(session.refusal.message)
      const pointId = await captured(rewind, session.value.id, "t1")
      // Grown past the 16 MiB cap: a capture leaves it out (keeping its previous entry), so the
      // diff neither reads it (it could be gigabytes) nor calls it changed.
      writeFileSync(join(root, "data.bin"), Buffer.alloc(16 * 1024 * 1024 + 1))
      execFileSync("mkfifo", [join(root, "pipe")])
      const diff = await rewind.diffPoint(session.value.id, pointId)
      if (!diff.ok) throw new Error(diff.refusal.message)
      expect(diff.value.entries).toEqual([])
      expect(diff.value.skipped).toEqual([
        {
          path: "data.bin",
          reason: "over_size_limit",
          detail: `${16 * 1024 * 1024 + 1} bytes > ${16 * 1024 * 1024}`,
        },
        {
          path: "pipe",
          reason: "not_a_regular_file",
          detail: "a FIFO, socket or device, not a regular file",
        },
      ])
    } finally {
      await rewind.close()
    }
  })
})
