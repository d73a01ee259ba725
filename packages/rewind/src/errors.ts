/**
 * Errors of the facade itself (the engine's own errors live in @rewind/contracts): a store that
 * was asked to be opened but does not exist, and a call on an instance already closed.
 */
import { Schema } from "effect"

/** `openRewind({ create: false })` found no store at the expected place; nothing was created. */
export class StoreMissing extends Schema.TaggedError<StoreMissing>()("StoreMissing", {
  path: Schema.String,
  message: Schema.String,
}) {}

/** A call on a Rewind after `close()`: nothing ran; open a new instance with `openRewind`. */
export class RewindClosed extends Schema.TaggedError<RewindClosed>()("RewindClosed", {
  method: Schema.String,
  message: Schema.String,
}) {}
