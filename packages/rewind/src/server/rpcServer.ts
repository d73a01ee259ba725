/**
 * The JSON-RPC server, generic over an operation table: every operation of the table is one
 * method, its params decoded with the operation's argument Schemas and its `{ ok: true, value }`
 * encoded with its `success` Schema. Nothing here names an operation; the table and an
 * implementation of it are handed in (today `facadeOperations.ts`, the declared `Rewind` service
 * once it lands), so a new operation is served without touching this file.
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
import {
  Cause,
  Effect,
  Either,
  Fiber,
  FiberMap,
  JSONSchema,
  Option,
  ParseResult,
  Schema,
  type SchemaAST,
} from "effect"
import {
  classify,
  ErrorCode,
  type ErrorObject,
  errorResponse,
  notification,
  type Request,
  type RequestId,
  response,
} from "./jsonRpc.js"
import { type LineEvent, makeLineSplitter } from "./lineSplitter.js"

/** One argument of an operation, in call order (the shape of the core's `OperationArgument`). */
export interface ServedArgument {
  readonly name: string
  readonly schema: Schema.Schema.Any
  readonly optional?: boolean
}

/** The shape of the core's `OperationSpec` this server needs. */
export interface ServedOperation {
  readonly name: string
  readonly summary: string
  readonly args: ReadonlyArray<ServedArgument>
  readonly success: Schema.Schema.Any
  readonly access: "read" | "write" | "destructive"
  readonly session?: string
  readonly progress?: boolean
}

export interface Outcome {
  readonly ok: boolean
  readonly value?: unknown
  readonly refusal?: unknown
}

// biome-ignore lint/suspicious/noExplicitAny: an implementation's methods take their own decoded arguments
export type ServedMethod = (...args: ReadonlyArray<any>) => Effect.Effect<Outcome, unknown>

export type OperationTable = { readonly [name: string]: ServedOperation }
export type Implementation<T extends OperationTable> = { readonly [K in keyof T]: ServedMethod }

export interface RpcServerOptions {
  /** A line longer than this is answered `-32600` without being buffered (default 32 MiB). */
  readonly maxLineBytes?: number
  /** Calls of one connection running or waiting at once before it stops reading (default 64). */
  readonly maxInFlight?: number
  /** Least time between two progress notifications of one call in the same phase (default 100 ms). */
  readonly progressIntervalMs?: number
}

export const DEFAULT_MAX_LINE_BYTES = 32 * 1024 * 1024
export const DEFAULT_MAX_IN_FLIGHT = 64

export const CANCEL_METHOD = "$/cancelRequest"
export const PROGRESS_METHOD = "$/progress"

type Decoded = { readonly args: ReadonlyArray<unknown>; readonly session: string | undefined }

const MAX_DETAIL_CHARS = 400
const clip = (text: string) =>
  text.length > MAX_DETAIL_CHARS ? `${text.slice(0, MAX_DETAIL_CHARS - 1)}…` : text

const fieldOf = (param: string, path: ReadonlyArray<PropertyKey>) =>
  [param, ...path.map((key) => (typeof key === "number" ? `[${key}]` : `.${String(key)}`))].join("")

