/**
 * Helpers of the hook adapter tests: feeding a payload sequence (fixtures/hookPayloads.ts) to the
 * hook, in this process (`runHook`) or through the BUILT binary (`rewind hook <agent>`, or the
 * native client's installed command, with the payload on stdin), and reading back what the store
 * holds.
 */
import { execFile } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import type { HookAgent } from "../src/hooks/hookEvent.js"
import { hookCommandLine, nativeClientPath } from "../src/hooks/nativeClient.js"
import { runHook } from "../src/hooks/runHook.js"
import { workspaceSocketPath } from "../src/server/workspaceSocket.js"
import { BIN } from "./cliHarness.js"
import type { Step } from "./fixtures/hookPayloads.js"

export interface HookRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** This process's environment without the agents' project variables (a test may run inside an agent). */
const agentFreeEnv = () => {
  const env = { ...process.env }
  delete env.CLAUDE_PROJECT_DIR
  delete env.GEMINI_PROJECT_DIR
  return env
}

const runtimeDir = process.env.REWIND_TEST_RUNTIME_DIR
if (runtimeDir === undefined)
  throw new Error("REWIND_TEST_RUNTIME_DIR unset: test/isolatedEnv.ts is the global setup")

/**
 * The environment every hook run of these tests gets: the run's own runtime directory (so the
 * servers the hooks start have sockets of their own, mode 0700 as `mkdtemp` makes it; removed by
 * the global setup after the run) and a short idle exit, so no server outlives the tests by more
 * than a few seconds.
 */
export const HOOK_TEST_ENV = {
  XDG_RUNTIME_DIR: runtimeDir,
  REWIND_HOOK_IDLE_EXIT: "5s",
}

/** The socket of the server the hooks of `root` (store `.rewind`) reach, under `HOOK_TEST_ENV`. */
export const hookSocket = (root: string) => workspaceSocketPath(root, join(root, ".rewind"), HOOK_TEST_ENV)!

/** How many servers were started for `root`'s hooks: each writes one `listening on` line to the log. */
export const serversStarted = (root: string) => {
  const log = hookSocket(root).replace(/\.sock$/, ".log")
  return existsSync(log)
    ? readFileSync(log, "utf8")
        .split("\n")
        .filter((l) => l.includes("listening on")).length
    : 0
}

/**
 * The two hook clients the hook tests run with: the Node client (`rewind hook <agent>`) and the
 * native one (native/hookClient.c), run by the command `rewind install` writes for it, through a
 * POSIX shell as the agents run it.
 */
export type HookClient = "node" | "native"
export const HOOK_CLIENTS: ReadonlyArray<HookClient> = ["node", "native"]

/** The native client built with the package; a test that needs it fails (never skips) without it. */
export const nativeClient = () => {
  const path = nativeClientPath(BIN)
  if (path === undefined) {
    throw new Error(
      "the native hook client is not built (packages/rewind/build/Release/rewind-hook: node-gyp at npm ci)",
    )
  }
  return path
}

/** The command a hook entry runs for `client`, as `rewind install` writes it for this binary. */
export const installedCommand = (agent: HookAgent, client: HookClient, fallback?: string) =>
  hookCommandLine(
    agent,
    fallback ?? `${process.execPath} ${BIN}`,
    client === "native" ? nativeClient() : undefined,
  )

/** One hook event through the built binary, as the agent runs it (cwd = the workspace). */
export const hookBin = (
  agent: HookAgent,
  root: string,
  payload: string,
  env: Record<string, string> = {},
  client: HookClient = "node",
) =>
  new Promise<HookRun>((resolve) => {
    const [file, args] =
      client === "node"
        ? [process.execPath, [BIN, "hook", agent]]
        : ["/bin/sh", ["-c", installedCommand(agent, client)]]
    const child = execFile(
      file,
      args,
      { encoding: "utf8", cwd: root, env: { ...agentFreeEnv(), NO_COLOR: "1", ...HOOK_TEST_ENV, ...env } },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null
        resolve({ code, stdout, stderr })
      },
    )
    child.stdin?.end(payload)
  })

const text = (payload: Record<string, unknown> | string) =>
  typeof payload === "string" ? payload : JSON.stringify(payload)

/** Feeds every step in this process; resolves with each payload's result, in order. */
export const feedInProcess = async (agent: HookAgent, root: string, steps: ReadonlyArray<Step>) => {
  const results = []
  for (const step of steps) {
    if ("change" in step) step.change(root)
    else results.push(await runHook({ agent, stdin: text(step.payload), env: {}, processCwd: root }))
  }
  return results
}

/** Feeds every step through the built binary; resolves with each run, in order. */
export const feedBin = async (
  agent: HookAgent,
  root: string,
  steps: ReadonlyArray<Step>,
  client: HookClient = "node",
) => {
  const runs: Array<HookRun> = []
  for (const step of steps) {
    if ("change" in step) step.change(root)
    else runs.push(await hookBin(agent, root, text(step.payload), {}, client))
  }
  return runs
}
