/**
 * The demo's scripted "agent": it runs turns whose tools write real files in the workspace and
 * hooks Rewind in where a host would — the user's message at turn start, `recordFileMutation`
 * after each write, the reply and `completeTurnWithBoundary` at turn end.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import type { Checkpoint, MessageId, Outcome, SessionId, TurnId } from "@rewind/contracts"
import type { Rewind } from "../openRewind.js"

/** The value of an outcome the script expects to succeed; a refusal here is a bug in the script. */
export const expectOk = <A>(outcome: Outcome<A>): A => {
  if (!outcome.ok) throw new Error(`unexpected refusal (${outcome.refusal.kind}): ${outcome.refusal.message}`)
  return outcome.value
}

export interface ScriptedWrite {
  readonly path: string
  readonly content: string
}

export interface TurnResult {
  readonly userMessageId: MessageId
  readonly turnId: TurnId
  readonly replyId: MessageId
  readonly checkpoints: ReadonlyArray<Checkpoint>
}

export const runTurn = async (
  rewind: Rewind,
  sessionId: SessionId,
  prompt: string,
  writes: ReadonlyArray<ScriptedWrite>,
  reply: string,
  onCheckpoint: (checkpoint: Checkpoint) => void = () => {},
): Promise<TurnResult> => {
  const { messageId, turnId } = expectOk(await rewind.appendUserMessage(sessionId, { text: prompt }))
  const checkpoints: Array<Checkpoint> = []
  for (const write of writes) {
    const file = join(rewind.workspaceRoot, write.path)
    // Before the tool runs: read what the file holds, so the checkpoint can put it back.
    const before = existsSync(file) ? new Uint8Array(readFileSync(file)) : null
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, write.content)
    // After the write: record the mutation. It never throws for a store problem; it warns.
    const result = expectOk(
      await rewind.recordFileMutation({
        sessionId,
        turnId,
        path: write.path,
        toolName: "write_file",
        before,
        after: write.content,
      }),
    )
    if (!result.recorded) throw new Error(`checkpoint not recorded: ${result.warning.message}`)
    checkpoints.push(result.checkpoint)
    onCheckpoint(result.checkpoint)
  }
  const { messageId: replyId } = expectOk(
    await rewind.appendReply(sessionId, { turnId, parts: [{ kind: "text", text: reply }] }),
  )
  // At turn end: complete it and pin its fork boundary.
  expectOk(await rewind.completeTurnWithBoundary(sessionId, turnId))
  return { userMessageId: messageId, turnId, replyId, checkpoints }
}
