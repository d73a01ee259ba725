/**
 * JSON-RPC 2.0 framing for `rewind serve`: the error codes, and the classification of one
 * incoming line into a request, a notification or the error that answers it.
 *
 * Choices (docs/server.md): batches (a JSON array) are answered `-32600` rather than run, as MCP
 * does since 2025-06-18, because one line then stays one unit of backpressure and cancellation;
 * ids are strings or numbers (a `null` id is refused: it cannot be told apart from an answer to an
 * unparsable line).
 */

export const ErrorCode = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** An infrastructure error of the engine (store, I/O); `data.tag` names the typed error. */
  serverError: -32000,
  /** The call was cancelled (`$/cancelRequest`) or the server is shutting down; LSP's code. */
  requestCancelled: -32800,
} as const

export type RequestId = string | number

export interface Request {
  readonly id: RequestId
  readonly method: string
  readonly params: unknown
}

export interface Notification {
  readonly method: string
  readonly params: unknown
}

export type Incoming =
  | { readonly _tag: "request"; readonly request: Request }
  | { readonly _tag: "notification"; readonly notification: Notification }
  | {
      readonly _tag: "invalid"
      readonly id: RequestId | null
      readonly code: number
      readonly message: string
    }

export interface ErrorObject {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

export const response = (id: RequestId | null, result: unknown) => ({ jsonrpc: "2.0", id, result })

export const errorResponse = (id: RequestId | null, error: ErrorObject) => ({ jsonrpc: "2.0", id, error })

export const notification = (method: string, params: unknown) => ({ jsonrpc: "2.0", method, params })

const isId = (value: unknown): value is RequestId =>
  typeof value === "string" || (typeof value === "number" && Number.isFinite(value))

/** What one line is; never throws. */
export const classify = (line: string): Incoming => {
  let message: unknown
  try {
    message = JSON.parse(line)
  } catch (error) {
    return {
      _tag: "invalid",
      id: null,
      code: ErrorCode.parseError,
      message: `parse error: not JSON (${error instanceof Error ? error.message : String(error)})`,
    }
  }
  if (Array.isArray(message)) {
    return {
      _tag: "invalid",
      id: null,
      code: ErrorCode.invalidRequest,
      message: "invalid request: batches are not supported; send one request per line",
    }
  }
  if (typeof message !== "object" || message === null) {
    return {
      _tag: "invalid",
      id: null,
      code: ErrorCode.invalidRequest,
      message: "invalid request: not an object",
    }
  }
  const m = message as Record<string, unknown>
  const id = "id" in m ? m.id : undefined
  const answerId = isId(id) ? id : null
  const invalid = (why: string): Incoming => ({
    _tag: "invalid",
    id: answerId,
    code: ErrorCode.invalidRequest,
    message: `invalid request: ${why}`,
  })
  if (m.jsonrpc !== "2.0") return invalid('"jsonrpc" must be "2.0"')
  if (typeof m.method !== "string") return invalid('"method" must be a string')
  if ("params" in m && (typeof m.params !== "object" || m.params === null)) {
    return invalid('"params" must be an object (by name) or an array (by position)')
  }
  if (id === undefined) return { _tag: "notification", notification: { method: m.method, params: m.params } }
  if (!isId(id)) return invalid('"id" must be a string or a number')
  return { _tag: "request", request: { id, method: m.method, params: m.params } }
}
