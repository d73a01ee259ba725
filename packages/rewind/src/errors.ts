/**
 * Errors of the facade itself (the engine's own errors live in @rewind/contracts): a store that
 * was asked to be opened but does not exist.
 */
import { Schema } from "effect"

/** `openRewind({ create: false })` found no store at the expected place; nothing was created. */
export class StoreMissing extends Schema.TaggedError<StoreMissing>()("StoreMissing", {
  path: Schema.String,
  message: Schema.String,
}) {}
