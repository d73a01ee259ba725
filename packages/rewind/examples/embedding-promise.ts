// Embedding Rewind with Promises: the three places a host hooks in during an agent turn.
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { openRewind } from "rewind"

export async function runOneTurn(workspaceRoot: string): Promise<void> {
  // The embedded default: SQLite + blobs under <workspaceRoot>/.rewind.
  const rewind = await openRewind({ workspaceRoot })
  try {
    const session = await rewind.createSession({ title: "fix the tests", cwd: workspaceRoot })
    if (!session.ok) throw new Error(session.refusal.message)
    const sessionId = session.value.id

    // Turn start: the user's message opens a turn.
    const started = await rewind.appendUserMessage(sessionId, { text: "Rename greet to hello" })
    if (!started.ok) throw new Error(started.refusal.message)
    const { turnId } = started.value

    // Before a tool runs: read what the file holds now (null when it does not exist).
    const path = "src/greet.ts"
    const file = join(workspaceRoot, path)
    const before = existsSync(file) ? new Uint8Array(readFileSync(file)) : null

    // The tool runs (here: a plain write).
    const after = 'export const hello = (name: string) => "Hello, " + name\n'
    writeFileSync(file, after)

    // After a write: record the checkpoint. It never rejects for a store problem; it warns.
    const recorded = await rewind.recordFileMutation({
      sessionId,
      turnId,
      path,
      toolName: "edit",
      before,
      after,
    })
    if (!recorded.ok) console.warn(`no checkpoint: ${recorded.refusal.message}`)
    else if (!recorded.value.recorded) console.warn(`no checkpoint: ${recorded.value.warning.message}`)

    // Turn end: the reply, then complete the turn (pinning its fork boundary).
    await rewind.appendReply(sessionId, { turnId, parts: [{ kind: "text", text: "Renamed." }] })
    await rewind.completeTurnWithBoundary(sessionId, turnId)

    // Later: undo the turn's files and conversation, with a deadline.
    const rewound = await rewind.rewindCascade(sessionId, started.value.messageId, "both", {
      signal: AbortSignal.timeout(30_000),
    })
    if (!rewound.ok) console.log(`not rewound (${rewound.refusal.kind}): ${rewound.refusal.message}`)
  } finally {
    await rewind.close()
  }
}
