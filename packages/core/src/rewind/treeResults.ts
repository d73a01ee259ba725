/**
 * The success Schemas of the isolated-fork operations (diff between two sessions' trees, merge
 * preview and apply), kept apart from `results.ts` so the block of operations they belong to
 * stays in one place.
 */
import { PointId, SessionId, SkippedPath, WorkspacePath } from "@rewind/contracts"
import { Schema } from "effect"
import { DiffSide, PointRestorePreview } from "./results.js"

export const SessionsDiff = Schema.Struct({
  a: SessionId,
  b: SessionId,
  entries: Schema.Array(
    Schema.Struct({
      path: WorkspacePath,
      change: Schema.Literal("added", "modified", "deleted"),
      a: Schema.NullOr(DiffSide),
      b: Schema.NullOr(DiffSide),
      patch: Schema.optional(Schema.String),
    }),
  ),
  unchanged: Schema.Number,
  skipped: Schema.Array(SkippedPath),
})

export const MergePreview = Schema.Struct({
  sourceSessionId: SessionId,
  targetSessionId: SessionId,
  basePointId: PointId,
  files: Schema.Array(
    Schema.Struct({
      path: WorkspacePath,
      from: Schema.Literal("source", "merged", "markers"),
      action: Schema.Literal("write", "link", "delete"),
    }),
  ),
  conflicts: Schema.Array(
    Schema.Struct({
      path: WorkspacePath,
      reason: Schema.Literal("text", "binary", "mode", "link", "delete_modify"),
      detail: Schema.String,
      base: Schema.NullOr(DiffSide),
      source: Schema.NullOr(DiffSide),
      target: Schema.NullOr(DiffSide),
      hunks: Schema.optional(
        Schema.Array(Schema.Struct({ base: Schema.String, source: Schema.String, target: Schema.String })),
      ),
      markers: Schema.Boolean,
    }),
  ),
  skipped: Schema.Array(SkippedPath),
  /** The merge point recorded in the target (absent when there is nothing to write). */
  mergePointId: Schema.optional(PointId),
  /** The point restore that applies the merge, with its token when it can be applied. */
  restore: Schema.optional(PointRestorePreview),
  canApply: Schema.Boolean,
})

export const MergeOptions = Schema.Struct({ markers: Schema.optional(Schema.Boolean) })
export const SessionsDiffOptions = Schema.Struct({ patches: Schema.optional(Schema.Boolean) })
