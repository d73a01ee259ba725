/**
 * The first step of every hook run, shared by the hook client and the in-process hook: read the
 * payload as JSON, find the workspace and the store it belongs to, and keep what could not be
 * read in the problem log. Loads only Node built-ins (the hook client runs it before anything
 * else), so the agent's payload Schemas are applied later, next to the engine (runHook.ts).
 *
 * Where the workspace is: `--workspace`, else the agent's project directory
 * (`CLAUDE_PROJECT_DIR`, `GEMINI_PROJECT_DIR`), else the one the payload's `cwd` finds by the CLI's
 * rule (workspaceRoot.ts: the nearest directory at or above it holding a store, else that `cwd`).
 */
import { existsSync } from "node:fs"
import { resolve } from "node:path"
import { discoverWorkspace, storeDirectory } from "../workspaceRoot.js"
import type { HookAgent } from "./hookEvent.js"
import { appendProblem } from "./hookProblems.js"

export interface HookRunOptions {
  readonly agent: HookAgent
  /** The payload exactly as read from stdin. */
  readonly stdin: string
  /** `--workspace`, when given. */
  readonly workspace?: string
  /** `--dir` (the store directory), when given. */
  readonly dir?: string
  readonly env: Readonly<Record<string, string | undefined>>
  /** The hook process's own working directory (where the agent started it). */
  readonly processCwd: string
}

export interface HookRunResult {
  /** What the agent's hook protocol reads on stdout. */
  readonly stdout: string
  /** Lines for stderr: one per problem. */
  readonly problems: ReadonlyArray<string>
  /** Whether the event was acted on (false for a malformed payload or one with nothing to do). */
  readonly handled: boolean
}

/** A payload read as JSON, with the workspace and store it is for. */
export interface ParsedHook {
  readonly agent: HookAgent
  readonly json: unknown
  /** The workspace for the payload's `cwd` (or the process's, when it names none). */
  readonly workspaceRoot: string
  readonly storeDir: string
  /** The store directory as `--dir` gave it, resolved (undefined: the workspace's `.rewind`). */
  readonly dir: string | undefined
  /** The workspace the process's own directory gives, for a payload the Schemas refuse. */
  readonly fallbackStoreDir: string
}

/** Gemini CLI parses stdout as JSON; Claude Code needs nothing for a hook that does not decide. */
export const protocolOutput = (agent: HookAgent) => (agent === "gemini-cli" ? "{}\n" : "")

const projectDir = (agent: HookAgent, env: HookRunOptions["env"]) =>
  agent === "claude-code" ? env.CLAUDE_PROJECT_DIR : (env.GEMINI_PROJECT_DIR ?? env.CLAUDE_PROJECT_DIR)

export const resolveHookWorkspace = (
  agent: HookAgent,
  options: Pick<HookRunOptions, "workspace" | "env">,
  cwd: string,
): string => {
  if (options.workspace !== undefined) return resolve(options.workspace)
  const project = projectDir(agent, options.env)
  if (project !== undefined && project.length > 0) return resolve(project)
  return discoverWorkspace(cwd)
}

export const messageOf = (error: unknown) =>
  error instanceof Error
    ? error.message
    : typeof error === "object" && error !== null && "message" in error
      ? String(error.message)
      : String(error)

/** Keeps one problem in the store's problem log, when the store exists; never throws. */
export const logProblem = (
  storeDir: string,
  agent: HookAgent,
  event: string,
  hostSessionId: string | undefined,
  message: string,
) => {
  if (!existsSync(storeDir)) return
  try {
    appendProblem(storeDir, {
      at: Date.now(),
      agent,
      event,
      ...(hostSessionId === undefined ? {} : { hostSessionId }),
      message,
    })
  } catch {
    // The log is a diagnostic: a store that cannot take it is reported on stderr already.
  }
}

/** The payload's `cwd` when it has a usable one (the Schemas check the rest later). */
const payloadCwd = (json: unknown): string | undefined => {
  if (typeof json !== "object" || json === null) return undefined
  const cwd = (json as Record<string, unknown>).cwd
  return typeof cwd === "string" && cwd.length > 0 ? cwd : undefined
}

/**
 * Whether the payload has the fields every agent's payload Schema requires (`session_id`, a
 * non-empty string; `cwd` and `hook_event_name`, strings). Not the Schemas (runHook.ts applies
 * those): the hook client checks this before it starts a server, so a payload plainly not an
 * agent's creates no store and starts nothing.
 */
export const hasCommonFields = (json: unknown): boolean => {
  if (typeof json !== "object" || json === null) return false
  const { session_id, cwd, hook_event_name } = json as Record<string, unknown>
  return (
    typeof session_id === "string" &&
    session_id.length > 0 &&
    typeof cwd === "string" &&
    typeof hook_event_name === "string"
  )
}

/**
 * The payload parsed, or the finished result for one that is not JSON (logged, nothing
 * recorded).
 */
export const parseHookInput = (options: HookRunOptions): ParsedHook | HookRunResult => {
  const { agent } = options
  const dir = options.dir === undefined ? undefined : resolve(options.dir)
  const storeDirFor = (root: string) => storeDirectory({ workspaceRoot: root, dir })
  const fallbackStoreDir = storeDirFor(resolveHookWorkspace(agent, options, options.processCwd))
  let json: unknown
  try {
    json = JSON.parse(options.stdin)
  } catch (error) {
    const why = messageOf(error).replace(/\s+/g, " ").trim()
    const message = `rewind hook ${agent}: the payload is not JSON (${why}); nothing recorded`
    logProblem(fallbackStoreDir, agent, "(unparsed)", undefined, message)
    return { stdout: protocolOutput(agent), problems: [message], handled: false }
  }
  const workspaceRoot = resolveHookWorkspace(agent, options, payloadCwd(json) ?? options.processCwd)
  return { agent, json, workspaceRoot, storeDir: storeDirFor(workspaceRoot), dir, fallbackStoreDir }
}
