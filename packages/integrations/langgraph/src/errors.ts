/**
 * The saver's own errors. Each is an `Error` (Schema.TaggedError), so a LangGraph caller awaiting a
 * Promise sees a rejection with a message a person can act on; store failures reject with the
 * store's own typed errors (`StoreError`, `ArtifactNotFound`, …).
 */
import { Schema } from "effect"

/** A config (or argument) the saver cannot use: a missing `thread_id`, `checkpoint_id`, … */
export class GraphConfigInvalid extends Schema.TaggedError<GraphConfigInvalid>()("GraphConfigInvalid", {
  operation: Schema.String,
  message: Schema.String,
}) {}

/** A stored value that cannot be read back (a blob that is not a graph value, a bad frame). */
export class GraphValueUnreadable extends Schema.TaggedError<GraphValueUnreadable>()("GraphValueUnreadable", {
  message: Schema.String,
}) {}