/** The decoded arguments of a call, or the `-32602` error naming the first bad one. */
const decodeParams = (op: ServedOperation, params: unknown): Either.Either<Decoded, ErrorObject> => {
  const invalid = (message: string, data?: unknown): Either.Either<Decoded, ErrorObject> =>
    Either.left({
      code: ErrorCode.invalidParams,
      message: clip(`invalid params: ${op.name}: ${message}`),
      ...(data === undefined ? {} : { data }),
    })
  let given: ReadonlyArray<unknown>
  if (params === undefined) {
    given = []
  } else if (Array.isArray(params)) {
    if (params.length > op.args.length) {
      return invalid(
        `takes at most ${op.args.length} param(s) (${op.args.map((a) => a.name).join(", ")}), got ${params.length}`,
      )
    }
    given = params
  } else {
    const byName = params as Record<string, unknown>
    const names = new Set(op.args.map((a) => a.name))
    const unknown = Object.keys(byName).filter((key) => !names.has(key))
    if (unknown.length > 0) {
      return invalid(
        `unknown param(s) ${unknown.map((k) => JSON.stringify(k)).join(", ")}; it takes ${op.args.map((a) => a.name).join(", ")}`,
      )
    }
    given = op.args.map((a) => byName[a.name])
  }
  const args: Array<unknown> = []
  let session: string | undefined
  for (const [i, arg] of op.args.entries()) {
    const value = given[i]
    if (value === null || value === undefined) {
      if (arg.optional) {
        args.push(undefined)
        continue
      }
      if (value === undefined) return invalid(`${arg.name}: is missing`, { param: arg.name })
    }
    const result = Schema.decodeUnknownEither(arg.schema as Schema.Schema.AnyNoContext)(value)
    if (Either.isLeft(result)) {
      const [issue] = ParseResult.ArrayFormatter.formatErrorSync(result.left)
      const field = fieldOf(arg.name, issue?.path ?? [])
      return invalid(`${field}: ${issue?.message ?? "is not valid"}`, { param: arg.name, field })
    }
    args.push(result.right)
    if (arg.name === op.session && typeof result.right === "string") session = result.right
  }
  // Trailing omitted optional arguments are left off, so the implementation's own defaults apply.
  while (args.length > 0 && args[args.length - 1] === undefined) args.pop()
  return Either.right({ args, session })
}

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** A typed failure of the engine as a JSON-RPC error, its tag in `data`. */
const infrastructureError = (error: unknown): ErrorObject => {
  const tag =
    typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string"
      ? error._tag
      : "UnknownError"
  const message =
    typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
      ? error.message
      : String(error)
  return { code: ErrorCode.serverError, message: clip(message), data: { tag, message } }
}

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

        const keyOf = (id: RequestId) => `${typeof id}:${id}`

        const answer = (request: Request, op: ServedOperation, decoded: Decoded) => {
          const args = [...decoded.args]
          if (op.progress === true) {
            let last = 0
            let phase: unknown
            const onProgress = (progress: unknown) => {
              const now = Date.now()
              const p = (progress as { phase?: unknown } | null)?.phase
              if (p === phase && p !== "done" && now - last < progressIntervalMs) return
              last = now
              phase = p
              Effect.runSync(send(notification(PROGRESS_METHOD, { id: request.id, progress })))
            }
            const at = op.args.length - 1
            while (args.length < op.args.length) args.push(undefined)
            args[at] = { ...((args[at] as object | undefined) ?? {}), onProgress }
          }
          const method = implementation[op.name as keyof T]!
          const call = Effect.suspend(() => method(...args))
          return call.pipe(
            Effect.matchCauseEffect({
              onSuccess: (outcome) => {
                if (!outcome.ok) return send(response(request.id, { ok: false, refusal: outcome.refusal }))
                const encoded = Schema.encodeUnknownEither(op.success as Schema.Schema.AnyNoContext)(
                  outcome.value,
                )
                return Either.isRight(encoded)
                  ? send(response(request.id, { ok: true, value: encoded.right }))
                  : send(
                      errorResponse(request.id, {
                        code: ErrorCode.internalError,
                        message: clip(
                          `internal error: ${op.name} answered a value outside its Schema: ${encoded.left.message}`,
                        ),
                      }),
                    )
              },
              onFailure: (cause) => {
                if (Cause.isInterruptedOnly(cause)) return Effect.interrupt
                const failure = Cause.failureOption(cause)
                if (Option.isSome(failure))
                  return send(errorResponse(request.id, infrastructureError(failure.value)))
                return send(
                  errorResponse(request.id, {
                    code: ErrorCode.internalError,
                    message: clip(`internal error: ${describe(Cause.squash(cause))}`),
                  }),
                )
              },
            }),
            Effect.onInterrupt(() =>
              send(
                errorResponse(request.id, { code: ErrorCode.requestCancelled, message: "request cancelled" }),
              ),
            ),
          )
        }

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
          if (output.writableNeedDrain && !outputClosed)
            yield* awaitEvent(output, ["drain", "close", "error"])
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

