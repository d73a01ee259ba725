/**
 * A JSON-RPC client of the BUILT `rewind serve` (the package's bin, spawned): requests by id,
 * answers matched by id, notifications kept, and a transcript of every line each way.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { BIN } from "../cliHarness.js"

export interface RpcMessage {
  readonly jsonrpc: "2.0"
  readonly id?: string | number | null
  readonly method?: string
  readonly params?: unknown
  readonly result?: {
    ok: boolean
    value?: unknown
    refusal?: { kind: string; message: string; details?: unknown }
  }
  readonly error?: { code: number; message: string; data?: unknown }
}

export const startServer = (args: ReadonlyArray<string>, cwd?: string) => {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [BIN, "serve", ...args], {
    stdio: ["pipe", "pipe", "pipe"],
    ...(cwd === undefined ? {} : { cwd }),
    env: { ...process.env, NO_COLOR: "1" },
  })
  const messages: Array<RpcMessage> = []
  const transcript: Array<string> = []
  const waiting = new Map<string | number | null, Array<(m: RpcMessage) => void>>()
  let stderr = ""
  let buffered = ""
  let nextId = 1
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d
  })
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk
    for (let at = buffered.indexOf("\n"); at >= 0; at = buffered.indexOf("\n")) {
      const line = buffered.slice(0, at)
      buffered = buffered.slice(at + 1)
      transcript.push(`← ${line}`)
      const message = JSON.parse(line) as RpcMessage
      messages.push(message)
      if (message.id !== undefined && message.method === undefined) {
        const list = waiting.get(message.id) ?? []
        waiting.delete(message.id)
        for (const resolve of list) resolve(message)
      }
    }
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  )
  const answerTo = (id: string | number | null) =>
    new Promise<RpcMessage>((resolve) => {
      const found = messages.find((m) => m.id === id && m.method === undefined)
      if (found !== undefined) return resolve(found)
      waiting.set(id, [...(waiting.get(id) ?? []), resolve])
    })
  const writeLine = (line: string) => {
    transcript.push(`→ ${line.length > 300 ? `${line.slice(0, 300)}… (${line.length} bytes)` : line}`)
    child.stdin.write(`${line}\n`)
  }
  return {
    child,
    messages,
    transcript,
    stderr: () => stderr,
    exited,
    answerTo,
    writeLine,
    /** Sends a request and resolves with its answer message. */
    request: (method: string, params?: unknown, id: string | number = nextId++) => {
      writeLine(JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }))
      return answerTo(id)
    },
    /** Sends a request and resolves with `value`, failing the test on a refusal or an error. */
    ok: async <A = unknown>(method: string, params?: unknown): Promise<A> => {
      const id = nextId++
      writeLine(JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }))
      const m = await answerTo(id)
      if (m.error !== undefined || m.result?.ok !== true) {
        throw new Error(`${method} did not succeed: ${JSON.stringify(m.error ?? m.result)}`)
      }
      return m.result.value as A
    },
    /** Ends stdin and waits for the process to exit. */
    close: async () => {
      child.stdin.end()
      return exited
    },
  }
}

export type ServerProcess = ReturnType<typeof startServer>
