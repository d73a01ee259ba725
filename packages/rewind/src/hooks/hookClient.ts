/**
 * The hook client: what `rewind hook <agent>` runs (the bin dispatches here before loading
 * anything else, see cli/bin.ts). It reads the event, finds the workspace's server on its socket
 * (server/workspaceSocket.ts), starting one when none answers, and sends the event as one `hook`
 * request; the server acts on it next to its open engine (hookMethod.ts). It loads only Node
 * built-ins and the small hook-input modules, so a hook costs a small process start plus one
 * round trip.
 *
 * Invariants:
 * - it never blocks or fails the agent: it always exits 0 with the agent's protocol output, and
 *   every problem is a line on stderr and an entry in the problem log (`rewind status`);
 * - the slow path is never silent: when no server can be reached (no socket path fits, the server
 *   did not start in time, it refused the call or answered an error), the hook runs in this
 *   process (runHook.ts, loaded only then) and a problem says so;
 * - an event is applied at most once: once it was sent, a missing answer (timeout, lost
 *   connection) is reported as a problem and never followed by the in-process run, because the
 *   server may still apply it (`Unanswered`);
 * - a payload without the fields every agent sends (`hasCommonFields`) is refused in this process
 *   with the Schemas' own explanation: no server is started and no store created for it;
 * - at most one client starts a server at a time (an exclusive `<socket>.start` file, taken over
 *   when older than the start timeout); a second server started all the same finds the socket
 *   taken and exits (socket.ts), and every client retries connecting until the start timeout;
 * - the server it starts is detached (`rewind serve --socket … --idle-exit … --create`), so it
 *   outlives the hook and exits by itself once idle.
 *
 * The native hook client (native/hookClient.c, docs/hooks.md) is this fast path in C; it hands
 * everything else to this client with the same stdin, and `REWIND_HOOK_SERVER_REFUSED` (the
 * server's reason) when the server answered that it did not apply the event.
 *
 * Settings (environment): `REWIND_HOOK_SERVER=off` runs every hook in its own process, quietly
 * (the user chose it); `REWIND_HOOK_IDLE_EXIT` (default `10m`) is the started server's
 * `--idle-exit`; `REWIND_HOOK_TIMEOUT_MS` (default 30000) bounds one hook's round trip;
 * `REWIND_HOOK_START_TIMEOUT_MS` (default 10000) bounds waiting for a server to start.
 */
import { spawn } from "node:child_process"
import { closeSync, openSync, statSync, unlinkSync } from "node:fs"
import type { Socket } from "node:net"
import { parse } from "node:path"
import { connectSocket, ServerError, socketRpc } from "../server/socketClient.js"
import { workspaceSocketPath } from "../server/workspaceSocket.js"
import type { HookAgent } from "./hookEvent.js"
import {
  type HookRunOptions,
  type HookRunResult,
  hasCommonFields,
  logProblem,
  messageOf,
  type ParsedHook,
  parseHookInput,
  protocolOutput,
} from "./hookInput.js"

type Env = Readonly<Record<string, string | undefined>>

const numberSetting = (env: Env, name: string, fallback: number) => {
  const value = Number(env[name])
  return Number.isFinite(value) && value > 0 ? value : fallback
}

/** Why the server path was not taken: worded for the problem line. */
class Unreachable extends Error {}

/**
 * The event reached the server but no answer came back (timeout, connection lost, garbled line):
 * the server may have applied it or may still. Running it here as well could record it twice
 * (a second checkpoint, a second turn), so the client reports it and stops there.
 */
class Unanswered extends Error {}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms))

/**
 * Sends the one `hook` request and resolves with its answer's `result` (an Outcome). A JSON-RPC
 * error answer is `Unreachable` (the server did not act: the hook may run here); any other way
 * the answer fails to come is `Unanswered`.
 */
const request = async (socket: Socket, params: unknown, timeoutMs: number) => {
  try {
    return (await socketRpc(socket, timeoutMs)("hook", [params])) as {
      ok: boolean
      value?: HookRunResult
      refusal?: { message: string }
    }
  } catch (error) {
    throw error instanceof ServerError ? new Unreachable(error.message) : new Unanswered(messageOf(error))
  } finally {
    socket.end()
  }
}

