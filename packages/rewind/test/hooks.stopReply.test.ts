/**
 * The reply of a hook-mirrored turn (issue 27): Claude Code's Stop carries it in newer releases
 * (`last_assistant_message`), older ones only name the transcript, whose tail is read
 * (transcriptReply.ts). A missing, garbled or unreplied transcript never fails the hook: the turn
 * ends with no reply and the reason is logged. With a reply, `rewind fork` of the turn's prompt
 * succeeds through the built bin.
 */
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import type { SessionId } from "@rewind/contracts"
import { loadSession } from "@rewind/core"
import { claudeCodeEvent } from "../src/hooks/claudeCode.js"
import { hookSessionId } from "../src/hooks/hookEngine.js"
import { readProblems } from "../src/hooks/hookProblems.js"
import { runHook } from "../src/hooks/runHook.js"
import { lastAssistantText } from "../src/hooks/transcriptReply.js"
import { openRewind } from "../src/index.js"
import { cli, jsonLines, tempDir } from "./cliHarness.js"
import { twoTurnTranscript } from "./fixtures/claudeTranscript.js"
import { seedWorkspace } from "./fixtures/hookPayloads.js"
import { feedBin } from "./hookHarness.js"

const transcripts = mkdtempSync(join(tmpdir(), "rewind-transcripts-"))
afterAll(() => rmSync(transcripts, { recursive: true, force: true }))
let n = 0
const transcriptFile = (content: string) => {
  const path = join(transcripts, `t${n++}.jsonl`)
  writeFileSync(path, content)
  return path
}

const repliesOf = async (root: string, sessionId: SessionId) => {
  const rewind = await openRewind({ workspaceRoot: root, create: false })
  try {
    const state = await rewind.run(loadSession(sessionId))
    return [...state.messages.values()]
      .filter((m) => m.role === "assistant")
      .map((m) => ({
        id: m.id,
        text: (state.parts.get(m.id) ?? []).map((p) => p.text ?? "").join(""),
      }))
  } finally {
    await rewind.close()
  }
}

describe("the reply of a Claude Code turn", () => {
  it("is the last assistant text of the transcript's last turn, its blocks joined, tools skipped", () => {
    expect(lastAssistantText(transcriptFile(twoTurnTranscript()))).toEqual({
      text: "Added the line to notes.md.",
    })
    // A turn whose reply has not been written: nothing from the turn before is taken for it.
    const unanswered = transcriptFile(
      `${twoTurnTranscript()}${JSON.stringify({ type: "user", message: { content: "next" } })}\n`,
    )
    expect(lastAssistantText(unanswered)).toMatchObject({
      problem: expect.stringMatching(/no assistant text/),
    })
  })

  it("reads a long transcript from its end, bounded", () => {
    const filler = `${JSON.stringify({ type: "user", message: { content: "x".repeat(1000) } })}\n`.repeat(
      6000,
    )
    const path = transcriptFile(filler + twoTurnTranscript())
    expect(lastAssistantText(path)).toEqual({ text: "Added the line to notes.md." })
    // A tail of nothing but garbage (beyond the bound nothing is read) is a problem, not a throw.
    const garbage = transcriptFile("{not json\n".repeat(10))
    expect(lastAssistantText(garbage)).toMatchObject({ problem: expect.stringMatching(/not JSON/) })
    expect(lastAssistantText(join(transcripts, "missing.jsonl"))).toMatchObject({
      problem: expect.stringMatching(/cannot be read \(ENOENT\)/),
    })
  })

  it("uses last_assistant_message when the payload carries it, else the transcript path", () => {
    const base = { session_id: "s", cwd: "/w", hook_event_name: "Stop", transcript_path: "/t.jsonl" }
    expect(claudeCodeEvent({ ...base, last_assistant_message: "Done." })).toMatchObject({
      kind: "turn_end",
      reply: "Done.",
    })
    expect(claudeCodeEvent(base)).toMatchObject({
      kind: "turn_end",
      reply: undefined,
      transcriptPath: "/t.jsonl",
    })
  })

  it("a missing or garbled transcript ends the turn with no reply, and says why in the problem log", async () => {
    const root = tempDir()
    seedWorkspace(root)
    const send = (payload: Record<string, unknown>) =>
      runHook({
        agent: "claude-code",
        stdin: JSON.stringify({ session_id: "g", cwd: root, ...payload }),
        env: {},
        processCwd: root,
      })
    await send({ hook_event_name: "UserPromptSubmit", prompt: "one", transcript_path: "/nowhere.jsonl" })
    const missing = await send({ hook_event_name: "Stop", transcript_path: join(transcripts, "none.jsonl") })
    expect(missing.problems).toEqual([
      expect.stringMatching(/Stop: the transcript .* cannot be read \(ENOENT\)/),
    ])
    await send({ hook_event_name: "UserPromptSubmit", prompt: "two" })
    const garbled = await send({
      hook_event_name: "Stop",
      transcript_path: transcriptFile("\u0000\u0001garbage\n"),
    })
    expect(garbled.problems).toEqual([expect.stringMatching(/not JSON/)])
    const sessionId = hookSessionId("claude-code", "g")
    expect(await repliesOf(root, sessionId)).toEqual([])
    const rewind = await openRewind({ workspaceRoot: root, create: false })
    const state = await rewind.run(loadSession(sessionId))
    await rewind.close()
    expect([...state.turns.values()].map((t) => t.status)).toEqual(["completed", "completed"])
    expect(readProblems(join(root, ".rewind")).map((p) => p.message)).toEqual([
      expect.stringMatching(/ENOENT/),
      expect.stringMatching(/not JSON/),
    ])
  })

  it("a turn mirrored through the built bin, its reply read from the transcript, can be forked", async () => {
    const root = tempDir()
    seedWorkspace(root)
    const transcript = transcriptFile("")
    const common = { session_id: "forkable", transcript_path: transcript, cwd: root }
    const runs = await feedBin("claude-code", root, [
      { payload: { ...common, hook_event_name: "SessionStart", source: "startup" } },
      { payload: { ...common, hook_event_name: "UserPromptSubmit", prompt: "Create notes.md" } },
      {
        change: (r) => {
          writeFileSync(join(r, "notes.md"), "# Notes\n")
          appendFileSync(transcript, twoTurnTranscript())
        },
        what: "the agent writes notes.md and Claude Code its transcript",
      },
      { payload: { ...common, hook_event_name: "Stop", stop_hook_active: false } },
    ])
    expect(runs.map((r) => [r.code, r.stderr])).toEqual([
      [0, ""],
      [0, ""],
      [0, ""],
    ])
    const sessionId = hookSessionId("claude-code", "forkable")
    const replies = await repliesOf(root, sessionId)
    expect(replies.map((r) => r.text)).toEqual(["Added the line to notes.md."])
    const fork = await cli(["fork", replies[0]!.id, "--json", "--session", sessionId, "--workspace", root])
    expect(fork.stderr).toBe("")
    expect(fork.code).toBe(0)
    expect(jsonLines(fork.stdout)[0]).toMatchObject({ type: "fork", parentSessionId: sessionId })
  })
})
