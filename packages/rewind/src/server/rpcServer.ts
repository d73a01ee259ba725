/**
 * The JSON-RPC server, generic over an operation table: every operation of the table is one
 * method, its params decoded with the operation's argument Schemas and its `{ ok: true, value }`
 * encoded with its `success` Schema. Nothing here names an operation; the table and an
 * implementation of it are handed in (the declared `Rewind` service's `RewindOperations`, run by
 * serviceImplementation.ts), so a new operation is served without touching this file.
 *
 * Invariants:
 * - one connection = one byte stream in, one out; every request gets exactly one answer, a
 *   notification none; a bad line is answered and the connection goes on;
 * - backpressure: at most `maxInFlight` calls of a connection run or wait at once; past that (or
 *   while the output does not drain) the connection stops reading, so a flood costs a bounded
 *   amount of memory and is answered in full, never dropped;
 * - calls naming the same session (the operation's `session` argument) run one at a time in the
 *   order they arrived, across every connection of the server; others run concurrently;
 * - `$/cancelRequest { id }` interrupts that call's fiber, which answers `-32800`;
 * - a call of an operation with `progress` gets an `onProgress` in its last argument that sends
 *   `$/progress { id, progress }` notifications (at most one per `progressIntervalMs`, plus every
 *   phase change);
 * - at end of input the connection waits for its calls to answer, then completes; interrupting it
 *   interrupts its calls.
 */
import type { Readable, Writable } from "node:stream"
import { Effect, Either, Fiber, FiberMap, Option } from "effect"
import { classify, ErrorCode, errorResponse, type Request, type RequestId, response } from "./jsonRpc.js"
import { type LineEvent, makeLineSplitter } from "./lineSplitter.js"

import {
  clip,
  decodeParams,
  describe,
  type Implementation,
  type OperationTable,
  runCall,
  type ServedOperation,
} from "./rpcCalls.js"

export {
  type Implementation,
  type OperationTable,
  type Outcome,
  PROGRESS_METHOD,
  type ServedArgument,
  type ServedMethod,
  type ServedOperation,
} from "./rpcCalls.js"

export { openRpcDocument } from "./rpcSchemaDocument.js"

export interface RpcServerOptions {
  /** A line longer than this is answered `-32600` without being buffered (default 32 MiB). */
  readonly maxLineBytes?: number
  /** Calls of one connection running or waiting at once before it stops reading (default 64). */
  readonly maxInFlight?: number
  /** Least time between two progress notifications of one call in the same phase (default 100 ms). */
  readonly progressIntervalMs?: number
  /** Runs after a call's typed failure was answered (serveCommand stops the server on `StoreReplaced`). */
  readonly afterFailure?: (error: unknown) => Effect.Effect<void>
}

export const DEFAULT_MAX_LINE_BYTES = 32 * 1024 * 1024
export const DEFAULT_MAX_IN_FLIGHT = 64

export const CANCEL_METHOD = "$/cancelRequest"

/**
 * The keyed FIFO lock: a call on a session waits for every earlier call on it (finished or
 * cancelled) and for nothing else.
 */
const makeSessionQueue = () => {
  const tails = new Map<string, Promise<void>>()
  return {
    /** Reserves the next turn on `key` now (so arrival order holds); returns the wait and the release. */
    reserve: (key: string) => {
      const previous = tails.get(key) ?? Promise.resolve()
      let release!: () => void
      const done = new Promise<void>((resolve) => {
        release = resolve
      })
      const tail = Promise.all([previous, done]).then(() => undefined)
      tails.set(key, tail)
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key)
      })
      return { wait: Effect.promise(() => previous), release: Effect.sync(release) }
    },
    size: () => tails.size,
  }
}

const awaitEvent = (emitter: NodeJS.EventEmitter, names: ReadonlyArray<string>) =>
  Effect.async<void>((resume) => {
    const done = () => {
      for (const name of names) emitter.off(name, done)
      resume(Effect.void)
    }
    for (const name of names) emitter.on(name, done)
    return Effect.sync(() => {
      for (const name of names) emitter.off(name, done)
    })
  })

/**
 * Writes one JSON-RPC message a line to a connection's output, and nothing once it is closed. An
 * answer that cannot be written as JSON is replaced by an internal error for the same id.
 */
const makeSender = (output: Writable) => {
  let outputClosed = false
  output.once("close", () => {
    outputClosed = true
  })
  output.once("error", () => {
    outputClosed = true
  })

  const send = (message: unknown) =>
    Effect.sync(() => {
      if (outputClosed || output.destroyed || output.writableEnded) return
      let line: string
      try {
        line = JSON.stringify(message)
      } catch (error) {
        const id = (message as { id?: RequestId }).id ?? null
        line = JSON.stringify(
          errorResponse(id, {
            code: ErrorCode.internalError,
            message: `internal error: the answer could not be written as JSON (${describe(error)})`,
          }),
        )
      }
      output.write(`${line}\n`)
    })
  return { send, isClosed: () => outputClosed }
}

