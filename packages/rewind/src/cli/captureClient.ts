/**
 * `rewind capture --json` handed to a running server: when `rewind serve` (the hook server, or one
 * the user started with `--socket`) already answers on the socket of this (workspace, store) pair
 * (server/workspaceSocket.ts), the capture is made there, by its live engine, with the caches and
 * the watcher it holds, instead of in a fresh process that loads the CLI, opens the store and
 * scans the whole tree. The bin tries this before loading anything else (cli/bin.ts), so this
 * module loads only Node built-ins.
 *
 * Invariants:
 * - only a plain `capture --json` is handed over (plainCaptureArgs.ts, the one reading of a plain
 *   capture command line); anything else (`--path`, `--help`, human output, an id or number the
 *   CLI would refuse) is the full CLI's;
 * - a server is never started for it, and `REWIND_CAPTURE_SERVER=off` turns the hand-over off;
 * - a capture is never made twice: until the first request is sent, any failure (no socket, no
 *   answer to the connection) falls back to the full CLI; once sent, a lost or garbled answer is
 *   an error (exit 2), never followed by a capture in this process. The one answer that falls
 *   back after a request is `StoreReplaced`: the server's store was removed or replaced, so it ran
 *   nothing and stops, and the capture is made here, in the store as it is now (said on stderr);
 * - the output is the full CLI's (`session_created` when it made the session, then `point`), and
 *   every `point` line says which path ran: `"via":"server"` here, `"via":"process"` there.
 */
import { randomBytes } from "node:crypto"
import type { Socket } from "node:net"
import { join, resolve } from "node:path"
import { connectSocket, ServerError, socketRpc } from "../server/socketClient.js"
import { workspaceSocketPath } from "../server/workspaceSocket.js"
import { STORE_DIR_NAME } from "../workspaceRoot.js"
import { plainCaptureArgs } from "./plainCaptureArgs.js"
import { pointRecord, scanRecord } from "./pointRecord.js"

type Env = Readonly<Record<string, string | undefined>>

/** The session `capture` creates in an empty store (snapshotCommands.ts, CLI_CAPTURE_SESSION_ID). */
const CLI_SESSION = "ses_rewind_cli_captures"
/**
 * How long one answer may take. A capture through a live engine is milliseconds, but the server's
 * first one is a full scan and hash (minutes for a first capture of a large tree on a busy machine).
 */
const ANSWER_TIMEOUT_MS = 30 * 60_000

interface CaptureArgs {
  readonly workspace: string
  readonly dir: string
  readonly session?: string
  readonly turn?: string
  readonly maxFiles?: number
}

/** The arguments after `capture`, when they are ones this client takes; undefined otherwise. */
export const parseCaptureArgs = (args: ReadonlyArray<string>, cwd: string): CaptureArgs | undefined => {
  const plain = plainCaptureArgs(args, cwd)
  if (plain === undefined || !plain.json) return undefined
  const workspace = plain.workspace
  return {
    workspace,
    dir: plain.dir === undefined ? join(workspace, STORE_DIR_NAME) : resolve(cwd, plain.dir),
    ...(plain.session === undefined ? {} : { session: plain.session }),
    ...(plain.turn === undefined ? {} : { turn: plain.turn }),
    ...(plain.maxFiles === undefined ? {} : { maxFiles: plain.maxFiles }),
  }
}

/** The CLI's default turn id (snapshotCommands.ts `manualTurnId`). */
const manualTurnId = () =>
  `manual-${new Date()
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z")}-${randomBytes(3).toString("hex")}`

interface Refusal {
  readonly kind: string
  readonly message: string
  readonly details?: unknown
}
type Outcome =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly refusal: Refusal }

/** A failure after the first request was sent: reported, never retried in this process. */
class Failed extends Error {
  constructor(
    message: string,
    readonly reason: string,
    readonly details?: unknown,
  ) {
    super(message)
  }
}

/** The server's store was removed or replaced: it ran nothing, and the capture is made in this process. */
class StoreGone extends Error {}

