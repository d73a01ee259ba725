/**
 * A checkpoint's content: the structured patch made when it is recorded, and the before/after
 * bytes loaded back from the artifact store when it is restored. A record without after-content
 * has it rebuilt by replaying its patch on the before-content with zero fuzz; a patch that does
 * not replay makes the record `unsupported_checkpoint`, and a missing or corrupt blob makes it
 * `checkpoint_unreadable`. Nothing here guesses.
 */
import type { Checkpoint, ContentHash, FileVersion } from "@rewind/contracts"
import { applyPatch, type StructuredPatch, structuredPatch } from "diff"
import { Effect, Either, Schema } from "effect"
import { ArtifactStore } from "../ports/ArtifactStore.js"
import { hashContent, toBytes } from "../workspace/contentHash.js"

/** The structured patch as stored (JSON of the `diff` package's `structuredPatch`). */
export const StoredPatch = Schema.Struct({
  oldFileName: Schema.String,
  newFileName: Schema.String,
  oldHeader: Schema.optional(Schema.String),
  newHeader: Schema.optional(Schema.String),
  hunks: Schema.Array(
    Schema.Struct({
      oldStart: Schema.Number,
      oldLines: Schema.Number,
      newStart: Schema.Number,
      newLines: Schema.Number,
      lines: Schema.Array(Schema.String),
    }),
  ),
})
export type StoredPatch = typeof StoredPatch.Type

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/** The text of UTF-8 bytes, or undefined for binary content. */
export const decodeText = (bytes: Uint8Array): string | undefined => {
  try {
    return strictUtf8.decode(bytes)
  } catch {
    return undefined
  }
}

export interface MutationDiff {
  /** Absent for binary content and for text over the size limit. */
  readonly patch: StructuredPatch | undefined
  readonly linesAdded: number
  readonly linesRemoved: number
}

/**
 * Beyond this many changed lines the structured patch is not made: the `diff` package's Myers diff
 * costs about the square of the edit length, so a whole-file rewrite of a big file would hold the
 * host for seconds. Such a record keeps before and after (all a restore needs) and no patch.
 */
export const MAX_PATCH_EDIT_LINES = 1_000

const splitLines = (text: string): Array<string> => {
  if (text.length === 0) return []
  const lines = text.split("\n")
  if (text.endsWith("\n")) lines.pop()
  return lines
}

/**
 * Lines removed and added, counting lines present on both sides as kept whatever their order: a
 * lower bound of what any line diff reports, exact when the kept lines did not move. O(n).
 */
const lineChangeBound = (before: ReadonlyArray<string>, after: ReadonlyArray<string>) => {
  const counts = new Map<string, number>()
  for (const line of before) counts.set(line, (counts.get(line) ?? 0) + 1)
  let common = 0
  for (const line of after) {
    const n = counts.get(line)
    if (n !== undefined && n > 0) {
      counts.set(line, n - 1)
      common++
    }
  }
  return { linesRemoved: before.length - common, linesAdded: after.length - common }
}

/** The patch and line counts of one mutation (null = the file does not exist on that side). */
export const diffMutation = (
  path: string,
  before: Uint8Array | null,
  after: Uint8Array | null,
  maxPatchBytes: number,
): MutationDiff => {
  const beforeText = before === null ? "" : decodeText(before)
  const afterText = after === null ? "" : decodeText(after)
  if (beforeText === undefined || afterText === undefined) {
    return { patch: undefined, linesAdded: 0, linesRemoved: 0 }
  }
  const bound = lineChangeBound(splitLines(beforeText), splitLines(afterText))
  const oversized = (before?.byteLength ?? 0) > maxPatchBytes || (after?.byteLength ?? 0) > maxPatchBytes
  if (oversized || bound.linesAdded + bound.linesRemoved > MAX_PATCH_EDIT_LINES) {
    return { patch: undefined, ...bound }
  }
  const patch = structuredPatch(path, path, beforeText, afterText, undefined, undefined, {
    context: 3,
    maxEditLength: MAX_PATCH_EDIT_LINES,
  })
  // Lines that moved around can still make the real diff too long; the bound is the best count then.
  if (patch === undefined) return { patch: undefined, ...bound }
  let linesAdded = 0
  let linesRemoved = 0
  for (const hunk of patch.hunks) {
    for (const line of hunk.lines) {
      if (line.startsWith("+")) linesAdded++
      else if (line.startsWith("-")) linesRemoved++
    }
  }
  return { patch, linesAdded, linesRemoved }
}