export const makeRpcServer = <T extends OperationTable>(
  operations: T,
  implementation: Implementation<T>,
  options: RpcServerOptions = {},
) => {
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES
  const maxInFlight = options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT
  const progressIntervalMs = options.progressIntervalMs ?? 100
  const sessions = makeSessionQueue()
  const table = new Map<string, ServedOperation>(Object.values(operations).map((op) => [op.name, op]))

  /** Serves one connection until its input ends and its calls have answered. */
  const serveConnection = (input: Readable, output: Writable): Effect.Effect<void> =>
    Effect.scoped(
      Effect.gen(function* () {
        const calls = yield* FiberMap.make<string>()
        const permits = yield* Effect.makeSemaphore(maxInFlight)
        const splitter = makeLineSplitter(maxLineBytes)
        const { send, isClosed } = makeSender(output)

        const keyOf = (id: RequestId) => `${typeof id}:${id}`
        const answer = runCall(implementation, send, progressIntervalMs, options.afterFailure)

        const handleRequest = (request: Request) =>
          Effect.gen(function* () {
            if (request.method === CANCEL_METHOD) {
              // Answered as a request too when a client sent it with an id.
              yield* cancel(request.params)
              yield* send(response(request.id, null))
              return
            }
            const op = table.get(request.method)
            if (op === undefined) {
              yield* send(
                errorResponse(request.id, {
                  code: ErrorCode.methodNotFound,
                  message: clip(`method not found: ${request.method}`),
                }),
              )
              return
            }
            const decoded = decodeParams(op, request.params)
            if (Either.isLeft(decoded)) {
              yield* send(errorResponse(request.id, decoded.left))
              return
            }
            const key = keyOf(request.id)
            if (yield* FiberMap.has(calls, key)) {
              yield* send(
                errorResponse(request.id, {
                  code: ErrorCode.invalidRequest,
                  message: `invalid request: id ${JSON.stringify(request.id)} is already in use by a call in flight`,
                }),
              )
              return
            }
            // Waits here (and so stops reading) while the connection has maxInFlight calls.
            yield* permits.take(1)
            const turn =
              decoded.right.session === undefined ? undefined : sessions.reserve(decoded.right.session)
            const run = answer(request, op, decoded.right)
            const program = turn === undefined ? run : Effect.zipRight(turn.wait, run)
            yield* FiberMap.run(
              calls,
              key,
              program.pipe(
                Effect.ensuring(permits.release(1)),
                Effect.ensuring(turn?.release ?? Effect.void),
              ),
            )
          })

        const cancel = (params: unknown) =>
          Effect.gen(function* () {
            const id = (params as { id?: unknown } | null | undefined)?.id
            if (typeof id !== "string" && typeof id !== "number") return
            const fiber = yield* FiberMap.get(calls, keyOf(id)).pipe(Effect.option)
            if (Option.isSome(fiber)) yield* Fiber.interruptFork(fiber.value)
          })

        const handle = (event: LineEvent) =>
          Effect.gen(function* () {
            if (event._tag === "oversize") {
              yield* send(
                errorResponse(null, {
                  code: ErrorCode.invalidRequest,
                  message: `invalid request: a line of ${event.bytes} bytes or more is over the limit of ${maxLineBytes} bytes; it was skipped unread`,
                  data: { tag: "LineTooLong", limitBytes: maxLineBytes },
                }),
              )
              return
            }
            if (event.text.trim() === "") return
            const incoming = classify(event.text)
            switch (incoming._tag) {
              case "invalid":
                yield* send(errorResponse(incoming.id, { code: incoming.code, message: incoming.message }))
                return
              case "notification":
                // Notifications get no answer; only cancellation means anything.
                if (incoming.notification.method === CANCEL_METHOD)
                  yield* cancel(incoming.notification.params)
                return
              case "request":
                yield* handleRequest(incoming.request)
            }
          })

        const iterator = input[Symbol.asyncIterator]()
        for (;;) {
          if (output.writableNeedDrain && !isClosed()) yield* awaitEvent(output, ["drain", "close", "error"])
          const next = yield* Effect.promise(() =>
            iterator.next().catch(() => ({ done: true, value: undefined })),
          )
          const events: ReadonlyArray<LineEvent> = next.done
            ? splitter.end()
            : splitter.push(typeof next.value === "string" ? Buffer.from(next.value) : next.value)
          for (const event of events) yield* handle(event)
          if (next.done) break
        }
        // End of input: every call still answers before the connection completes.
        yield* permits.withPermits(maxInFlight)(Effect.void)
      }),
    )

  return { serveConnection, operations: table, pendingSessions: sessions.size }
}

export type RpcServer = ReturnType<typeof makeRpcServer>
