/** Test helpers for the expected "no" answers: fail loudly when an effect did not refuse. */
import { type RefusalKind, Refused } from "@rewind/contracts"
import { Effect } from "effect"

/** Runs an effect that must refuse and returns the refusal; anything else is a test failure. */
export const refusalOf = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<Refused, never, R> =>
  effect.pipe(
    Effect.matchEffect({
      onSuccess: (value) => Effect.dieMessage(`expected a refusal, got success: ${safeJson(value)}`),
      onFailure: (error) =>
        error instanceof Refused
          ? Effect.succeed(error)
          : Effect.dieMessage(`expected a refusal, got error: ${safeJson(error)}`),
    }),
  )

/** Like `refusalOf`, and also checks the refusal's kind. */
export const expectRefusal = <A, E, R>(effect: Effect.Effect<A, E, R>, kind: RefusalKind) =>
  Effect.flatMap(refusalOf(effect), (refusal) =>
    refusal.kind === kind
      ? Effect.succeed(refusal)
      : Effect.dieMessage(`expected refusal '${kind}', got '${refusal.kind}': ${refusal.message}`),
  )

const safeJson = (value: unknown): string => {
  try {
    return JSON.stringify(value)
  } catch {
    return String(value)
  }
}
