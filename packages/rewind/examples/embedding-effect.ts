// Embedding Rewind in an Effect program: the core commands over the embedded default layer.
import { appendUserMessage, completeTurnWithBoundary, createSession, recordFileMutation } from "@rewind/core"
import { Effect } from "effect"
import { layerEmbedded } from "rewind"

export const oneTurn = (workspaceRoot: string) =>
  Effect.gen(function* () {
    const session = yield* createSession({ title: "effect host", cwd: workspaceRoot })
    const { turnId } = yield* appendUserMessage(session.id, { text: "Create notes.md" })
    // After the tool wrote the file, record what it was before and what it is now.
    const result = yield* recordFileMutation({
      sessionId: session.id,
      turnId,
      path: "notes.md",
      toolName: "write",
      before: null,
      after: "# Notes\n",
    })
    yield* completeTurnWithBoundary(session.id, turnId)
    return result
  }).pipe(Effect.provide(layerEmbedded({ workspaceRoot })))
