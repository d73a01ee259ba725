/**
 * `rewind hook <agent>`: one hook event from stdin, mirrored into the store. The agent's session
 * is a Rewind session (`hookSessionId`); its prompt opens a turn and a point is captured there
 * (the state before the agent acts on it); a file tool's before-event stores the file's content
 * as a write intent and its after-event records a checkpoint from it; a shell tool's after-event
 * captures a point (so shell-made changes are restorable); the end of a reply completes the turn.
 *
 * It never blocks or fails the agent: whatever goes wrong (a payload that is not JSON, a store
 * that cannot be opened, a refused call) ends the run normally, with a line on stderr and an
 * entry in the problem log (hookProblems.ts) that `rewind status` shows. `runHook` and
 * `runParsedHook` never reject. A malformed payload records nothing.
 *
 * It runs where the engine is: in the `rewind serve` the hook client reached (hookClient.ts hands
 * it the parsed payload, `runParsedHook` over the server's open Rewind), or in the hook's own
 * process (`runHook`, the client's fallback). The workspace is found by hookInput.ts. The store is
 * created on first use: installing the hook is the consent.
 */
import { realpathSync } from "node:fs"
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path"
import {
  normaliseWorkspacePath,
  type SessionId,
  type TurnId,
  type WorkspacePath,
  workspacePathProblem,
} from "@rewind/contracts"
import { claudeCodeEvent } from "./claudeCode.js"
import { geminiCliEvent } from "./geminiCli.js"
import {
  facadeHookEngine,
  type HookEngine,
  hookSessionId,
  intentTurnId,
  shellPointTurnId,
} from "./hookEngine.js"
import type { HookAgent, HookEvent, Undecodable } from "./hookEvent.js"
import {
  type HookRunOptions,
  type HookRunResult,
  logProblem,
  messageOf,
  type ParsedHook,
  parseHookInput,
  protocolOutput,
} from "./hookInput.js"
import { lastAssistantText } from "./transcriptReply.js"

export type { HookRunOptions, HookRunResult, ParsedHook }

const AGENT_NAMES: Record<HookAgent, string> = { "claude-code": "Claude Code", "gemini-cli": "Gemini CLI" }

const translate = (agent: HookAgent, json: unknown): HookEvent | Undecodable =>
  agent === "claude-code" ? claudeCodeEvent(json) : geminiCliEvent(json)

const real = (path: string) => {
  try {
    return realpathSync(path)
  } catch {
    return path
  }
}

/** The agent's path as a workspace path, or why it is not one (outside the workspace, …). */
const workspacePath = (root: string, cwd: string, path: string): WorkspacePath | { problem: string } => {
  const absolute = resolve(cwd, path)
  // Through the real directory, so a workspace reached through a symlink still contains it.
  const located = join(real(dirname(absolute)), basename(absolute))
  const rel = relative(real(root), located)
  if (rel === "" || rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    return { problem: `${path} is outside the workspace ${root}; not recorded` }
  }
  const normalised = normaliseWorkspacePath(rel.split(sep).join("/"))
  const problem = workspacePathProblem(normalised)
  return problem === undefined ? (normalised as WorkspacePath) : { problem: `${path}: ${problem}` }
}

