/**
 * Issue 27 acceptance, on disk through the BUILT binary: each adapter is fed its agent's
 * documented payload sequence (fixtures/hookPayloads.ts: Bash edits, a tool that fails, a payload
 * with unknown fields, malformed JSON) by `rewind hook <agent>` processes, and again by the native
 * hook client's installed command (same answers to the agent, same end state); then `rewind timeline`
 * shows the turns with shell changes, `rewind diff --turn 2` what changed since, and
 * `rewind restore --turn 2` (preview, token, rescue point) puts every file back as it was before
 * turn 2 — Bash-made changes included, `.git` and ignored files untouched — and `rewind redo`
 * brings the state back. A restore refuses files another session changed since.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { HookAgent } from "../src/hooks/hookEvent.js"
import { cli, jsonLines, tempDir } from "./cliHarness.js"
import {
  beforeTurn2,
  claudeCodeSession,
  geminiCliSession,
  type Step,
  seedWorkspace,
} from "./fixtures/hookPayloads.js"
import { feedBin, feedInProcess, HOOK_CLIENTS, type HookRun, hookBin, serversStarted } from "./hookHarness.js"

const snapshot = (root: string, paths: ReadonlyArray<string>) =>
  Object.fromEntries(
    paths.map((p) => [p, existsSync(join(root, p)) ? readFileSync(join(root, p), "utf8") : null]),
  )

const cases: ReadonlyArray<[HookAgent, (root: string) => ReadonlyArray<Step>, string]> = [
  ["claude-code", (root) => claudeCodeSession(root), "claude-code.0b9c3f52-8a7e-4d8e-9f61-2c4c1a7e5d10"],
  ["gemini-cli", (root) => geminiCliSession(root), "gemini-cli.6f1d2c3b-gem-4a5b-9c8d-7e6f5a4b3c2d"],
]

describe("hook adapters end to end (built binary)", { timeout: 240_000 }, () => {
  const outputs = new Map<string, ReadonlyArray<HookRun>>()
  for (const client of HOOK_CLIENTS)
    for (const [agent, session, sessionId] of cases) {
      it(`${agent} (${client} client): timeline, diff --turn, restore --turn 2 (Bash changes included, .git and ignored files untouched), redo`, async () => {
        const root = tempDir()
        seedWorkspace(root)
        const runs = await feedBin(agent, root, session(root), client)
        // The native client answers the agent exactly as the Node client did (the node cases run first).
        outputs.set(`${agent}/${client}`, runs)
        if (client === "native") expect(runs).toEqual(outputs.get(`${agent}/node`))
        expect(runs.every((r) => r.code === 0)).toBe(true)
        expect(runs.filter((r) => r.stderr !== "").map((r) => r.stderr)).toEqual([
          expect.stringMatching(/not JSON/),
        ])
        // Every event went through the one server the first hook started (none ran the slow path).
        expect(serversStarted(root)).toBe(1)
        const paths = Object.keys(beforeTurn2)
        const end = snapshot(root, paths)
        const gitBefore = snapshot(root, [".git/HEAD", ".git/config"])

        const timeline = jsonLines((await cli(["timeline", "--session", sessionId, "--json"], root)).stdout)
        expect(timeline.map((t) => [t.n, t.prompt, t.status])).toEqual([
          [1, "Create notes.md", "completed"],
          [2, "Add a line and run the script", "completed"],
          [3, "Remove the notes", "completed"],
        ])
        expect(timeline[1]!.files).toEqual([
          { path: "a.txt", change: "modified", by: "shell" },
          { path: "gen/out.txt", change: "added", by: "shell" },
          { path: "notes.md", change: "modified", by: "tool" },
          { path: "old.txt", change: "deleted", by: "shell" },
        ])
        expect(timeline[2]!.files).toEqual([{ path: "notes.md", change: "deleted", by: "shell" }])
        const human = (await cli(["timeline", "--session", sessionId], root)).stdout
        expect(human).toMatch(/turn 2 .*Add a line and run the script/)
        expect(human).toMatch(/deleted +old\.txt +\(shell\)/)

        const diff = jsonLines(
          (await cli(["diff", "--turn", "2", "--session", sessionId, "--json"], root)).stdout,
        )
        const changed = Object.fromEntries(
          diff.filter((l) => l.type === "diff").map((l) => [l.path, [l.change, l.untracked]]),
        )
        expect(changed).toEqual({
          "a.txt": ["modified", false],
          "gen/out.txt": ["added", false],
          "notes.md": ["deleted", false],
          "old.txt": ["deleted", false],
        })

        // Preview first: nothing is written, a token is printed.
        const preview = await cli(["restore", "--turn", "2", "--session", sessionId, "--json"], root)
        expect(preview.code).toBe(0)
        const plan = jsonLines(preview.stdout).find((l) => l.type === "turn_preview")!
        expect(plan).toMatchObject({ turn: 2, canApply: true, leftAlone: [] })
        expect(snapshot(root, paths)).toEqual(end)
        const token = plan.token as string
        expect(token).toMatch(/^rwt1\./)

        const restored = await cli(
          ["restore", "--turn", "2", "--token", token, "--session", sessionId, "--json"],
          root,
        )
        expect(restored.code).toBe(0)
        const done = jsonLines(restored.stdout).find((l) => l.type === "restore")!
        expect(done.rescuePointId).toMatch(/^pt-r/)
        expect(snapshot(root, paths)).toEqual(beforeTurn2)
        expect(snapshot(root, [".git/HEAD", ".git/config"])).toEqual(gitBefore)
        // The token was single use.
        const again = await cli(
          ["restore", "--turn", "2", "--token", token, "--session", sessionId, "--json"],
          root,
        )
        expect(again.code).toBe(2)

        // Redo: the restore undone, the workspace as it was at the end of the session, the
        // conversation left as it was (a point restore never moved it).
        const redo = await cli(["redo", "--session", sessionId, "--json"], root)
        expect(redo.code).toBe(0)
        const redoLine = jsonLines(redo.stdout).find((l) => l.type === "redo")!
        expect(redoLine).toMatchObject({ sessionId, redoneOperationId: done.operationId })
        expect(redoLine.operationId).toMatch(/^op/)
        expect((redoLine.files as Array<{ path: string }>).map((f) => f.path).sort()).toEqual(
          paths.filter((p) => beforeTurn2[p] !== end[p]).sort(),
        )
        expect(snapshot(root, paths)).toEqual(end)
        const after = jsonLines((await cli(["timeline", "--session", sessionId, "--json"], root)).stdout)
        expect(after.map((t) => t.n)).toEqual([1, 2, 3])
        expect(redoLine.activeBranch).toHaveLength(
          (jsonLines((await cli(["log", sessionId, "--json"], root)).stdout) as Array<unknown>).length,
        )
        // Nothing left to undo: the stack is empty.
        const empty = await cli(["redo", "--session", sessionId, "--json"], root)
        expect(jsonLines(empty.stdout).find((l) => l.type === "error")).toMatchObject({
          reason: "nothing_to_undo",
        })
      })
    }

  it("a restore refuses a file another session changed since, writing nothing", async () => {
    const root = tempDir()
    seedWorkspace(root)
    await feedInProcess("claude-code", root, claudeCodeSession(root, "main-session"))
    const sessionId = "claude-code.main-session"
    // Another agent session in the same tree edits a.txt through a file tool.
    const other = (hook_event_name: string, extra: Record<string, unknown>) =>
      JSON.stringify({
        session_id: "other-session",
        transcript_path: "/t",
        cwd: root,
        hook_event_name,
        ...extra,
      })
    await hookBin("claude-code", root, other("UserPromptSubmit", { prompt: "touch a" }))
    const edit = {
      tool_name: "Edit",
      tool_input: { file_path: join(root, "a.txt") },
      tool_use_id: "toolu_other",
    }
    await hookBin("claude-code", root, other("PreToolUse", edit))
    writeFileSync(join(root, "a.txt"), "the other session's text\n")
    await hookBin("claude-code", root, other("PostToolUse", { ...edit, tool_response: {} }))
    const before = snapshot(root, Object.keys(beforeTurn2))

    const refused = await cli(["restore", "--turn", "2", "--session", sessionId, "--json"], root)
    expect(refused.code).toBe(2)
    const error = jsonLines(refused.stdout).at(-1)!
    expect(error).toMatchObject({ type: "error", reason: "conflict" })
    expect(error.message).toMatch(/another session changed a\.txt.*claude-code\.other-session with Edit/)
    expect(snapshot(root, Object.keys(beforeTurn2))).toEqual(before)
  })

  it("redo refuses, writing nothing, when a file the restore wrote changed since", async () => {
    const root = tempDir()
    seedWorkspace(root)
    await feedInProcess("claude-code", root, claudeCodeSession(root, "s"))
    const sessionId = "claude-code.s"
    const preview = jsonLines(
      (await cli(["restore", "--turn", "3", "--session", sessionId, "--json"], root)).stdout,
    )
    const token = preview.find((l) => l.type === "turn_preview")!.token as string
    expect((await cli(["restore", "--turn", "3", "--token", token, "--session", sessionId], root)).code).toBe(
      0,
    )
    expect(readFileSync(join(root, "notes.md"), "utf8")).toBe("# Notes\n- one\n")
    writeFileSync(join(root, "notes.md"), "edited by hand\n")
    const redo = await cli(["redo", "--session", sessionId, "--json"], root)
    expect(redo.code).toBe(2)
    expect(jsonLines(redo.stdout).at(-1)).toMatchObject({
      reason: "conflict",
      details: { files: ["notes.md"] },
    })
    expect(readFileSync(join(root, "notes.md"), "utf8")).toBe("edited by hand\n")
  })

  it("usage: --turn goes alone; an unknown turn is refused", async () => {
    const root = tempDir()
    seedWorkspace(root)
    await feedInProcess("claude-code", root, claudeCodeSession(root).slice(0, 3))
    expect((await cli(["restore", "pt-x", "--turn", "1"], root)).code).toBe(3)
    expect((await cli(["diff", "pt-x", "--turn", "1"], root)).code).toBe(3)
    const missing = await cli(["restore", "--turn", "9", "--json"], root)
    expect(missing.code).toBe(2)
    expect(jsonLines(missing.stdout).at(-1)).toMatchObject({ reason: "not_found" })
  })
})