/**
 * The server's methods over the connection; any failure of an answer is a `Failed` (never
 * retried), but `StoreReplaced`, a `StoreGone`.
 */
const rpc = (socket: Socket) => {
  const call = socketRpc(socket, ANSWER_TIMEOUT_MS)
  return (method: string, params: ReadonlyArray<unknown>) =>
    (call(method, params) as Promise<Outcome>).catch((error: unknown) => {
      if (error instanceof ServerError && error.tag === "StoreReplaced") throw new StoreGone(error.message)
      throw new Failed(error instanceof Error ? error.message : String(error), "server")
    })
}

const line = (type: string, fields: Record<string, unknown>) =>
  process.stdout.write(`${JSON.stringify({ v: 1, type, ...fields })}\n`)

const answerOf = (outcome: Outcome): unknown => {
  if (outcome.ok) return outcome.value
  throw new Failed(outcome.refusal.message, outcome.refusal.kind, outcome.refusal.details)
}

/** The capture, once connected: the lines printed and the exit code. */
const captureThrough = async (call: ReturnType<typeof rpc>, args: CaptureArgs): Promise<number> => {
  let sessionId = args.session
  if (sessionId === undefined) {
    const all = answerOf(await call("listSessions", [])) as ReadonlyArray<{ sessionId: string }>
    sessionId = all[0]?.sessionId
  }
  if (sessionId === undefined) {
    const created = await call("createSession", [
      { sessionId: CLI_SESSION, title: "rewind CLI captures", cwd: args.workspace },
    ])
    // Refused `conflict`: another capture created it between our read and our append.
    if (created.ok) {
      const value = created.value as { id: string; title: string }
      line("session_created", { sessionId: value.id, title: value.title })
    } else if (created.refusal.kind !== "conflict") answerOf(created)
    sessionId = CLI_SESSION
  }
  const result = answerOf(
    await call("capturePoint", [
      sessionId,
      args.turn ?? manualTurnId(),
      args.maxFiles === undefined ? {} : { settings: { maxFiles: args.maxFiles } },
    ]),
  ) as
    | { _tag: "NotCaptured"; reason: string }
    | { _tag: "Captured"; existing: boolean; point: Record<string, unknown>; scan?: Record<string, unknown> }
  if (result._tag === "NotCaptured") throw new Failed(result.reason, "not_captured")
  const p = result.point
  line("point", {
    ...pointRecord(sessionId, p),
    existing: result.existing,
    ...scanRecord(result.scan),
    via: "server",
  })
  return 0
}

/**
 * Runs `rewind capture …` through the workspace's running server when it can (see the header):
 * the exit code, or undefined when the full CLI must run the command instead.
 */
export const captureThroughServer = async (
  args: ReadonlyArray<string>,
  env: Env = process.env,
  cwd: string = process.cwd(),
): Promise<number | undefined> => {
  if (env.REWIND_CAPTURE_SERVER === "off") return undefined
  const parsed = parseCaptureArgs(args, cwd)
  if (parsed === undefined) return undefined
  let socketPath: string | undefined
  try {
    socketPath = workspaceSocketPath(parsed.workspace, parsed.dir, env, false)
  } catch {
    return undefined
  }
  if (socketPath === undefined) return undefined
  let socket: Socket
  try {
    socket = await connectSocket(socketPath)
  } catch {
    // No server (no socket, or a stopped server's leftover): the capture runs in this process.
    return undefined
  }
  try {
    return await captureThrough(rpc(socket), parsed)
  } catch (error) {
    if (error instanceof StoreGone) {
      process.stderr.write(`rewind capture: ${error.message} (the server on ${socketPath}); capturing here\n`)
      return undefined
    }
    const failure = error instanceof Failed ? error : new Failed(String(error), "Error")
    process.stderr.write(`error: ${failure.message} (through the server on ${socketPath})\n`)
    line("error", {
      code: 2,
      reason: failure.reason,
      message: failure.message,
      ...(failure.details === undefined ? {} : { details: failure.details }),
      via: "server",
    })
    return 2
  } finally {
    socket.destroy()
  }
}
