/**
 * The declared operations a host that sees a tool before and after it runs (an agent's hook)
 * uses: `declareWriteIntent`, `recordCheckpointFromIntent` and `runningTurn`, through the facade
 * over a real store (the same door the server and the hook adapters use).
 */
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import type { SessionId, TurnId } from "@rewind/contracts"
import { openRewind } from "../src/index.js"
import { okValue } from "./okValue.js"

const temps: Array<string> = []
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const open = async () => {
  const root = mkdtempSync(join(tmpdir(), "rewind-intent-"))
  temps.push(root)
  const rewind = await openRewind({ workspaceRoot: root, create: true })
  const session = okValue(await rewind.createSession({ title: "intents", cwd: root }))
  return { root, rewind, sessionId: session.id as SessionId }
}

describe("write intents as operations of the declared service", () => {
  it("runningTurn follows the turns; a checkpoint is recorded from the intent declared before the write", async () => {
    const { root, rewind, sessionId } = await open()
    try {
      expect(okValue(await rewind.runningTurn(sessionId))).toBeUndefined()
      const { turnId } = okValue(await rewind.appendUserMessage(sessionId, { text: "edit" }))
      expect(okValue(await rewind.runningTurn(sessionId))).toBe(turnId)

      writeFileSync(join(root, "a.txt"), "before\n")
      const intentId = `${turnId}.pre.call1` as TurnId
      const declared = okValue(await rewind.declareWriteIntent(sessionId, intentId, ["./a.txt", "new.txt"]))
      expect(declared.entries.map((e) => [e.path, e.preImage.state])).toEqual([
        ["a.txt", "file"],
        ["new.txt", "absent"],
      ])
      writeFileSync(join(root, "a.txt"), "after\n")
      writeFileSync(join(root, "new.txt"), "created\n")

      const edited = okValue(
        await rewind.recordCheckpointFromIntent({
          sessionId,
          turnId,
          intentId,
          path: "a.txt",
          toolName: "Edit",
        }),
      )
      expect(edited).toMatchObject({ recorded: true, checkpoint: { path: "a.txt", toolName: "Edit" } })
      // Another intent id of the same turn: the turn's newest intent naming the path is used.
      const created = okValue(
        await rewind.recordCheckpointFromIntent({
          sessionId,
          turnId,
          intentId: `${turnId}.pre.other` as TurnId,
          path: "new.txt",
          toolName: "Write",
        }),
      )
      expect(created).toMatchObject({
        recorded: true,
        checkpoint: { path: "new.txt", before: { _tag: "absent" } },
      })

      // The checkpoints restore what the intent stored.
      const checkpoints = okValue(await rewind.listCheckpoints(sessionId))
      expect(checkpoints.map((c) => c.path)).toEqual(["a.txt", "new.txt"])
      okValue(await rewind.completeTurn(sessionId, turnId, "completed"))
      expect(okValue(await rewind.runningTurn(sessionId))).toBeUndefined()
    } finally {
      await rewind.close()
    }
  })

  it("no intent, a symlink before, or a protected path: nothing recorded, and the answer says why", async () => {
    const { root, rewind, sessionId } = await open()
    try {
      const { turnId } = okValue(await rewind.appendUserMessage(sessionId, { text: "edit" }))
      writeFileSync(join(root, "b.txt"), "b\n")
      const missing = okValue(
        await rewind.recordCheckpointFromIntent({
          sessionId,
          turnId,
          intentId: `${turnId}.pre.none` as TurnId,
          path: "b.txt",
          toolName: "Edit",
        }),
      )
      expect(missing).toMatchObject({ recorded: false, warning: { reason: "intent_not_found" } })

      symlinkSync("b.txt", join(root, "link.txt"))
      const intentId = `${turnId}.pre.link` as TurnId
      okValue(await rewind.declareWriteIntent(sessionId, intentId, ["link.txt"]))
      const linked = okValue(
        await rewind.recordCheckpointFromIntent({
          sessionId,
          turnId,
          intentId,
          path: "link.txt",
          toolName: "Edit",
        }),
      )
      expect(linked).toMatchObject({ recorded: false, warning: { reason: "invalid_input" } })
      expect(linked.recorded ? "" : linked.warning.message).toMatch(/symbolic link/)

      const refused = await rewind.declareWriteIntent(sessionId, intentId, [".git/config"])
      expect(refused).toMatchObject({ ok: false, refusal: { kind: "unsafe_files" } })
      const badPath = await rewind.declareWriteIntent(sessionId, intentId, ["../outside.txt"])
      expect(badPath).toMatchObject({ ok: false, refusal: { kind: "invalid_input" } })
      expect(okValue(await rewind.listCheckpoints(sessionId))).toEqual([])
    } finally {
      await rewind.close()
    }
  })
})
