/**
 * `rewind hook gemini-cli` (issue 27 item 2): Gemini CLI's documented payloads (fixtures/
 * hookPayloads.ts) mirror its session like Claude Code's do — BeforeAgent opens a turn with a
 * point, write_file / replace are checkpoints (paired by tool name and path: Gemini CLI's tool
 * events carry no call id), run_shell_command is followed by a point, AfterAgent records the reply
 * and completes the turn — and stdout is always the JSON the protocol parses.
 */
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { SessionId } from "@rewind/contracts"
import { loadSession, transcript } from "@rewind/core"
import { geminiCliEvent } from "../src/hooks/geminiCli.js"
import { hookSessionId } from "../src/hooks/hookEngine.js"
import { readProblems } from "../src/hooks/hookProblems.js"
import { openRewind } from "../src/index.js"
import { tempDir } from "./cliHarness.js"
import { geminiCliSession, seedWorkspace } from "./fixtures/hookPayloads.js"
import { feedInProcess, hookBin } from "./hookHarness.js"

const HOST = "6f1d2c3b-gem-4a5b-9c8d-7e6f5a4b3c2d"

const stateOf = async (root: string, sessionId: SessionId) => {
  const rewind = await openRewind({ workspaceRoot: root, create: false })
  try {
    return await rewind.run(loadSession(sessionId))
  } finally {
    await rewind.close()
  }
}

describe("rewind hook gemini-cli", () => {
  it("translates the documented payloads; a failed tool is one whose response carries error", () => {
    const base = { session_id: "g", transcript_path: "/t.json", cwd: "/w", timestamp: "2026-12-01T00:00:00Z" }
    expect(
      geminiCliEvent({
        ...base,
        hook_event_name: "BeforeTool",
        tool_name: "replace",
        tool_input: { file_path: "/w/a" },
      }),
    ).toMatchObject({ kind: "before_tool", effect: { kind: "file_write", paths: ["/w/a"] } })
    expect(
      geminiCliEvent({
        ...base,
        hook_event_name: "AfterTool",
        tool_name: "run_shell_command",
        tool_input: { command: "ls" },
        tool_response: { llmContent: "", error: { message: "exit 1" } },
      }),
    ).toMatchObject({ kind: "after_tool", effect: { kind: "shell" }, failed: true })
    expect(
      geminiCliEvent({ ...base, hook_event_name: "AfterAgent", prompt: "p", prompt_response: "r" }),
    ).toMatchObject({
      kind: "turn_end",
      reply: "r",
    })
    expect(geminiCliEvent({ ...base, hook_event_name: "BeforeModel", llm_request: {} })).toMatchObject({
      kind: "ignored",
    })
    expect(geminiCliEvent({ hook_event_name: "BeforeAgent", prompt: "x" })).toMatchObject({
      kind: "undecodable",
    })
  })

  it("mirrors a whole session: prompts and replies, checkpoints, points at prompts and after the shell", async () => {
    const root = tempDir()
    seedWorkspace(root)
    const results = await feedInProcess("gemini-cli", root, geminiCliSession(root))
    expect(results.every((r) => r.stdout === "{}\n")).toBe(true)
    const withProblems = results.filter((r) => r.problems.length > 0)
    expect(withProblems.map((r) => r.problems)).toEqual([
      [expect.stringMatching(/not JSON.*nothing recorded/)],
    ])

    const sessionId = hookSessionId("gemini-cli", HOST)
    const state = await stateOf(root, sessionId)
    expect([...state.turns.values()].map((t) => t.status)).toEqual(["completed", "completed", "completed"])
    expect(transcript(state).map((e) => [e.message.role, e.parts.map((p) => p.text ?? "").join("")])).toEqual(
      [
        ["user", "Create notes.md"],
        ["assistant", "Created notes.md."],
        ["user", "Add a line and run the script"],
        ["assistant", "Done."],
        ["user", "Remove the notes"],
        ["assistant", "Removed."],
      ],
    )
    expect(state.checkpoints.map((c) => [c.toolName, c.path, c.before._tag, c.after?._tag])).toEqual([
      ["write_file", "notes.md", "absent", "present"],
      ["replace", "notes.md", "present", "present"],
    ])
    const points = state.points.filter((p) => p.kind === "turn").map((p) => p.turnId)
    expect(points).toHaveLength(5)
    expect(points.filter((t) => t.includes(".shell."))).toHaveLength(2)
    expect(readProblems(join(root, ".rewind")).map((p) => p.agent)).toEqual(["gemini-cli"])
  })

  it("the built bin answers {} on stdout and exits 0, even for garbage", async () => {
    const root = tempDir()
    seedWorkspace(root)
    const garbage = await hookBin("gemini-cli", root, "")
    expect(garbage).toMatchObject({ code: 0, stdout: "{}\n" })
    expect(garbage.stderr).toMatch(/not JSON/)
    const start = await hookBin(
      "gemini-cli",
      root,
      JSON.stringify({
        session_id: "g1",
        transcript_path: "/t",
        cwd: root,
        hook_event_name: "SessionStart",
        timestamp: "x",
        source: "startup",
      }),
    )
    expect(start).toEqual({ code: 0, stdout: "{}\n", stderr: "" })
  })
})
