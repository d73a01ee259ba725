/**
 * The native hook client (native/hookClient.c) on its own, through its installed command: with a
 * server running it answers without any Node process (its fallback is made to fail loudly, and is
 * never run); without one it hands the exact stdin bytes to the fallback (a payload larger than a
 * pipe's buffer), with the CA bundle moved as the Node command's prefix moves it; a payload it
 * does not read as JSON goes to the Node client, which logs it and records nothing; and a
 * pretty-printed payload with escapes and non-ASCII text reaches the server intact.
 */
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { HookAgent } from "../src/hooks/hookEvent.js"
import { cli, jsonLines, tempDir } from "./cliHarness.js"
import { seedWorkspace } from "./fixtures/hookPayloads.js"
import { HOOK_TEST_ENV, hookBin, installedCommand, serversStarted } from "./hookHarness.js"

const payload = (root: string, sessionId: string, event: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ session_id: sessionId, cwd: root, hook_event_name: event, ...extra })

/** The native client's installed command with `fallback` as its Node command, run by a shell. */
const runWith = (
  agent: HookAgent,
  root: string,
  fallback: string,
  input: string,
  env: Record<string, string> = {},
) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      "/bin/sh",
      ["-c", installedCommand(agent, "native", fallback)],
      { encoding: "utf8", cwd: root, env: { ...process.env, ...HOOK_TEST_ENV, ...env }, maxBuffer: 1 << 26 },
      (error, stdout, stderr) =>
        resolve({
          code: error === null ? 0 : typeof error.code === "number" ? error.code : null,
          stdout,
          stderr,
        }),
    )
    child.stdin?.end(input)
  })

const prompts = async (root: string, sessionId: string) =>
  jsonLines((await cli(["timeline", "--session", sessionId, "--json"], root)).stdout).map((t) => t.prompt)

describe("the native hook client (built, installed command)", { timeout: 120_000 }, () => {
  it("with a server running, answers without Node; without one, hands the same bytes to the Node command", async () => {
    const root = tempDir()
    seedWorkspace(root)
    // No server yet: the fallback runs, with stdin as sent (over 64 KiB: more than a pipe holds)
    // and the CA bundle moved out of NODE_EXTRA_CA_CERTS, as the Node command's prefix does.
    const big = payload(root, "n1", "UserPromptSubmit", { prompt: `long ${"é".repeat(100_000)}` })
    const probe = `cat > "${join(root, "stdin.bin")}"; env > "${join(root, "env.txt")}"; exit 7;`
    const slow = await runWith("claude-code", root, probe, big, { NODE_EXTRA_CA_CERTS: "/certs/b.pem" })
    expect(slow.code).toBe(7)
    expect(readFileSync(join(root, "stdin.bin"), "utf8")).toBe(big)
    const env = readFileSync(join(root, "env.txt"), "utf8").split("\n")
    expect(env).toContain("REWIND_HOOK_CA_CERTS=/certs/b.pem")
    expect(env.some((l) => l.startsWith("NODE_EXTRA_CA_CERTS="))).toBe(false)

    // The real installed command starts the server (through the Node client) ...
    expect(await hookBin("claude-code", root, payload(root, "n1", "SessionStart"), {}, "native")).toEqual({
      code: 0,
      stdout: "",
      stderr: "",
    })
    expect(serversStarted(root)).toBe(1)
    // ... and then a command whose fallback would fail answers all the same: the fast path.
    const pretty = JSON.stringify(
      JSON.parse(
        payload(root, "n1", "UserPromptSubmit", { prompt: 'dire "ça"\n\tet \\ 🙂 \u0001', extra: [1] }),
      ),
      null,
      2,
    )
    expect(await runWith("claude-code", root, "exit 7;", pretty)).toEqual({ code: 0, stdout: "", stderr: "" })
    expect(await runWith("claude-code", root, "exit 7;", payload(root, "n1", "Stop"))).toEqual({
      code: 0,
      stdout: "",
      stderr: "",
    })
    // Gemini CLI reads its protocol's JSON on stdout.
    expect(
      await runWith("gemini-cli", root, "exit 7;", payload(root, "g1", "BeforeAgent", { prompt: "g" })),
    ).toEqual({ code: 0, stdout: "{}\n", stderr: "" })
    expect(await prompts(root, "claude-code.n1")).toEqual(['dire "ça"\n\tet \\ 🙂 \u0001'])
    expect(await prompts(root, "gemini-cli.g1")).toEqual(["g"])
    expect(serversStarted(root)).toBe(1)
  })

  it("malformed JSON (even with a server running) goes to the Node client: exit 0, logged, nothing recorded", async () => {
    const root = tempDir()
    seedWorkspace(root)
    await hookBin("claude-code", root, payload(root, "m", "SessionStart"), {}, "native")
    // Cut short, and a trailing comma: the native reader refuses both, as JSON.parse does, and
    // hands them to the Node client, which explains what it refuses.
    for (const bad of [
      '{"session_id": "m", "cwd": ',
      '{"session_id":"m","cwd":"x","hook_event_name":"Stop",}',
    ]) {
      const run = await hookBin("claude-code", root, bad, {}, "native")
      expect(run.code).toBe(0)
      expect(run.stdout).toBe("")
      expect(run.stderr).toMatch(/the payload is not JSON .*nothing recorded/)
    }
    const status = jsonLines((await cli(["status", "--json"], root)).stdout)
    expect(status.find((l) => l.type === "hook_problems")).toMatchObject({ count: 2 })
    expect(await prompts(root, "claude-code.m")).toEqual([])
  })
})
