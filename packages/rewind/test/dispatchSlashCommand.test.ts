import { describe, expect, it } from "@effect/vitest"
import {
  layerBackgroundTasks,
  MemoryArtifactStore,
  MemoryOperationJournal,
  MemorySessionStore,
  MemoryWorkspace,
} from "@rewind/adapter-memory"
import { IdGenerators } from "@rewind/core"
import { Layer } from "effect"
import { dispatchSlashCommand, openRewind } from "../src/index.js"
import { okValue } from "./okValue.js"

const layer = () =>
  Layer.mergeAll(
    MemorySessionStore.layer,
    MemoryArtifactStore.layer,
    MemoryWorkspace.layer(),
    IdGenerators.layerSequential("d"),
    layerBackgroundTasks,
    MemoryOperationJournal.layer,
  )

const must = <A>(
  o: { ok: true; value: A } | { ok: false; refusal: { kind: string; message: string } },
): A => {
  if (!o.ok) throw new Error(`${o.refusal.kind}: ${o.refusal.message}`)
  return o.value
}

describe("dispatchSlashCommand", () => {
  it("runs the parsed command and answers with an outcome", async () => {
    const rewind = await openRewind({ workspaceRoot: "/workspace", layer: layer() })
    const session = must(await rewind.createSession({ title: "t", cwd: "/workspace" }))
    const { messageId, turnId } = must(await rewind.appendUserMessage(session.id, { text: "write a" }))
    const r = okValue(
      await rewind.recordFileMutation({
        sessionId: session.id,
        turnId,
        path: "a.txt",
        toolName: "write",
        before: "old\n",
        after: "new\n",
      }),
    )
    expect(r.recorded).toBe(true)
    must(await rewind.completeTurn(session.id, turnId))

    const help = must(await dispatchSlashCommand(rewind, session.id, "/rewind help"))
    expect(help._tag).toBe("Help")
    const status = must(await dispatchSlashCommand(rewind, session.id, "/rewind"))
    expect(status._tag === "Status" && status.changes?.files.map((f) => f.path)).toEqual(["a.txt"])

    const latest = must(await dispatchSlashCommand(rewind, session.id, "/rewind latest"))
    expect(latest._tag === "Restored" && latest.result.files).toEqual([{ path: "a.txt", action: "restored" }])
    const again = await dispatchSlashCommand(rewind, session.id, "/rewind latest")
    expect(again.ok ? "ok" : again.refusal.kind).toBe("nothing_to_undo")

    const side = must(await dispatchSlashCommand(rewind, session.id, "/side what changed?"))
    expect(side._tag === "SideChat" && side.fork.command).toBe("side_chat")
    if (side._tag === "SideChat") {
      const log = must(await rewind.transcript(side.fork.childSessionId))
      expect(log.at(-1)?.parts[0]?.text).toBe("what changed?")
    }
    const conversation = must(
      await dispatchSlashCommand(rewind, session.id, `/rewind conversation ${messageId}`),
    )
    expect(conversation._tag).toBe("ConversationRewound")
    if (conversation._tag === "ConversationRewound") expect(conversation.removedMessageIds[0]).toBe(messageId)

    await rewind.close()
  })

  it("refuses what does not parse or is not available, with a helpful message", async () => {
    const rewind = await openRewind({ workspaceRoot: "/workspace", layer: layer() })
    const session = must(await rewind.createSession({ title: "t", cwd: "/workspace" }))
    const bad = await dispatchSlashCommand(rewind, session.id, "/rewind conversation")
    expect(bad.ok).toBe(false)
    if (!bad.ok) {
      expect(bad.refusal.kind).toBe("invalid_input")
      expect(bad.refusal.message).toContain("needs a message id")
    }
    const fork = await dispatchSlashCommand(rewind, session.id, "/fork latest")
    expect(fork.ok ? "ok" : fork.refusal.kind).toBe("no_checkpoint")
    if (!fork.ok) expect(fork.refusal.message).toBe("no workspace checkpoint is available yet")
    const missing = await dispatchSlashCommand(rewind, session.id, "/rewind code msg_nope")
    expect(missing.ok).toBe(false)
    await rewind.close()
  })
})
