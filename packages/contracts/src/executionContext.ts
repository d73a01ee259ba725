/**
 * What an assistant message ran with: the model selection and the execution state (mode and
 * host-defined settings). Both are recorded against an assistant message, so a fork can take the
 * ones that were in effect at its last copied reply rather than whatever the parent uses now.
 */
import { Schema } from "effect"

export const ModelSelection = Schema.Struct({
  provider: Schema.String,
  model: Schema.String,
  variant: Schema.optional(Schema.String),
  options: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
})
export type ModelSelection = typeof ModelSelection.Type

export const ExecutionState = Schema.Struct({
  /** The host's mode name (e.g. plan, edit, autonomous). */
  mode: Schema.String,
  /** Host-defined settings in effect (approval policy, sandbox, effort...), as JSON. */
  settings: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
})
export type ExecutionState = typeof ExecutionState.Type
