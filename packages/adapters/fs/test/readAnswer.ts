/** A read's answer as data, for comparing two ways of reading: the bytes and mode, absence, or the failure's tag, code and reason. */
import { Either, Option } from "effect"

export const readAnswerShape = (
  answer: Either.Either<Option.Option<{ content: Uint8Array; mode: number }>, unknown>,
) => {
  if (Either.isLeft(answer)) {
    const e = answer.left as { _tag?: string; code?: string; reason?: string }
    return { failed: e._tag, code: e.code, reason: e.reason }
  }
  return Option.match(answer.right, {
    onNone: () => "absent",
    onSome: (f) => ({ content: Buffer.from(f.content).toString("base64"), mode: f.mode }),
  })
}
