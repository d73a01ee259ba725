/**
 * `restore --turn N` on a tree shaped like a real one, through the BUILT binary: turn 1's capture
 * reports paths it left out (a nested repository, a `.svn` fixture directory), as nearly every real
 * repository's capture does. Files the agent created elsewhere are still deleted by the restore
 * (they were seen absent before turn 1); a file first captured later *inside* what turn 1's capture
 * left out (the nested repository's `.git` removed during the turn) is left alone and reported,
 * with the left-out path that hid it. Before, any left-out path left every created file in place.
 * And files turn 1's own ignore rules excluded (a `.env`, a log) that the agent un-ignored are left
 * alone: they look created during the turn, and the restore used to delete them (and the timeline
 * listed them as added by the turn).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { cli, jsonLines, tempDir } from "./cliHarness.js"
import type { Step } from "./fixtures/hookPayloads.js"
import { feedBin } from "./hookHarness.js"

const write = (root: string, path: string, content: string) => {
  mkdirSync(dirname(join(root, path)), { recursive: true })
  writeFileSync(join(root, path), content)
}

const SESSION = "5d0c1e2f-unseen-4b7a-9c3d-1f2e3d4c5b6a"

/** Turn 1 runs `change` through a Bash tool call; turn 2 only opens (its prompt captures a point). */
const session = (root: string, change: (root: string) => void): ReadonlyArray<Step> => {
  const common = { session_id: SESSION, transcript_path: "/nonexistent.jsonl", cwd: root }
  const bash = (event: string, id: string) => ({
    payload: {
      ...common,
      hook_event_name: event,
      tool_name: "Bash",
      tool_use_id: id,
      tool_input: { command: "sh agent.sh" },
      ...(event === "PostToolUse" ? { tool_response: { stdout: "", stderr: "" } } : {}),
    },
  })
  return [
    { payload: { ...common, hook_event_name: "SessionStart", source: "startup" } },
    { payload: { ...common, hook_event_name: "UserPromptSubmit", prompt: "Scaffold the module" } },
    bash("PreToolUse", "toolu_1"),
    { change, what: "the shell changes the tree" },
    bash("PostToolUse", "toolu_1"),
    { payload: { ...common, hook_event_name: "Stop", last_assistant_message: "Done." } },
    { payload: { ...common, hook_event_name: "UserPromptSubmit", prompt: "Next" } },
    { payload: { ...common, hook_event_name: "Stop", last_assistant_message: "Ok." } },
  ]
}

/**
 * Mirrors the session over `root` (turn 1's shell running `change`), then previews
 * `restore --turn 1` (JSON and human) and returns them with the apply to run after the checks.
 */
const turnOneRestore = async (root: string, change: (root: string) => void) => {
  const runs = await feedBin("claude-code", root, session(root, change))
  expect(runs.map((r) => r.code)).toEqual(runs.map(() => 0))
  const sessionId = `claude-code.${SESSION}`
  const preview = await cli(["restore", "--turn", "1", "--session", sessionId, "--json"], root)
  expect(preview.code).toBe(0)
  const plan = jsonLines(preview.stdout).find((l) => l.type === "turn_preview")!
  const human = (await cli(["restore", "--turn", "1", "--session", sessionId], root)).stdout
  const changes = (plan.changes as Array<{ path: string; action: string }>).map(
    (c) => `${c.action} ${c.path}`,
  )
  const apply = async () => {
    const applied = await cli(
      ["restore", "--turn", "1", "--token", plan.token as string, "--session", sessionId, "--json"],
      root,
    )
    expect(applied.code).toBe(0)
  }
  return { plan, human, changes, apply }
}

describe("restore --turn on a tree whose capture left paths out (built binary)", { timeout: 120_000 }, () => {
  it("deletes what the agent created where turn 1's capture saw; leaves what it could not see", async () => {
    const root = tempDir()
    write(root, "a.txt", "alpha\n")
    write(root, "vendor/x/.git/HEAD", "ref: refs/heads/main\n")
    write(root, "vendor/x/keep.js", "vendored\n")
    write(root, "fixtures/.svn/entries", "12\n")
    const { plan, human, changes, apply } = await turnOneRestore(root, (r) => {
      write(r, "made.txt", "made by the agent\n")
      write(r, "src/new/module.ts", "export {}\n")
      write(r, "a.txt", "alpha, edited\n")
      // vendor/x stops being a repository of its own: its files are captured from now on.
      rmSync(join(r, "vendor/x/.git"), { recursive: true })
    })
    expect(plan).toMatchObject({ canApply: true, leftAlone: ["vendor/x/keep.js"] })
    expect(plan.unseen).toEqual([{ path: "vendor/x/keep.js", at: "vendor/x", reason: "skipped_directory" }])
    expect(changes).toEqual(["write a.txt", "delete made.txt", "delete src/new/module.ts"])
    expect(human).toMatch(
      /left alone vendor\/x\/keep\.js: created later, unseen by turn 1's capture \(vendor\/x: skipped_directory\)/,
    )

    await apply()
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("alpha\n")
    expect(existsSync(join(root, "made.txt"))).toBe(false)
    expect(existsSync(join(root, "src/new/module.ts"))).toBe(false)
    expect(readFileSync(join(root, "vendor/x/keep.js"), "utf8")).toBe("vendored\n")
    expect(readFileSync(join(root, "fixtures/.svn/entries"), "utf8")).toBe("12\n")
  })

  it("leaves the files turn 1's own ignore rules excluded, when the agent un-ignored them", async () => {
    // The user's .env and a log existed before turn 1, ignored; the agent takes them out of
    // .gitignore, so the next point captures them: they look created during the turn, and the
    // restore used to delete them (the .env among them).
    const root = tempDir()
    write(root, ".gitignore", ".env\n*.log\n")
    write(root, ".env", "SECRET=1\n")
    write(root, "logs/debug.log", "log\n")
    write(root, "a.txt", "alpha\n")
    const { plan, human, changes, apply } = await turnOneRestore(root, (r) => {
      write(r, ".gitignore", "*.tmp\n")
      write(r, "made.txt", "made by the agent\n")
    })
    expect(plan).toMatchObject({ canApply: true, leftAlone: [".env", "logs/debug.log"] })
    expect(plan.unseen).toEqual([
      { path: ".env", at: ".", reason: "ignored" },
      { path: "logs/debug.log", at: ".", reason: "ignored" },
    ])
    expect(changes).toEqual(["write .gitignore", "delete made.txt"])
    // Nor does the timeline say the turn created them: it changed the rules, and made one file.
    const timeline = jsonLines(
      (await cli(["timeline", "--session", `claude-code.${SESSION}`, "--json"], root)).stdout,
    )
    expect(timeline[0]!.files).toEqual([
      { path: ".gitignore", change: "modified", by: "shell" },
      { path: "made.txt", change: "added", by: "shell" },
    ])
    expect(human).toMatch(
      /left alone \.env: created later, unseen by turn 1's capture \(ignored then by the rules of \.\)/,
    )

    await apply()
    expect(readFileSync(join(root, ".gitignore"), "utf8")).toBe(".env\n*.log\n")
    expect(readFileSync(join(root, ".env"), "utf8")).toBe("SECRET=1\n")
    expect(readFileSync(join(root, "logs/debug.log"), "utf8")).toBe("log\n")
    expect(existsSync(join(root, "made.txt"))).toBe(false)
  })
})
