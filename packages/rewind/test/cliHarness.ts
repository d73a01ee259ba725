/**
 * Helpers of the CLI end-to-end tests: temp workspaces removed after each test, running the BUILT
 * binary asynchronously, parsing JSON Lines, and a seeded store.
 */
import { execFile, execFileSync } from "node:child_process"
import { writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { expect } from "@effect/vitest"
import { openRewind } from "../src/index.js"
import { okValue } from "./okValue.js"
import { tempDir as makeTempDir } from "./tempDirs.js"

/** The package's `bin`: the bundled executable the build writes. */
export const BIN = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "cli", "rewind.mjs")

/**
 * `git` in `root` as no user's configuration has it (no global or system config, no excludes file),
 * with a fixed identity; answers its standard output.
 */
export const git = (root: string, ...args: ReadonlyArray<string>) =>
  execFileSync("git", args, {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_CONFIG_NOSYSTEM: "1",
      // Nor the default excludes file ($XDG_CONFIG_HOME/git/ignore).
      GIT_CONFIG_COUNT: "1",
      GIT_CONFIG_KEY_0: "core.excludesFile",
      GIT_CONFIG_VALUE_0: "/dev/null",
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@example.com",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@example.com",
    },
  })

/** A temp directory removed after the test (test/tempDirs.ts). */
export const tempDir = () => makeTempDir("rewind-cli-")

// Asynchronous on purpose: a blocking spawn would stall the test worker's event loop.
// `env` is laid over this process's environment (and NO_COLOR); `stdin`, when given, is written
// to the command's standard input, which is then closed (a hook's payload, a server's requests).
export const cli = (
  args: ReadonlyArray<string>,
  cwd?: string,
  env: Record<string, string> = {},
  stdin?: string,
) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      {
        encoding: "utf8",
        ...(cwd === undefined ? {} : { cwd }),
        env: { ...process.env, NO_COLOR: "1", ...env },
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null
        resolve({ code, stdout, stderr })
      },
    )
    if (stdin !== undefined) child.stdin?.end(stdin)
  })

/**
 * The built bin in a workspace driven by hooks in processes of their own: its own runtime
 * directory (beside `cwd`), no agent project variable, no hook server.
 */
export const ownProcessCli = (args: ReadonlyArray<string>, cwd: string, stdin?: string) =>
  cli(
    args,
    cwd,
    { XDG_RUNTIME_DIR: join(cwd, "..", "run"), CLAUDE_PROJECT_DIR: "", REWIND_HOOK_SERVER: "off" },
    stdin,
  )

/**
 * One Claude Code turn in `root` through the built hook command (`ownProcessCli`): the prompt,
 * `edit` as the agent's shell, the shell tool's PostToolUse, then Stop. Every hook must exit 0.
 */
export const claudeShellTurn = async (root: string, sessionId: string, prompt: string, edit: () => void) => {
  const hook = async (event: Record<string, unknown>) => {
    const payload = { session_id: sessionId, transcript_path: "/nonexistent", cwd: root, ...event }
    const r = await ownProcessCli(["hook", "claude-code"], root, JSON.stringify(payload))
    expect(r.code, r.stderr).toBe(0)
  }
  await hook({ hook_event_name: "UserPromptSubmit", prompt })
  edit()
  await hook({
    hook_event_name: "PostToolUse",
    tool_name: "Bash",
    tool_use_id: "b1",
    tool_input: { command: "edit" },
    tool_response: {},
  })
  await hook({ hook_event_name: "Stop", last_assistant_message: "done" })
}

/** Parses stdout as JSON Lines; every line must be an object carrying the format version. */
/**
 * The fields of a capture's point line that say how it found its point (`by`, `rescanned`,
 * `unsealed`, `fullScan`, `scanSeal`): they depend on the time since the files changed (the racy window) and on the capture
 * before, so two runs that must print alike leave them out of the comparison.
 */
export const HOW_FOUND: ReadonlyArray<string> = ["by", "rescanned", "unsealed", "fullScan", "scanSeal"]

export const jsonLines = (stdout: string): Array<Record<string, unknown>> =>
  stdout
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => {
      const parsed = JSON.parse(l) as Record<string, unknown>
      expect(parsed.v).toBe(1)
      return parsed
    })

/** A workspace with a store holding one session of two turns that each wrote `a.txt`. */
export const seeded = async () => {
  const root = tempDir()
  const rewind = await openRewind({ workspaceRoot: root, durability: "atomic" })
  const must = <A>(o: { ok: true; value: A } | { ok: false; refusal: { message: string } }): A => {
    if (!o.ok) throw new Error(o.refusal.message)
    return o.value
  }
  const session = must(await rewind.createSession({ title: "seeded", cwd: root }))
  const turns: Array<{ messageId: string; replyId: string }> = []
  let before: string | null = null
  for (const content of ["one\n", "two\n"]) {
    const { messageId, turnId } = must(
      await rewind.appendUserMessage(session.id, { text: `write ${content}` }),
    )
    writeFileSync(join(root, "a.txt"), content)
    const r = okValue(
      await rewind.recordFileMutation({
        sessionId: session.id,
        turnId,
        path: "a.txt",
        toolName: "write",
        before,
        after: content,
      }),
    )
    expect(r.recorded).toBe(true)
    before = content
    const { messageId: replyId } = must(
      await rewind.appendReply(session.id, { turnId, parts: [{ kind: "text", text: "done" }] }),
    )
    must(await rewind.completeTurnWithBoundary(session.id, turnId))
    turns.push({ messageId, replyId })
  }
  await rewind.close()
  return { root, sessionId: session.id as string, turns }
}
