// The value of an `{ ok: true, value }` answer; a refusal fails the test with its own message.
import type { Outcome } from "@rewind/contracts"

export const okValue = <A>(outcome: Outcome<A>): A => {
  if (!outcome.ok) throw new Error(`refused (${outcome.refusal.kind}): ${outcome.refusal.message}`)
  return outcome.value
}
