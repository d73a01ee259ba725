/**
 * One call of an operation as the JSON-RPC server runs it: the shapes of an operation table and
 * its implementation, the params decoded with the operation's argument Schemas (by position or by
 * name; the first bad one answered `-32602`, clipped), and the call run and answered exactly once.
 * Nothing here names an operation.
 */
import { Cause, Effect, Either, Option, ParseResult, Schema } from "effect"
import {
  ErrorCode,
  type ErrorObject,
  errorResponse,
  notification,
  type Request,
  response,
} from "./jsonRpc.js"

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

export const PROGRESS_METHOD = "$/progress"

export type Decoded = { readonly args: ReadonlyArray<unknown>; readonly session: string | undefined }

const MAX_DETAIL_CHARS = 400
export const clip = (text: string) =>
  text.length > MAX_DETAIL_CHARS ? `${text.slice(0, MAX_DETAIL_CHARS - 1)}…` : text

const fieldOf = (param: string, path: ReadonlyArray<PropertyKey>) =>
  [param, ...path.map((key) => (typeof key === "number" ? `[${key}]` : `.${String(key)}`))].join("")

/** The decoded arguments of a call, or the `-32602` error naming the first bad one. */
export const decodeParams = (op: ServedOperation, params: unknown): Either.Either<Decoded, ErrorObject> => {
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

export const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** A typed failure of the engine as a JSON-RPC error, its tag in `data`. */
export const infrastructureError = (error: unknown): ErrorObject => {
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
 * Runs one decoded call and sends its one answer: the success encoded with the operation's Schema
 * (a value outside it is an internal error, never sent as is), a refusal as a value, a typed
 * failure with its tag (then `afterFailure` runs, the answer written), an interruption as
 * `-32800`. A call of an operation with `progress` gets an `onProgress` in its last argument,
 * throttled per phase.
 */
export const runCall =
  <T extends OperationTable>(
    implementation: Implementation<T>,
    send: (message: unknown) => Effect.Effect<void>,
    progressIntervalMs: number,
    afterFailure: (error: unknown) => Effect.Effect<void> = () => Effect.void,
  ) =>
  (request: Request, op: ServedOperation, decoded: Decoded) => {
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
          const encoded = Schema.encodeUnknownEither(op.success as Schema.Schema.AnyNoContext)(outcome.value)
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
            return Effect.zipRight(
              send(errorResponse(request.id, infrastructureError(failure.value))),
              afterFailure(failure.value),
            )
          return send(
            errorResponse(request.id, {
              code: ErrorCode.internalError,
              message: clip(`internal error: ${describe(Cause.squash(cause))}`),
            }),
          )
        },
      }),
      Effect.onInterrupt(() =>
        send(errorResponse(request.id, { code: ErrorCode.requestCancelled, message: "request cancelled" })),
      ),
    )
  }
