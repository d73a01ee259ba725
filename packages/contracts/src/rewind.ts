/** Rewind vocabulary: scopes, strategies and the branch cursor a conversation rewind writes. */
import { Schema } from "effect"
import { MessageId } from "./ids.js"

export const RewindScope = Schema.Literal("conversation", "workspace", "both")
export type RewindScope = typeof RewindScope.Type

/**
 * What evaluation decided is possible. `fork_required` is only a marker carried by fork events;
 * evaluation never returns it.
 */
export const RewindStrategy = Schema.Literal("active_chain", "file_only", "unavailable", "fork_required")
export type RewindStrategy = typeof RewindStrategy.Type

/**
 * The cursor a conversation rewind writes. The active branch is `keptMessageIds` followed by every
 * message appended after `branchCutAfterMessageId`; storing the kept prefix itself (not just the
 * target) is what stops an older branch from resurfacing after repeated rewinds.
 */
export const RevertCursor = Schema.Struct({
  keptMessageIds: Schema.Array(MessageId),
  /** The last message in the stream when the rewind happened; absent for an empty stream. */
  branchCutAfterMessageId: Schema.optional(MessageId),
  branchGeneration: Schema.Number.pipe(Schema.int(), Schema.positive()),
  targetMessageId: MessageId,
  scope: RewindScope,
})
export type RevertCursor = typeof RevertCursor.Type