/**
 * The started server's environment: the hook's, with the CA bundle the installed hook command
 * kept from this process (`REWIND_HOOK_CA_CERTS`, see hookInstall.ts) put back as
 * `NODE_EXTRA_CA_CERTS`, since the server may open TLS connections (a PostgreSQL store).
 */
export const serverEnv = (env: Env): Record<string, string | undefined> => {
  const { REWIND_HOOK_CA_CERTS: kept, ...rest } = env
  return kept === undefined || kept === "" || rest.NODE_EXTRA_CA_CERTS !== undefined
    ? rest
    : { ...rest, NODE_EXTRA_CA_CERTS: kept }
}

/** Starts a detached server for `parsed` on `socketPath` unless another client is starting one. */
const startServer = (parsed: ParsedHook, socketPath: string, binPath: string, env: Env, startMs: number) => {
  const lock = `${socketPath}.start`
  try {
    closeSync(openSync(lock, "wx", 0o600))
  } catch {
    // Another client is starting it; a start lock older than a start is a crashed client's.
    try {
      if (Date.now() - statSync(lock).mtimeMs < startMs) return
      unlinkSync(lock)
      closeSync(openSync(lock, "wx", 0o600))
    } catch {
      return
    }
  }
  const log = openSync(socketPath.replace(/\.sock$/, ".log"), "a", 0o600)
  const child = spawn(
    process.execPath,
    [
      binPath,
      "serve",
      "--workspace",
      parsed.workspaceRoot,
      ...(parsed.dir === undefined ? [] : ["--dir", parsed.dir]),
      "--socket",
      socketPath,
      "--idle-exit",
      env.REWIND_HOOK_IDLE_EXIT ?? "10m",
      "--create",
    ],
    // Its paths are all absolute: started in the filesystem's root, the server does not hold the
    // workspace as its working directory, which would keep a removed workspace alive (a re-clone
    // at the same path) and its volume busy.
    {
      detached: true,
      stdio: ["ignore", log, log],
      cwd: parse(parsed.workspaceRoot).root,
      env: serverEnv(env),
    },
  )
  child.unref()
  closeSync(log)
}

/** Connects to the workspace's server, starting one when none answers; rejects with `Unreachable`. */
const reachServer = async (parsed: ParsedHook, socketPath: string, binPath: string, env: Env) => {
  try {
    return await connectSocket(socketPath)
  } catch {
    // Not running (no socket, or a killed server's leftover): start one and wait for it.
  }
  const startMs = numberSetting(env, "REWIND_HOOK_START_TIMEOUT_MS", 10_000)
  startServer(parsed, socketPath, binPath, env, startMs)
  const deadline = Date.now() + startMs
  try {
    for (let wait = 10; ; wait = Math.min(wait * 2, 100)) {
      await sleep(wait)
      try {
        return await connectSocket(socketPath)
      } catch (error) {
        if (Date.now() > deadline) {
          throw new Unreachable(
            `no server answered on ${socketPath} within ${startMs} ms of starting one (${messageOf(error)}; see ${socketPath.replace(/\.sock$/, ".log")})`,
          )
        }
      }
    }
  } finally {
    try {
      unlinkSync(`${socketPath}.start`)
    } catch {
      // Not ours, or already gone.
    }
  }
}