/** Acts on one event; resolves with the problems met (each already worded for a person). */
export const handleHookEvent = async (
  engine: HookEngine,
  event: HookEvent,
  workspaceRoot: string,
): Promise<ReadonlyArray<string>> => {
  const problems: Array<string> = []
  const sessionId: SessionId = hookSessionId(event.agent, event.hostSessionId)
  const ensure = () =>
    engine.ensureSession(sessionId, `${AGENT_NAMES[event.agent]} session ${event.hostSessionId}`, event.cwd)
  /** The running turn; a tool event before any prompt (hooks installed mid-session) gets one of its own. */
  const currentTurn = async (): Promise<TurnId> => {
    const open = await engine.openTurn(sessionId)
    if (open !== undefined) return open
    try {
      return await engine.startTurn(sessionId, "(agent activity before the first prompt Rewind saw)")
    } catch (error) {
      // Another hook process of the same moment may have opened it first.
      const raced = await engine.openTurn(sessionId)
      if (raced !== undefined) return raced
      throw error
    }
  }
  const capture = async (pointTurnId: TurnId) => {
    const outcome = await engine.capture(sessionId, pointTurnId)
    if (outcome._tag === "NotCaptured") problems.push(`no point captured: ${outcome.reason}`)
  }
  const pathsOf = (paths: ReadonlyArray<string>) => {
    const ok: Array<WorkspacePath> = []
    for (const p of paths) {
      const wp = workspacePath(workspaceRoot, event.cwd, p)
      if (typeof wp === "string") ok.push(wp)
      else problems.push(wp.problem)
    }
    return ok
  }

  switch (event.kind) {
    case "ignored":
      return problems
    case "session_start":
      await ensure()
      return problems
    case "prompt": {
      await ensure()
      // A turn left open (its end event never came) is closed before the next one starts.
      const open = await engine.openTurn(sessionId)
      if (open !== undefined) await engine.endTurn(sessionId, open, undefined, "aborted")
      const turnId = await engine.startTurn(sessionId, event.prompt)
      await capture(turnId)
      return problems
    }
    case "before_tool": {
      if (event.effect.kind !== "file_write") return problems
      const paths = pathsOf(event.effect.paths)
      if (paths.length === 0) return problems
      await ensure()
      const turnId = await currentTurn()
      await engine.declareBefore(sessionId, intentTurnId(turnId, event.pairKey), paths)
      return problems
    }
    case "after_tool": {
      if (event.effect.kind === "none") return problems
      await ensure()
      const turnId = await currentTurn()
      if (event.effect.kind === "shell") {
        // A failed command may have changed files all the same: captured either way.
        await capture(shellPointTurnId(turnId, event.pairKey))
        return problems
      }
      // A failed tool's expectation is no better than a guess it did nothing: none is declared.
      const expected = event.failed ? undefined : event.effect.expected
      for (const path of pathsOf(event.effect.paths)) {
        const result = await engine.recordAfter({
          sessionId,
          turnId,
          intentId: intentTurnId(turnId, event.pairKey),
          path,
          toolName: event.toolName,
          ...(expected === undefined ? {} : { expected }),
        })
        // A tool that left the file as it was (a failed one, a no-op edit) has nothing to record.
        if (!result.recorded && result.warning.reason !== "unchanged") {
          problems.push(`no checkpoint for ${path} (${result.warning.reason}): ${result.warning.message}`)
        }
      }
      return problems
    }
    case "turn_end": {
      const open = await engine.openTurn(sessionId).catch(() => undefined)
      if (open === undefined) return problems
      let reply = event.reply
      if (reply === undefined && event.transcriptPath !== undefined) {
        // A transcript that cannot give the reply ends the turn without one (as before), said.
        const read = lastAssistantText(resolve(event.cwd, event.transcriptPath))
        if ("text" in read) reply = read.text
        else problems.push(read.problem)
      }
      await engine.endTurn(sessionId, open, reply, "completed")
      return problems
    }
    case "session_end": {
      const open = await engine.openTurn(sessionId).catch(() => undefined)
      if (open !== undefined) await engine.endTurn(sessionId, open, undefined, "aborted")
      return problems
    }
  }
}

/** The engine a parsed hook runs against, opened for (workspace, store) and closed after. */
export type OpenHookEngine = (
  workspaceRoot: string,
  dir: string | undefined,
) => Promise<{ readonly engine: HookEngine; readonly close: () => Promise<void> }>

/** Opens the store in this process (created on first use) for one event. */
export const openInProcess: OpenHookEngine = async (workspaceRoot, dir) => {
  // Not in the home directory or the filesystem root unless a store is there already (an agent
  // started in `~` with user-level hooks): the embedded default refuses to make one (layers.ts),
  // and the event is logged as a problem while the agent goes on.
  const { openRewind } = await import("../openRewind.js")
  const rewind = await openRewind({ workspaceRoot, create: true, ...(dir === undefined ? {} : { dir }) })
  return { engine: facadeHookEngine(rewind), close: () => rewind.close() }
}

/** Acts on a payload already read as JSON (see hookInput.ts). Never rejects. */
export const runParsedHook = async (parsed: ParsedHook, open: OpenHookEngine): Promise<HookRunResult> => {
  const { agent, json, workspaceRoot, storeDir } = parsed
  const stdout = protocolOutput(agent)
  const event = translate(agent, json)
  if (event.kind === "undecodable") {
    const message = `rewind hook ${agent}: ${event.reason}; nothing recorded`
    logProblem(parsed.fallbackStoreDir, agent, "(undecodable)", undefined, message)
    return { stdout, problems: [message], handled: false }
  }
  if (event.kind === "ignored") return { stdout, problems: [], handled: false }
  const problems: Array<string> = []
  try {
    const { engine, close } = await open(workspaceRoot, parsed.dir)
    try {
      problems.push(...(await handleHookEvent(engine, event, workspaceRoot)))
    } finally {
      await close()
    }
  } catch (error) {
    problems.push(messageOf(error))
  }
  const worded = problems.map((p) => `rewind hook ${agent} ${event.hostEvent}: ${p}`)
  for (const line of worded) logProblem(storeDir, agent, event.hostEvent, event.hostSessionId, line)
  return { stdout, problems: worded, handled: true }
}

/** Runs one hook event end to end in this process. Never rejects; see the module header. */
export const runHook = async (options: HookRunOptions): Promise<HookRunResult> => {
  const parsed = parseHookInput(options)
  return "json" in parsed ? runParsedHook(parsed, openInProcess) : parsed
}