// --- the schema document -------------------------------------------------------------------

/** A JSON Schema of what a host sends for `schema`; parts JSON cannot carry (functions) are left out. */
const jsonSchemaOf = (schema: Schema.Schema.Any): object => {
  const attempt = (s: Schema.Schema.Any): Option.Option<object> => {
    try {
      return Option.some(
        JSONSchema.make(Schema.encodedBoundSchema(s as Schema.Schema.AnyNoContext)) as object,
      )
    } catch {
      return Option.none()
    }
  }
  const direct = attempt(schema)
  if (Option.isSome(direct)) return direct.value
  const pruned = prune(schema.ast)
  if (pruned !== undefined) {
    const again = attempt(Schema.make(pruned))
    if (Option.isSome(again)) return again.value
  }
  return { description: "not expressible as JSON Schema; see docs/server.md" }
}

/** The AST without members and properties JSON cannot express (a declared function or AbortSignal). */
const prune = (ast: SchemaAST.AST): SchemaAST.AST | undefined => {
  const expressible = (node: SchemaAST.AST) => {
    try {
      JSONSchema.make(Schema.encodedBoundSchema(Schema.make(node)))
      return true
    } catch {
      return false
    }
  }
  switch (ast._tag) {
    case "Union": {
      const members = ast.types
        .filter((t) => t._tag !== "UndefinedKeyword")
        .map((t) => prune(t) ?? t)
        .filter(expressible)
      if (members.length === 0) return undefined
      return members.length === 1 ? members[0] : Schema.Union(...members.map((m) => Schema.make(m))).ast
    }
    case "TypeLiteral": {
      const kept = ast.propertySignatures.filter((p) => expressible(p.type) || prune(p.type) !== undefined)
      return new (ast.constructor as typeof SchemaAST.TypeLiteral)(
        kept.map((p) => {
          const inner = expressible(p.type) ? p.type : prune(p.type)!
          return new (p.constructor as typeof SchemaAST.PropertySignature)(
            p.name,
            inner,
            p.isOptional,
            p.isReadonly,
            p.annotations,
          )
        }),
        ast.indexSignatures,
        ast.annotations,
      )
    }
    case "Refinement":
    case "Transformation":
      return undefined
    default:
      return undefined
  }
}

const OutcomeRefusal = {
  type: "object",
  required: ["ok", "refusal"],
  properties: {
    ok: { const: false },
    refusal: {
      type: "object",
      required: ["kind", "message"],
      properties: { kind: { type: "string" }, message: { type: "string" }, details: {} },
    },
  },
}

/** An OpenRPC 1.3 document of every method, derived from the operations' Schemas. */
export const openRpcDocument = (operations: OperationTable, version: string) => ({
  openrpc: "1.3.2",
  info: {
    title: "rewind serve",
    version,
    description:
      "JSON-RPC 2.0, one message per line. A result is an Outcome: { ok: true, value } or { ok: false, refusal }. See docs/server.md.",
  },
  methods: Object.values(operations).map((op) => ({
    name: op.name,
    summary: op.summary,
    paramStructure: "either",
    params: op.args.map((arg) => ({
      name: arg.name,
      required: arg.optional !== true,
      schema: jsonSchemaOf(arg.schema),
    })),
    result: {
      name: "outcome",
      schema: {
        oneOf: [
          {
            type: "object",
            required: ["ok", "value"],
            properties: { ok: { const: true }, value: jsonSchemaOf(op.success) },
          },
          OutcomeRefusal,
        ],
      },
    },
    "x-access": op.access,
    ...(op.session === undefined ? {} : { "x-session": op.session }),
    ...(op.progress === true ? { "x-progress": true } : {}),
  })),
})
