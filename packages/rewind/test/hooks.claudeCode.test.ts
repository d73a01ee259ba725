/**
 * `rewind hook claude-code` (issue 27 item 1): payload sequences shaped as Claude Code's hooks
 * reference defines them (fixtures/hookPayloads.ts) mirror the agent's session into the store —
 * one Rewind session per host session id, the prompts, a checkpoint per file tool (before-content
 * kept in the store between the two hook processes, paired by tool_use_id), a point at each
 * prompt and after each Bash — and nothing ever fails the agent.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { SessionId } from "@rewind/contracts"
import { loadSession } from "@rewind/core"
import { claudeCodeEvent } from "../src/hooks/claudeCode.js"
import { hookSessionId } from "../src/hooks/hookEngine.js"
import { readProblems } from "../src/hooks/hookProblems.js"
import { runHook } from "../src/hooks/runHook.js"
import { openRewind } from "../src/index.js"
import { cli, jsonLines, tempDir } from "./cliHarness.js"
import { claudeCodeSession, seedWorkspace } from "./fixtures/hookPayloads.js"
import { feedInProcess, hookBin } from "./hookHarness.js"

const HOST = "0b9c3f52-8a7e-4d8e-9f61-2c4c1a7e5d10"

const stateOf = async (root: string, sessionId: SessionId) => {
  const rewind = await openRewind({ workspaceRoot: root, create: false })
  try {
    return await rewind.run(loadSession(sessionId))
  } finally {
    await rewind.close()
  }
}

describe("rewind hook claude-code", () => {
  it("translates the documented payloads and ignores fields it does not know", () => {
    const pre = claudeCodeEvent({
      session_id: "s",
      transcript_path: "/t.jsonl",
      cwd: "/w",
      hook_event_name: "PreToolUse",
      tool_name: "MultiEdit",
      tool_input: { file_path: "/w/a.ts", edits: [] },
      tool_use_id: "toolu_9",
      brand_new_field: true,
    })
    expect(pre).toMatchObject({
      kind: "before_tool",
      effect: { kind: "file_write", paths: ["/w/a.ts"] },
      pairKey: "toolu_9",
    })
    expect(
      claudeCodeEvent({
        session_id: "s",
        cwd: "/w",
        hook_event_name: "PreToolUse",
        tool_name: "NotebookEdit",
        tool_input: { notebook_path: "/w/n.ipynb" },
      }),
    ).toMatchObject({ effect: { kind: "file_write", paths: ["/w/n.ipynb"] } })
    expect(
      claudeCodeEvent({
        session_id: "s",
        cwd: "/w",
        hook_event_name: "PostToolUseFailure",
        tool_name: "Bash",
        tool_input: {},
        tool_use_id: "t",
      }),
    ).toMatchObject({ kind: "after_tool", effect: { kind: "shell" }, failed: true })
    expect(
      claudeCodeEvent({ session_id: "s", cwd: "/w", hook_event_name: "PreCompact", trigger: "auto" }),
    ).toMatchObject({
      kind: "ignored",
    })
    expect(claudeCodeEvent({ cwd: "/w", hook_event_name: "Stop" })).toMatchObject({ kind: "undecodable" })
    expect(claudeCodeEvent([1, 2])).toMatchObject({ kind: "undecodable" })
  })

  it("mirrors a whole session: prompts, checkpoints paired by tool_use_id, points at prompts and after Bash", async () => {
    const root = tempDir()
    seedWorkspace(root)
    const results = await feedInProcess("claude-code", root, claudeCodeSession(root))
    // Every run ends normally; only the malformed payload has something to say.
    expect(results.every((r) => r.stdout === "")).toBe(true)
    const withProblems = results.filter((r) => r.problems.length > 0)
    expect(withProblems).toHaveLength(1)
    expect(withProblems[0]!.problems[0]).toMatch(/not JSON.*nothing recorded/)
    expect(withProblems[0]!.handled).toBe(false)

    const sessionId = hookSessionId("claude-code", HOST)
    expect(sessionId).toBe(`claude-code.${HOST}`)
    const state = await stateOf(root, sessionId)
    const prompts = [...state.turns.values()].map((t) => {
      const parts = state.parts.get(t.userMessageId) ?? []
      return { text: parts[0]?.text, status: t.status }
    })
    expect(prompts).toEqual([
      { text: "Create notes.md", status: "completed" },
      { text: "Add a line and run the script", status: "completed" },
      { text: "Remove the notes", status: "completed" },
    ])
    // Write and Edit are checkpoints; the failed Write to locked/x.txt left nothing to record.
    expect(state.checkpoints.map((c) => [c.toolName, c.path, c.before._tag, c.after?._tag])).toEqual([
      ["Write", "notes.md", "absent", "present"],
      ["Edit", "notes.md", "present", "present"],
    ])
    const turnIds = [...state.turns.keys()]
    expect(state.checkpoints.map((c) => c.turnId)).toEqual([turnIds[0], turnIds[1]])
    // A point at each prompt, and one after each Bash (two).
    const points = state.points.filter((p) => p.kind === "turn").map((p) => p.turnId)
    expect(points).toHaveLength(5)
    expect(points.filter((t) => turnIds.includes(t))).toEqual(turnIds)
    expect(points.filter((t) => t.includes(".shell."))).toHaveLength(2)
    // The malformed payload is kept for `rewind status`.
    const logged = readProblems(join(root, ".rewind"))
    expect(logged.map((p) => p.message)).toEqual([expect.stringMatching(/payload is not JSON/)])
  })

  it("a resumed session (same session_id) finds its own Rewind session; another id gets its own", async () => {
    const root = tempDir()
    seedWorkspace(root)
    const event = (id: string, hook_event_name: string, extra = {}) =>
      JSON.stringify({ session_id: id, transcript_path: "/t", cwd: root, hook_event_name, ...extra })
    for (const stdin of [
      event("first", "SessionStart", { source: "startup" }),
      event("first", "UserPromptSubmit", { prompt: "one" }),
      event("first", "Stop", { last_assistant_message: "Done." }),
      event("first", "SessionStart", { source: "resume" }),
      event("first", "UserPromptSubmit", { prompt: "two" }),
      event("forked", "SessionStart", { source: "resume" }),
      event("forked", "UserPromptSubmit", { prompt: "three" }),
    ]) {
      expect((await runHook({ agent: "claude-code", stdin, env: {}, processCwd: root })).problems).toEqual([])
    }
    const first = await stateOf(root, hookSessionId("claude-code", "first"))
    const forked = await stateOf(root, hookSessionId("claude-code", "forked"))
    expect(first.turns.size).toBe(2)
    expect(forked.turns.size).toBe(1)
  })

  it("a file tool before any prompt gets a turn of its own; a path outside the workspace is reported, not recorded", async () => {
    const root = tempDir()
    seedWorkspace(root)
    const outside = tempDir()
    const tool = (hook_event_name: string, file: string) =>
      JSON.stringify({
        session_id: "late",
        cwd: root,
        hook_event_name,
        tool_name: "Write",
        tool_input: { file_path: file, content: "x" },
        tool_use_id: `toolu_${file.length}`,
      })
    await runHook({
      agent: "claude-code",
      stdin: tool("PreToolUse", join(root, "a.txt")),
      env: {},
      processCwd: root,
    })
    const { writeFileSync } = await import("node:fs")
    writeFileSync(join(root, "a.txt"), "x")
    await runHook({
      agent: "claude-code",
      stdin: tool("PostToolUse", join(root, "a.txt")),
      env: {},
      processCwd: root,
    })
    const away = await runHook({
      agent: "claude-code",
      stdin: tool("PreToolUse", join(outside, "z.txt")),
      env: {},
      processCwd: root,
    })
    expect(away.problems[0]).toMatch(/outside the workspace/)
    const state = await stateOf(root, hookSessionId("claude-code", "late"))
    expect(state.turns.size).toBe(1)
    expect(state.checkpoints.map((c) => c.path)).toEqual(["a.txt"])
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("x")
  })

  it("the built bin exits 0 whatever it is fed, and says what went wrong on stderr", async () => {
    const root = tempDir()
    seedWorkspace(root)
    const garbage = await hookBin("claude-code", root, "{not json")
    expect(garbage).toMatchObject({ code: 0, stdout: "" })
    expect(garbage.stderr).toMatch(/not JSON.*nothing recorded/)
    // Nothing recorded: not even a store was created for it.
    const { existsSync } = await import("node:fs")
    expect(existsSync(join(root, ".rewind"))).toBe(false)
    const wrongShape = await hookBin("claude-code", root, JSON.stringify({ hook_event_name: "Stop" }))
    expect(wrongShape.code).toBe(0)
    expect(wrongShape.stderr).toMatch(/not a Claude Code hook payload/)
    const prompt = await hookBin(
      "claude-code",
      root,
      JSON.stringify({ session_id: "bin", cwd: root, hook_event_name: "UserPromptSubmit", prompt: "hi" }),
    )
    expect(prompt).toEqual({ code: 0, stdout: "", stderr: "" })
    expect(existsSync(join(root, ".rewind"))).toBe(true)
    // With a store, what a hook could not do is kept for `rewind status`.
    expect((await hookBin("claude-code", root, "[1,")).code).toBe(0)
    const status = await cli(["status", "--json"], root)
    const problems = jsonLines(status.stdout).find((l) => l.type === "hook_problems")
    expect(problems).toMatchObject({ count: 1, recent: [{ agent: "claude-code", event: "(unparsed)" }] })
    expect((await cli(["status"], root)).stdout).toMatch(
      /hooks +1 problem\(s\) logged[\s\S]*payload is not JSON/,
    )
  })
})
