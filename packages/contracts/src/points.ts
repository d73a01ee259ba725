/**
 * Points: workspace manifests captured at turn boundaries by the snapshot engine, and what a
 * capture left out (with why), the write intents a host declares before a tool writes, and the
 * record of a restore to a point. The point index lives in the session stream as these events, so
 * a point is found again after a restart and is copied with the history a fork copies.
 */
import { Schema } from "effect"
import { ContentHash, OperationId, PointId, TurnId } from "./ids.js"
import { WorkspacePath } from "./workspacePath.js"

/**
 * Why a path is not in a point. Left out is always reported, never silent (DESIGN §7):
 * - `over_size_limit`, `unreadable`, `not_a_regular_file`, `budget`: as named;
 * - `changed_during_read`: its size, mtime or ctime moved while it was read, every time it was
 *   re-read (a torn mix of two versions is never recorded);
 * - `unsupported_name`: a name that is not valid UTF-8, or one a workspace path cannot carry (a
 *   control character, a `\`); a directory so named is left out whole;
 * - `protected`: Rewind's own store or a `.git` directory or file (never captured, never restored);
 * - `invalid_path`: a declared path that is not a workspace path;
 * - `skipped_directory`: a directory the built-in skip list leaves out (`node_modules`, caches) or a
 *   nested repository, reported once per directory, not per file;
 * - `ignore_file_refused`: an ignore file over its budget (size, line length, patterns, time) or
 *   unreadable; its rules are not applied and the capture goes on.
 */
export const SkipReason = Schema.Literal(
  "over_size_limit",
  "unreadable",
  "not_a_regular_file",
  "budget",
  "changed_during_read",
  "unsupported_name",
  "protected",
  "invalid_path",
  "skipped_directory",
  "ignore_file_refused",
)
export type SkipReason = typeof SkipReason.Type

export const SkippedPath = Schema.Struct({
  /** A file, or a directory whose content was not scanned (budget). */
  path: Schema.String,
  reason: SkipReason,
  detail: Schema.optional(Schema.String),
})
export type SkippedPath = typeof SkippedPath.Type

/**
 * `turn`: captured for a turn; `rescue`: the state a restore was about to overwrite; `merge`: the
 * paths a merge writes (partial: paths it does not name are left alone), restored through a
 * point restore so a merge has the preview, token, rescue point and redo every restore has.
 */
export const PointKind = Schema.Literal("turn", "rescue", "merge")
export type PointKind = typeof PointKind.Type

export class PointCaptured extends Schema.TaggedClass<PointCaptured>()("PointCaptured", {
  pointId: PointId,
  kind: PointKind,
  turnId: TurnId,
  /** The manifest artifact (canonical JSON, see core `pointManifest.ts`). */
  manifestHash: ContentHash,
  /** The stat cache artifact the next capture starts from; absent for rescue points. */
  statCacheHash: Schema.optional(ContentHash),
  /** True when the manifest is the previous point's (nothing changed). */
  reusedManifest: Schema.Boolean,
  /**
   * The capture's seal (core `scanSeal.ts`): a digest of every directory listing the scan read,
   * with what else decided its scope, so the next capture can tell that nothing changed without
   * scanning. Absent when the capture could not vouch for one (files changed within the racy
   * window, a budget cut the scan, a path was tracked beyond it, a live engine's capture).
   */
  scanSeal: Schema.optional(ContentHash),
  files: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
  links: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
  tombstones: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
  bytes: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
  skipped: Schema.Array(SkippedPath),
  capturedAt: Schema.Number,
}) {}

/** What a path held when a write intent was declared. */
export const PreImage = Schema.Union(
  Schema.Struct({ state: Schema.Literal("file"), hash: ContentHash, mode: Schema.Number }),
  Schema.Struct({ state: Schema.Literal("link"), target: Schema.String }),
  Schema.Struct({ state: Schema.Literal("absent") }),
  Schema.Struct({ state: Schema.Literal("unreadable"), detail: Schema.String }),
)
export type PreImage = typeof PreImage.Type

export class WriteIntentDeclared extends Schema.TaggedClass<WriteIntentDeclared>()("WriteIntentDeclared", {
  turnId: TurnId,
  entries: Schema.Array(Schema.Struct({ path: WorkspacePath, preImage: PreImage })),
}) {}

export class PointRestored extends Schema.TaggedClass<PointRestored>()("PointRestored", {
  operationId: OperationId,
  pointId: PointId,
  rescuePointId: PointId,
  files: Schema.Array(
    Schema.Struct({
      path: WorkspacePath,
      action: Schema.Literal("written", "deleted", "linked", "unchanged"),
    }),
  ),
}) {}
