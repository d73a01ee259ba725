// Honest store health through the facade (issue 21 items 4–10, issue 20 item 7): what the store
// says about itself matches what is on disk, and what it refuses it leaves untouched.
import * as fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { openRewind } from "../src/index.js"
import { sandbox, value } from "./storeFixture.js"

describe("a checkpoint path over the system's limits (item 7)", () => {
  it("is refused before anything is created: no directories, no incomplete operation, doctor clean", async () => {
    const box = sandbox()
    const rewind = await openRewind({ workspaceRoot: box.root, durability: "atomic" })
    try {
      const session = value(await rewind.createSession({ title: "long", cwd: box.root }))
      const { turnId } = value(await rewind.appendUserMessage(session.id, { text: "write" }))
      // A valid WorkspacePath of 4,082 characters: over PATH_MAX once put under the root.
      const path = [...Array.from({ length: 27 }, () => "d".repeat(150)), "f.txt"].join("/")
      const recorded = await rewind.recordFileMutation({
        sessionId: session.id,
        turnId,
        path,
        toolName: "write",
        before: "old\n",
        after: "new\n",
      })
      expect(recorded.recorded).toBe(true)
      if (!recorded.recorded) return
      const result = await rewind.rewindToCheckpoint(session.id, recorded.checkpoint.checkpointId)
      expect(result.ok).toBe(false)
      if (!result.ok) expect(result.refusal.message).toMatch(/longer|bytes long/)
      expect(fs.readdirSync(box.root)).toEqual([".rewind"])
      expect(await rewind.recover()).toEqual([])
      const report = await rewind.doctor()
      expect(report.problems).toEqual([])
    } finally {
      await rewind.close()
    }
  })
})