/** Runs one hook event through the workspace's server, or in this process when it cannot. */
export const runHookClient = async (options: HookRunOptions, binPath: string): Promise<HookRunResult> => {
  const parsed = parseHookInput(options)
  if (!("json" in parsed)) return parsed
  const inProcess = async (why: string | undefined) => {
    const { openInProcess, runParsedHook } = await import("./runHook.js")
    const result = await runParsedHook(parsed, openInProcess)
    if (why === undefined) return result
    const line = `rewind hook ${options.agent}: ${why}; the hook ran in its own process instead (the slow path)`
    logProblem(parsed.storeDir, options.agent, "(server)", undefined, line)
    return { ...result, problems: [line, ...result.problems] }
  }
  // Off by the user's choice, or a payload that is plainly not an agent's (the Schemas' own
  // explanation comes from runHook, and nothing starts or is created for it).
  if (options.env.REWIND_HOOK_SERVER === "off" || !hasCommonFields(parsed.json)) return inProcess(undefined)
  // The native client (native/hookClient.c) got an answer saying the server did not apply the
  // event (a refusal or an error): run it here, as after such an answer of our own below.
  const refused = options.env.REWIND_HOOK_SERVER_REFUSED
  if (refused !== undefined && refused.length > 0) return inProcess(refused)
  let socketPath: string | undefined
  try {
    socketPath = workspaceSocketPath(parsed.workspaceRoot, parsed.storeDir, options.env)
  } catch (error) {
    return inProcess(`the socket directory cannot be made (${messageOf(error)})`)
  }
  if (socketPath === undefined) {
    return inProcess("no socket path short enough for a unix socket could be made for this workspace")
  }
  try {
    const socket = await reachServer(parsed, socketPath, binPath, options.env)
    const timeoutMs = numberSetting(options.env, "REWIND_HOOK_TIMEOUT_MS", 30_000)
    const { dir, ...call } = parsed
    const answer = await request(socket, dir === undefined ? call : { ...call, dir }, timeoutMs)
    if (!answer.ok || answer.value === undefined) {
      return inProcess(
        `the server on ${socketPath} refused the event (${answer.refusal?.message ?? "no answer"})`,
      )
    }
    return answer.value
  } catch (error) {
    if (error instanceof Unanswered) {
      const line = `rewind hook ${options.agent}: the event was sent to the server on ${socketPath} but ${error.message}; it was not run again in this process, since the server may still apply it (see ${socketPath.replace(/\.sock$/, ".log")})`
      logProblem(parsed.storeDir, options.agent, "(server)", undefined, line)
      return { stdout: protocolOutput(options.agent), problems: [line], handled: false }
    }
    return inProcess(
      error instanceof Unreachable ? error.message : `the server path failed: ${messageOf(error)}`,
    )
  }
}

/** The options of `hook <agent> [--workspace W] [--dir D]`, or undefined for anything else. */
export const hookArguments = (
  args: ReadonlyArray<string>,
): Omit<HookRunOptions, "stdin" | "env" | "processCwd"> | undefined => {
  const [agent, ...rest] = args
  if (agent !== "claude-code" && agent !== "gemini-cli") return undefined
  const out: { agent: HookAgent; workspace?: string; dir?: string } = { agent }
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!
    const eq = arg.indexOf("=")
    const name = eq > 0 ? arg.slice(0, eq) : arg
    if (name !== "--workspace" && name !== "--dir") return undefined
    const value = eq > 0 ? arg.slice(eq + 1) : rest[++i]
    if (value === undefined) return undefined
    out[name === "--workspace" ? "workspace" : "dir"] = value
  }
  return out
}

const readStdin = () =>
  new Promise<string>((done) => {
    const chunks: Array<Buffer> = []
    process.stdin.on("data", (chunk: Buffer) => chunks.push(chunk))
    process.stdin.on("end", () => done(Buffer.concat(chunks).toString("utf8")))
    process.stdin.on("error", () => done(Buffer.concat(chunks).toString("utf8")))
  })

/** The bin's `hook` entry: false when the arguments are not the hook's (the full CLI answers them). */
export const hookMain = async (argv: ReadonlyArray<string>): Promise<boolean> => {
  const parsed = hookArguments(argv.slice(3))
  if (parsed === undefined) return false
  const result = await runHookClient(
    { ...parsed, stdin: await readStdin(), env: process.env, processCwd: process.cwd() },
    argv[1]!,
  ).catch(
    // Nothing above is meant to reject (the in-process path catches its own problems); if it
    // does all the same, the agent still gets its answer and exit 0.
    (error: unknown): HookRunResult => ({
      stdout: protocolOutput(parsed.agent),
      problems: [`rewind hook ${parsed.agent}: ${messageOf(error)}; nothing recorded`],
      handled: false,
    }),
  )
  process.stdout.write(result.stdout)
  for (const line of result.problems) process.stderr.write(`${line}\n`)
  return true
}
