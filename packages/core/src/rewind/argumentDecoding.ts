/**
 * The check every `Rewind` call goes through before anything runs (`decodeArguments`): each
 * argument decoded with its Schema, in call order. A call answers either the decoded values
 * (unknown keys of input objects dropped) or one `invalid_input` sentence naming the operation,
 * the argument and the first bad field, clipped so a huge wrong value is never echoed. The check
 * never throws: a value that cannot even be read (a throwing getter, a Proxy) is refused too.
 */
import { describeError } from "@rewind/contracts"
import { Either, ParseResult, Schema } from "effect"

/** Longest message an `invalid_input` answer carries: a 10 MB wrong value must not be echoed. */
const MAX_MESSAGE_CHARS = 400

const clip = (text: string) =>
  text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS - 1)}…` : text

const fieldOf = (param: string, path: ReadonlyArray<PropertyKey>) =>
  [param, ...path.map((key) => (typeof key === "number" ? `[${key}]` : `.${String(key)}`))].join("")

/** One argument of an operation, in call order (see `RewindOperations`). */
export interface OperationArgument {
  /** The argument's name; `sessionId` is spelled the same in every operation. */
  readonly name: string
  /** Decodes what a host sends; JSON-compatible on its encoded side, except file content bytes. */
  readonly schema: Schema.Schema.AnyNoContext
  /** The trailing input/options object may be omitted. */
  readonly optional?: boolean
}

/**
 * Decodes a call's arguments against its operation's Schemas: the decoded arguments, or the
 * sentence of an `invalid_input` answer naming the first bad field (`appendReply: input.parts[0].kind: …`).
 */
export const decodeArguments = (
  operation: string,
  params: ReadonlyArray<OperationArgument>,
  args: ReadonlyArray<unknown>,
): Either.Either<ReadonlyArray<unknown>, string> => {
  if (args.length > params.length) {
    return Either.left(
      `${operation}: takes at most ${params.length} argument(s) (${params.map((p) => p.name).join(", ")}), got ${args.length}`,
    )
  }
  const decoded: Array<unknown> = []
  for (const [i, { name, schema }] of params.entries()) {
    try {
      const result = Schema.decodeUnknownEither(schema)(args[i])
      if (Either.isRight(result)) {
        decoded.push(result.right)
        continue
      }
      const [issue] = ParseResult.ArrayFormatter.formatErrorSync(result.left)
      return Either.left(
        clip(`${operation}: ${fieldOf(name, issue?.path ?? [])}: ${issue?.message ?? "is not valid"}`),
      )
    } catch (error) {
      // A throwing getter or Proxy trap: the value cannot even be read.
      return Either.left(clip(`${operation}: ${name}: could not be read (${describeError(error)})`))
    }
  }
  return Either.right(decoded)
}