export interface CheckpointProblem {
  readonly reason: "checkpoint_unreadable" | "unsupported_checkpoint"
  readonly message: string
}

/** The bytes of one side of a checkpoint: null when the file did not exist. */
export const loadVersion = (version: FileVersion, checkpointId: string, side: "before" | "after") =>
  Effect.gen(function* () {
    if (version._tag === "absent") return Either.right<Uint8Array | null>(null)
    const artifacts = yield* ArtifactStore
    return yield* artifacts.get(version.hash).pipe(
      Effect.map((bytes) => Either.right<Uint8Array | null>(bytes)),
      Effect.catchAll((error) =>
        Effect.succeed(
          Either.left<CheckpointProblem>({
            reason: "checkpoint_unreadable",
            message: `the ${side}-content of checkpoint ${checkpointId} cannot be read: ${error.message}`,
          }),
        ),
      ),
    )
  })

export interface CheckpointContent {
  readonly before: Uint8Array | null
  readonly after: Uint8Array | null
  readonly beforeHash: ContentHash | null
  readonly afterHash: ContentHash | null
  /** True when the after-content was rebuilt from the patch. */
  readonly replayed: boolean
}

const replayAfter = (checkpoint: Checkpoint, before: Uint8Array | null) =>
  Effect.gen(function* () {
    const unsupported = (message: string) =>
      Either.left<CheckpointProblem>({
        reason: "unsupported_checkpoint",
        message: `checkpoint ${checkpoint.checkpointId} has no after-content and ${message}`,
      })
    if (checkpoint.patchHash === undefined) return unsupported("no patch to rebuild it from")
    const artifacts = yield* ArtifactStore
    const stored = yield* Effect.either(artifacts.get(checkpoint.patchHash))
    if (Either.isLeft(stored)) {
      return Either.left<CheckpointProblem>({
        reason: "checkpoint_unreadable",
        message: `the patch of checkpoint ${checkpoint.checkpointId} cannot be read: ${stored.left.message}`,
      })
    }
    const text = decodeText(stored.right)
    let json: unknown
    try {
      json = text === undefined ? undefined : JSON.parse(text)
    } catch {
      json = undefined
    }
    const patch = Schema.decodeUnknownEither(StoredPatch)(json)
    if (Either.isLeft(patch)) return unsupported("its stored patch is not a structured patch")
    const beforeText = before === null ? "" : decodeText(before)
    if (beforeText === undefined) return unsupported("its before-content is binary")
    const replayed = applyPatch(beforeText, patch.right as StructuredPatch, {
      fuzzFactor: 0,
      autoConvertLineEndings: false,
    })
    if (replayed === false)
      return unsupported("its patch does not apply to its before-content with zero fuzz")
    return Either.right<Uint8Array | null>(toBytes(replayed))
  })

/** Loads both sides of a checkpoint, rebuilding a missing after-content from the patch. */
export const loadCheckpointContent = (checkpoint: Checkpoint) =>
  Effect.gen(function* () {
    const before = yield* loadVersion(checkpoint.before, checkpoint.checkpointId, "before")
    if (Either.isLeft(before)) return Either.left<CheckpointProblem>(before.left)
    const after =
      checkpoint.after === undefined
        ? yield* replayAfter(checkpoint, before.right)
        : yield* loadVersion(checkpoint.after, checkpoint.checkpointId, "after")
    if (Either.isLeft(after)) return Either.left<CheckpointProblem>(after.left)
    return Either.right<CheckpointContent>({
      before: before.right,
      after: after.right,
      beforeHash: before.right === null ? null : hashContent(before.right),
      afterHash: after.right === null ? null : hashContent(after.right),
      replayed: checkpoint.after === undefined,
    })
  })
