/**
 * End to end on disk, through the BUILT binary: a Claude Code session whose first turn's shell
 * replaces a regular file by a directory (`rm config && mkdir -p config/sub && ...`) and a
 * directory by a regular file (`rm -r lib && echo > lib`), its turns recorded by `rewind hook`
 * (the second turn's point taken by the live engine the hooks start). `rewind restore --turn 1`
 * then puts both back as they were before turn 1 — the file `config` with its content and mode,
 * the directory `lib` with its files — deleting what stood in the way, and `rewind redo` gives the
 * tree of the end of the session back exactly.
 */
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { cli, jsonLines, tempDir } from "./cliHarness.js"
import { feedBin } from "./hookHarness.js"

/** Every entry under `root` (but the store) as `path: kind mode content`. */
const tree = (root: string, dir = ""): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const name of readdirSync(join(root, dir)).sort()) {
    const path = dir === "" ? name : `${dir}/${name}`
    if (path === ".rewind") continue
    const stat = lstatSync(join(root, path))
    const mode = (stat.mode & 0o777).toString(8)
    if (stat.isDirectory()) {
      out[path] = "directory"
      Object.assign(out, tree(root, path))
    } else out[path] = `file ${mode} ${readFileSync(join(root, path), "utf8")}`
  }
  return out
}

describe("rewind restore --turn over paths that changed kind (built binary)", { timeout: 240_000 }, () => {
  it("puts back a file that became a directory and a directory that became a file; redo undoes it", async () => {
    const root = tempDir()
    writeFileSync(join(root, "config"), "v1\n")
    chmodSync(join(root, "config"), 0o640)
    mkdirSync(join(root, "lib"))
    writeFileSync(join(root, "lib", "x.js"), "x\n")
    chmodSync(join(root, "lib", "x.js"), 0o600)
    const common = { session_id: "kinds", transcript_path: "/t/kinds.jsonl", cwd: root }
    const prompt = (text: string) => ({
      payload: { ...common, hook_event_name: "UserPromptSubmit", prompt: text },
    })
    const stop = { payload: { ...common, hook_event_name: "Stop", stop_hook_active: false } }
    const bash = (event: string) => ({
      payload: {
        ...common,
        hook_event_name: event,
        tool_name: "Bash",
        tool_input: { command: "sh reshape.sh" },
        tool_use_id: "toolu_1",
        ...(event === "PostToolUse" ? { tool_response: { stdout: "", stderr: "" } } : {}),
      },
    })
    const runs = await feedBin("claude-code", root, [
      prompt("Reshape the tree"),
      bash("PreToolUse"),
      {
        what: "the shell replaces config by a directory and lib by a file",
        change: (r) => {
          rmSync(join(r, "config"))
          mkdirSync(join(r, "config", "sub"), { recursive: true })
          writeFileSync(join(r, "config", "a"), "x\n")
          writeFileSync(join(r, "config", "sub", "b"), "y\n")
          rmSync(join(r, "lib"), { recursive: true })
          writeFileSync(join(r, "lib"), "bundled\n")
        },
      },
      bash("PostToolUse"),
      stop,
      prompt("Carry on"),
      stop,
    ])
    expect(runs.every((r) => r.code === 0)).toBe(true)
    const sessionId = "claude-code.kinds"
    const end = tree(root)
    expect(end).toMatchObject({
      config: "directory",
      "config/sub/b": expect.stringMatching(/^file \d+ y\n$/),
      lib: expect.stringMatching(/^file \d+ bundled\n$/),
    })

    const preview = await cli(["restore", "--turn", "1", "--session", sessionId, "--json"], root)
    expect(preview.code).toBe(0)
    const plan = jsonLines(preview.stdout).find((l) => l.type === "turn_preview")!
    expect(plan).toMatchObject({ canApply: true, conflicts: [], leftAlone: [] })
    expect(plan.changes).toEqual(
      expect.arrayContaining([
        { path: "config", action: "write" },
        { path: "config/a", action: "delete" },
        { path: "config/sub/b", action: "delete" },
        { path: "lib/x.js", action: "write" },
        { path: "lib", action: "delete" },
      ]),
    )
    expect(tree(root)).toEqual(end)

    const restored = await cli(
      ["restore", "--turn", "1", "--token", plan.token as string, "--session", sessionId, "--json"],
      root,
    )
    expect(restored.code).toBe(0)
    expect(tree(root)).toEqual({ config: "file 640 v1\n", lib: "directory", "lib/x.js": "file 600 x\n" })

    const redo = await cli(["redo", "--session", sessionId, "--json"], root)
    expect(redo.code).toBe(0)
    expect(tree(root)).toEqual(end)
  })
})
