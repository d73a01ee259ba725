// Points, diff, restore with a token, redo and GC through the Promise facade.
import type { SessionId, TurnId } from "@rewind/contracts"
import { openRewind } from "rewind"

export async function pointsTour(workspaceRoot: string, sessionId: SessionId, turnId: TurnId): Promise<void> {
  const rewind = await openRewind({ workspaceRoot })
  try {
    // Before the model request or tool run of a turn: capture a point (shell changes included).
    const capture = await rewind.capturePoint(sessionId, turnId, {
      onProgress: (p) => p.phase === "hash" && console.log(`hashed ${p.hashed}/${p.toHash}`),
      signal: AbortSignal.timeout(60_000),
    })
    if (!capture.ok) throw new Error(capture.refusal.message) // options its Schemas refuse
    const captured = capture.value
    if (captured._tag === "NotCaptured") {
      console.warn(`this turn has no point: ${captured.reason}`) // the agent carries on
      return
    }
    const pointId = captured.point.pointId

    // Later: what changed since then, with a unified diff per text file.
    const diff = await rewind.diffPoint(sessionId, pointId)
    if (diff.ok) for (const e of diff.value.entries) console.log(e.change, e.path, e.patch ?? "")

    // Restoring needs the preview's token: proof that someone saw the plan (5 minutes, single use).
    const preview = await rewind.previewPointRestore(sessionId, pointId)
    if (!preview.ok || preview.value.token === undefined) return
    const restored = await rewind.restorePoint(sessionId, pointId, preview.value.token)
    if (!restored.ok) console.log(`not restored (${restored.refusal.kind}): ${restored.refusal.message}`)

    // Undo the session's last file-writing rewind (cascade, direct restore, applied preview).
    const redone = await rewind.redo(sessionId)
    if (!redone.ok && redone.refusal.kind !== "nothing_to_undo") console.log(redone.refusal.message)

    // After a crash: finish what was interrupted.
    const pending = await rewind.recover()
    for (const op of pending.ok ? pending.value : []) {
      if (op.resolvable) await rewind.resolveOperation(op.record.intent.operationId, "rollback")
    }

    // Reclaim space: what a collection would delete, then collect (redo and recover data is kept).
    const dry = await rewind.previewCleanup({ retention: { keepLastPoints: 20 } })
    if (dry.ok && dry.value.swept && dry.value.deleted.length > 0)
      await rewind.cleanup({ retention: { keepLastPoints: 20 } })
  } finally {
    await rewind.close()
  }
}
