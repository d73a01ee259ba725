/**
 * Refusals: the expected "no" answers of Rewind, as values with a kind a program can switch on and
 * a message a person can act on. In Effect programs they travel in the error channel as `Refused`;
 * `toOutcome` turns them into `{ ok: false, refusal }` for hosts that want plain values.
 */
import { Effect, Schema } from "effect"

export const RefusalKind = Schema.Literal(
  "not_found",
  "session_not_found",
  "not_on_active_branch",
  "not_a_user_message",
  "summary_target",
  "no_checkpoint",
  "unsafe_files",
  "nothing_to_undo",
  "not_last_turn",
  "task_not_stopped",
  "token_invalid",
  "token_expired",
  "token_used",
  "busy",
  "conflict",
  "invalid_input",
  "fork_boundary_invalid",
  "unavailable",
  "workspace_refused",
)
export type RefusalKind = typeof RefusalKind.Type

export const Refusal = Schema.Struct({
  kind: RefusalKind,
  message: Schema.String,
  details: Schema.optional(Schema.Unknown),
})
export type Refusal = typeof Refusal.Type

export class Refused extends Schema.TaggedError<Refused>()("Refused", {
  kind: RefusalKind,
  message: Schema.String,
  details: Schema.optional(Schema.Unknown),
}) {
  get refusal(): Refusal {
    return this.details === undefined
      ? { kind: this.kind, message: this.message }
      : { kind: this.kind, message: this.message, details: this.details }
  }
}

export const refuse = (
  kind: RefusalKind,
  message: string,
  details?: unknown,
): Effect.Effect<never, Refused> =>
  Effect.fail(new Refused(details === undefined ? { kind, message } : { kind, message, details }))

export type Outcome<A> =
  | { readonly ok: true; readonly value: A }
  | { readonly ok: false; readonly refusal: Refusal }

/** Turns a refusal in the error channel into a value; other errors stay errors. */
export const toOutcome = <A, E, R>(
  effect: Effect.Effect<A, E | Refused, R>,
): Effect.Effect<Outcome<A>, Exclude<E, Refused>, R> =>
  effect.pipe(
    Effect.map((value): Outcome<A> => ({ ok: true, value })),
    Effect.catchIf(
      (e): e is Refused => e instanceof Refused,
      (e) => Effect.succeed<Outcome<A>>({ ok: false, refusal: e.refusal }),
    ),
  ) as Effect.Effect<Outcome<A>, Exclude<E, Refused>, R>
