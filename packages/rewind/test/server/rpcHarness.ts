/**
 * In-process harness of the generic JSON-RPC server: a connection over two PassThrough streams,
 * the answers parsed as they arrive, and waits on what has arrived (never on time).
 */
import { PassThrough } from "node:stream"
import { Effect, Fiber } from "effect"
import type { makeRpcServer } from "../../src/server/rpcServer.js"

export type Message = Record<string, unknown> & {
  id?: unknown
  result?: unknown
  error?: { code: number; message: string; data?: unknown }
}

export const connect = (server: ReturnType<typeof makeRpcServer>) => {
  const input = new PassThrough()
  const output = new PassThrough()
  const messages: Array<Message> = []
  let buffered = ""
  output.setEncoding("utf8")
  output.on("data", (chunk: string) => {
    buffered += chunk
    let at = buffered.indexOf("\n")
    while (at >= 0) {
      messages.push(JSON.parse(buffered.slice(0, at)) as Message)
      buffered = buffered.slice(at + 1)
      at = buffered.indexOf("\n")
    }
  })
  const fiber = Effect.runFork(server.serveConnection(input, output))
  const until = (predicate: () => boolean) =>
    new Promise<void>((resolve) => {
      // Re-checked on every answer and on every turn of the event loop (state a fake changed).
      const check = () => {
        if (predicate()) resolve()
        else setImmediate(check)
      }
      check()
    })
  return {
    messages,
    send: (message: unknown) =>
      input.write(`${typeof message === "string" ? message : JSON.stringify(message)}\n`),
    raw: (text: string | Uint8Array) => input.write(text),
    /** The answer to request `id`, once it has arrived. */
    answer: async (id: unknown) => {
      await until(() => messages.some((m) => m.id === id && ("result" in m || "error" in m)))
      return messages.find((m) => m.id === id && ("result" in m || "error" in m))!
    },
    until,
    /** Ends the input and resolves when the connection has completed. */
    end: async () => {
      input.end()
      await Effect.runPromise(Fiber.join(fiber))
    },
    fiber,
  }
}

export const request = (id: number | string, method: string, params?: unknown) => ({
  jsonrpc: "2.0",
  id,
  method,
  ...(params === undefined ? {} : { params }),
})
