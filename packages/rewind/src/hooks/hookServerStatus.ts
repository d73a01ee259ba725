/**
 * What `rewind status` says about the workspace's hook server: the socket the hook client would
 * reach for this (workspace, store), whether a server answers there, and, from the file the
 * server writes beside its socket (server/socket.ts), its pid and idle exit.
 *
 * Invariants: it only looks (no directory is created, nothing is started or stopped); "running"
 * means a connection to the socket succeeded within a short bound, not that a pid exists.
 */
import { readFileSync } from "node:fs"
import { connectSocket, socketAnswers, socketRpc } from "../server/socketClient.js"
import { serverInfoPath, workspaceSocketPath } from "../server/workspaceSocket.js"

export interface HookServerStatus {
  readonly socket: string | null
  readonly running: boolean
  readonly pid: number | null
  readonly idleExitMs: number | null
  readonly startedAt: number | null
}

const readInfo = (socket: string) => {
  try {
    const info = JSON.parse(readFileSync(serverInfoPath(socket), "utf8")) as Record<string, unknown>
    const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null)
    return { pid: num(info.pid), idleExitMs: num(info.idleExitMs), startedAt: num(info.startedAt) }
  } catch {
    return { pid: null, idleExitMs: null, startedAt: null }
  }
}

export const hookServerStatus = async (
  workspaceRoot: string,
  storeDir: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<HookServerStatus> => {
  const socket = workspaceSocketPath(workspaceRoot, storeDir, env, false) ?? null
  if (socket === null) return { socket, running: false, pid: null, idleExitMs: null, startedAt: null }
  const running = await socketAnswers(socket, 1_000)
  // A stopped server removes its file; one killed leaves it, and then it says nothing true.
  return running
    ? { socket, running, ...readInfo(socket) }
    : { socket, running, pid: null, idleExitMs: null, startedAt: null }
}

/**
 * The running server's `snapshotStatus` (the live engine and its watcher run there, not in the
 * asking process, and it has the store open already); undefined when it does not answer within
 * `timeoutMs`. Undecoded: the caller checks it against the schema it declares.
 */
export const serverSnapshotStatus = async (socket: string, timeoutMs: number): Promise<unknown> => {
  try {
    const connection = await connectSocket(socket, timeoutMs)
    try {
      const answer = (await socketRpc(connection, timeoutMs)("snapshotStatus", [])) as {
        ok?: boolean
        value?: unknown
      }
      return answer.ok === true ? answer.value : undefined
    } finally {
      connection.destroy()
    }
  } catch {
    return undefined
  }
}
