/**
 * The client side of `rewind serve` on a unix socket (socket.ts), for the small processes that
 * talk to a running server before anything else is loaded: the hook client, the capture
 * hand-over, and `rewind status`'s probe. Node built-ins only, so none of them pays for Effect or
 * the store to reach the server.
 *
 * Invariants: one request at a time per connection, answered by the line with its id (other
 * lines, e.g. progress notifications, are skipped); once a request is written, every way it can
 * end without a result is one of two errors, and the caller decides what each means for it:
 * `ServerError` (the server answered, with a JSON-RPC error: it did not act on the call) or
 * `AnswerLost` (no answer: timeout, a line that is not JSON, the connection failed or closed;
 * the server may still act on the call, so a caller must not simply run it again).
 */
import { createConnection, type Socket } from "node:net"

/** The server answered the request with a JSON-RPC error: the call was not carried out. */
export class ServerError extends Error {
  constructor(
    message: string,
    /** The error's tag (`data.tag`: the engine's typed failure), when the server gave one. */
    readonly tag?: string,
  ) {
    super(message)
  }
}

/** The request was sent but no answer came: the server may have carried it out, or may still. */
export class AnswerLost extends Error {}

/** A connection to the socket, or a rejection (no socket, nobody listening, or `timeoutMs` passed). */
export const connectSocket = (path: string, timeoutMs?: number) =>
  new Promise<Socket>((done, fail) => {
    const socket = createConnection(path)
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            socket.destroy()
            fail(new Error(`no connection to ${path} within ${timeoutMs} ms`))
          }, timeoutMs)
    socket.once("connect", () => {
      clearTimeout(timer)
      socket.off("error", fail)
      done(socket)
    })
    socket.once("error", (error) => {
      clearTimeout(timer)
      fail(error)
    })
  })

/** Whether something accepts connections on the socket within `timeoutMs`. */
export const socketAnswers = (path: string, timeoutMs: number) =>
  connectSocket(path, timeoutMs).then(
    (socket) => {
      socket.destroy()
      return true
    },
    () => false,
  )

interface Waiting {
  readonly id: number
  readonly done: (result: unknown) => void
  readonly fail: (error: Error) => void
}

/**
 * JSON-RPC over one connection: `call(method, params)` resolves with the answer's `result` (an
 * Outcome, for the server's methods) or rejects with `ServerError` or `AnswerLost`. A call that
 * gets no answer within `timeoutMs` destroys the connection.
 */
export const socketRpc = (socket: Socket, timeoutMs: number) => {
  let buffered = ""
  let waiting: Waiting | undefined
  let next = 0
  const settle = (settle: (w: Waiting) => void) => {
    const w = waiting
    waiting = undefined
    if (w !== undefined) settle(w)
  }
  const lost = (message: string) => settle((w) => w.fail(new AnswerLost(message)))
  socket.setEncoding("utf8")
  socket.on("data", (chunk: string) => {
    buffered += chunk
    for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
      const line = buffered.slice(0, nl)
      buffered = buffered.slice(nl + 1)
      let message: { id?: unknown; result?: unknown; error?: { message?: string; data?: { tag?: unknown } } }
      try {
        message = JSON.parse(line)
      } catch {
        lost(`the server answered a line that is not JSON: ${line.slice(0, 200)}`)
        return
      }
      if (waiting === undefined || message.id !== waiting.id) continue
      if (message.error !== undefined || message.result === undefined) {
        const why = message.error?.message ?? "no result"
        const tag = message.error?.data?.tag
        settle((w) =>
          w.fail(
            new ServerError(
              `the server answered an error: ${why}`,
              typeof tag === "string" ? tag : undefined,
            ),
          ),
        )
      } else settle((w) => w.done(message.result))
    }
  })
  socket.on("error", (error) => lost(`the connection failed: ${error.message}`))
  socket.on("close", () => lost("the server closed the connection without answering"))
  return (method: string, params: ReadonlyArray<unknown>) =>
    new Promise<unknown>((done, fail) => {
      const id = ++next
      const timer = setTimeout(() => {
        lost(`the server did not answer within ${timeoutMs} ms`)
        socket.destroy()
      }, timeoutMs)
      waiting = {
        id,
        done: (result) => {
          clearTimeout(timer)
          done(result)
        },
        fail: (error) => {
          clearTimeout(timer)
          fail(error)
        },
      }
      socket.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`)
    })
}
