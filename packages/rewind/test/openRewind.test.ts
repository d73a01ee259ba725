import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import {
  layerBackgroundTasks,
  MemoryArtifactStore,
  MemoryOperationJournal,
  MemorySessionStore,
  MemoryWorkspace,
} from "@rewind/adapter-memory"
import { IdGenerators } from "@rewind/core"
import { Layer } from "effect"
import { openRewind, type Rewind, StoreMissing } from "../src/index.js"
import { okValue } from "./okValue.js"

const temps: Array<string> = []
const tempWorkspace = () => {
  const dir = mkdtempSync(join(tmpdir(), "rewind-facade-"))
  temps.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const value = <A>(
  o: { ok: true; value: A } | { ok: false; refusal: { kind: string; message: string } },
): A => {
  if (!o.ok) throw new Error(`refused: ${o.refusal.kind}: ${o.refusal.message}`)
  return o.value
}

/** One agent turn that writes `path` (through the real filesystem) and records the checkpoint. */
const agentTurn = async (rewind: Rewind, sessionId: string, root: string, path: string, content: string) => {
  const sid = sessionId as Parameters<Rewind["transcript"]>[0]
  const { messageId, turnId } = value(await rewind.appendUserMessage(sid, { text: `write ${path}` }))
  const file = join(root, path)
  const before = existsSync(file) ? readFileSync(file) : null
  writeFileSync(file, content)
  const recorded = okValue(
    await rewind.recordFileMutation({
      sessionId: sid,
      turnId,
      path,
      toolName: "write",
      before: before === null ? null : new Uint8Array(before),
      after: content,
    }),
  )
  expect(recorded.recorded).toBe(true)
  value(await rewind.appendReply(sid, { turnId, parts: [{ kind: "text", text: `wrote ${path}` }] }))
  value(await rewind.completeTurnWithBoundary(sid, turnId))
  return { messageId, turnId }
}

describe("openRewind on the embedded default", () => {
  it("records checkpoints, rewinds files and conversation, and persists across opens", async () => {
    const root = tempWorkspace()
    const rewind = await openRewind({ workspaceRoot: root, durability: "atomic" })
    expect(rewind.dir).toBe(join(root, ".rewind"))
    expect(existsSync(join(root, ".rewind", "rewind.db"))).toBe(true)
    const session = value(await rewind.createSession({ title: "demo", cwd: root }))
    await agentTurn(rewind, session.id, root, "a.txt", "one")
    const second = await agentTurn(rewind, session.id, root, "a.txt", "two")
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("two")

    const preview = value(
      await rewind.previewFileRewind({ sessionId: session.id, messageId: second.messageId }),
    )
    expect(preview.canApply).toBe(true)
    const cascade = value(await rewind.rewindCascade(session.id, second.messageId, "both"))
    expect(cascade.checkpointIds).toHaveLength(1)
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("one")
    const log = value(await rewind.transcript(session.id))
    expect(log.map((e) => e.message.role)).toEqual(["user", "assistant", "system"].slice(0, log.length))
    expect(log.some((e) => e.message.id === second.messageId)).toBe(false)
    await rewind.close()

    const again = await openRewind({ workspaceRoot: root, create: false })
    const sessions = okValue(await again.listSessions())
    expect(sessions.map((s) => s.sessionId)).toEqual([session.id])
    const doctor = okValue(await again.doctor())
    expect(doctor.ok).toBe(true)
    expect(doctor.database?.ok).toBe(true)
    expect(doctor.artifacts.checked).toBeGreaterThan(0)
    await again.close()
  })

  it("returns refusals as values and rejects infrastructure errors with the typed error", async () => {
    const root = tempWorkspace()
    const rewind = await openRewind({ workspaceRoot: root, durability: "atomic" })
    const missing = await rewind.transcript("ses_nope" as Parameters<Rewind["transcript"]>[0])
    expect(missing.ok).toBe(false)
    if (!missing.ok) expect(missing.refusal.kind).toBe("session_not_found")
    await rewind.close()

    const elsewhere = tempWorkspace()
    const error = await openRewind({ workspaceRoot: elsewhere, create: false }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(StoreMissing)
    expect(existsSync(join(elsewhere, ".rewind"))).toBe(false)
  })

  it("an aborted signal interrupts the call", async () => {
    const root = tempWorkspace()
    const rewind = await openRewind({ workspaceRoot: root, durability: "atomic" })
    const controller = new AbortController()
    controller.abort()
    await expect(rewind.listSessions({ signal: controller.signal })).rejects.toBeDefined()
    // The instance stays usable after an interrupted call.
    expect(okValue(await rewind.listSessions())).toEqual([])
    await rewind.close()
  })

  it("doctor reports a blob whose bytes no longer match its address", async () => {
    const root = tempWorkspace()
    const rewind = await openRewind({ workspaceRoot: root, durability: "atomic" })
    const session = value(await rewind.createSession({ title: "demo", cwd: root }))
    await agentTurn(rewind, session.id, root, "b.txt", "content that will rot")
    // Blobs live in the store's database: damage one row behind the store's back.
    const { default: Database } = await import("better-sqlite3")
    const db = new Database(join(root, ".rewind", "rewind.db"))
    try {
      db.pragma("busy_timeout = 5000")
      const changed = db
        .prepare("update blobs set content = x'00', encoding = 0 where id = (select min(id) from blobs)")
        .run().changes
      expect(changed).toBe(1)
    } finally {
      db.close()
    }
    const report = okValue(await rewind.doctor())
    expect(report.ok).toBe(false)
    expect(report.artifacts.bad).toHaveLength(1)
    await rewind.close()
  })
})

describe("openRewind with an injected layer", () => {
  it("runs the same commands on the memory adapters and creates no files", async () => {
    const root = tempWorkspace()
    const layer = Layer.mergeAll(
      MemorySessionStore.layer,
      MemoryArtifactStore.layer,
      MemoryWorkspace.layer(),
      IdGenerators.layerSequential("f"),
      layerBackgroundTasks,
      MemoryOperationJournal.layer,
    )
    const rewind = await openRewind({ workspaceRoot: root, layer })
    expect(rewind.dir).toBeUndefined()
    const session = value(await rewind.createSession({ title: "mem", cwd: "/workspace" }))
    expect(session.id).toBe("ses_f_1")
    const { messageId } = value(await rewind.appendUserMessage(session.id, { text: "hi" }))
    const rewound = value(await rewind.rewindConversation(session.id, messageId))
    expect(rewound.removedMessageIds).toEqual([messageId])
    expect(existsSync(join(root, ".rewind"))).toBe(false)
    await rewind.close()
  })
})
