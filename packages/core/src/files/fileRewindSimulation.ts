/**
 * The simulation behind a file rewind's preview and its apply (module-internal to `files/`): runs
 * the undo newest checkpoint first in memory, reading files and checkpoint content and writing
 * nothing, and turns it into the plan a preview shows. Preview and apply share it so apply's
 * re-check is the very computation the preview made: what apply compares is like for like.
 */
import {
  type Checkpoint,
  type CheckpointId,
  type ContentHash,
  type FileRewindIgnoredChange,
  type FileRewindPlannedFile,
  type FileRewindPreview,
  type FileRewindSelection,
  type FileRewindUnsafeFile,
  type SessionId,
  WorkspacePath,
} from "@rewind/contracts"
import { Effect, Either, Option, Schema } from "effect"
import { Workspace } from "../ports/Workspace.js"
import { hashContent } from "../workspace/contentHash.js"
import { makeProtectionCheck } from "../workspace/protection.js"
import { loadCheckpointContent } from "./checkpointContent.js"
import { FileRewindSettings, isShellLikeTool } from "./fileRewindSettings.js"

export interface SimulatedFile {
  readonly path: WorkspacePath
  readonly currentHash: ContentHash | null
  simulated: Uint8Array | null
  mode: number | undefined
  readonly checkpointIds: Array<CheckpointId>
}

export interface Simulation {
  readonly files: ReadonlyArray<SimulatedFile>
  readonly unsafe: ReadonlyArray<FileRewindUnsafeFile>
  readonly ignored: ReadonlyArray<FileRewindIgnoredChange>
  readonly undone: ReadonlyArray<CheckpointId>
}

const isWorkspacePath = Schema.is(WorkspacePath)
export const hashOrNull = (bytes: Uint8Array | null): ContentHash | null =>
  bytes === null ? null : hashContent(bytes)

/** Runs the rewind newest to oldest in memory; reads files and snapshots, writes nothing. */
export const simulate = (newestFirst: ReadonlyArray<Checkpoint>) =>
  Effect.gen(function* () {
    const settings = yield* FileRewindSettings
    const workspace = yield* Workspace
    const files = new Map<string, SimulatedFile>()
    const unsafe = new Map<string, FileRewindUnsafeFile>()
    const ignored: Array<FileRewindIgnoredChange> = []
    const protectionOf = yield* makeProtectionCheck()
    const undone: Array<CheckpointId> = []
    const markUnsafe = (
      c: Checkpoint,
      fields: Omit<FileRewindUnsafeFile, "path" | "checkpointId" | "toolName">,
    ) => {
      if (!unsafe.has(c.path)) {
        unsafe.set(c.path, { path: c.path, checkpointId: c.checkpointId, toolName: c.toolName, ...fields })
      }
    }

    for (const c of newestFirst) {
      if (isShellLikeTool(settings, c.toolName)) {
        ignored.push({
          checkpointId: c.checkpointId,
          path: c.path,
          toolName: c.toolName,
          reason: "shell_like_tool",
        })
        continue
      }
      // The protection policy: what the ignore rules exclude is reported and left alone (a scan
      // would not capture it); the store and `.git` make the preview unsafe (never written).
      const protection = isWorkspacePath(c.path) ? yield* protectionOf(c.path) : Option.none()
      if (Option.isSome(protection)) {
        if (protection.value.kind === "ignored") {
          ignored.push({
            checkpointId: c.checkpointId,
            path: c.path,
            toolName: c.toolName,
            reason: "ignore_rule",
          })
          continue
        }
        undone.push(c.checkpointId)
        markUnsafe(c, { reason: "protected", message: protection.value.message })
        continue
      }
      undone.push(c.checkpointId)
      if (unsafe.has(c.path)) continue
      if (!isWorkspacePath(c.path)) {
        markUnsafe(c, {
          reason: "file_read_failed",
          message: `${JSON.stringify(c.path)} is not a workspace path`,
        })
        continue
      }
      const content = yield* loadCheckpointContent(c)
      if (Either.isLeft(content)) {
        markUnsafe(c, { reason: content.left.reason, message: content.left.message })
        continue
      }
      let file = files.get(c.path)
      if (file === undefined) {
        const current = yield* Effect.either(workspace.read(c.path))
        if (Either.isLeft(current)) {
          markUnsafe(c, {
            reason:
              current.left._tag === "PathRefused" && current.left.reason === "symlink_in_path"
                ? "symlink_in_path"
                : "file_read_failed",
            message: `${c.path} cannot be read: ${current.left.message}`,
          })
          continue
        }
        const bytes = Option.match(current.right, { onNone: () => null, onSome: (f) => f.content })
        file = {
          path: c.path,
          currentHash: hashOrNull(bytes),
          simulated: bytes,
          mode: undefined,
          checkpointIds: [],
        }
        files.set(c.path, file)
      }
      const currentHash = hashOrNull(file.simulated)
      if (currentHash !== content.right.afterHash) {
        markUnsafe(c, {
          reason: "external_modified",
          message: `${c.path} was changed after checkpoint ${c.checkpointId} (it hashes to ${currentHash ?? "nothing: the file is missing"}, the agent left ${content.right.afterHash ?? "no file"})`,
          currentHash,
          expectedHash: content.right.afterHash,
        })
        continue
      }
      file.simulated = content.right.before
      file.mode = c.before._tag === "present" ? c.before.mode : undefined
      file.checkpointIds.push(c.checkpointId)
    }
    return {
      files: [...files.values()].filter((f) => !unsafe.has(f.path)),
      unsafe: [...unsafe.values()],
      ignored,
      undone,
    } satisfies Simulation
  })

const plannedFile = (f: SimulatedFile): FileRewindPlannedFile => {
  const targetHash = hashOrNull(f.simulated)
  return {
    path: f.path,
    action: targetHash === f.currentHash ? "unchanged" : f.simulated === null ? "deleted" : "restored",
    currentHash: f.currentHash,
    targetHash,
    ...(f.mode === undefined ? {} : { targetMode: f.mode }),
    checkpointIds: [...f.checkpointIds],
  }
}

export const toPreview = (
  sessionId: SessionId,
  selection: FileRewindSelection,
  simulation: Simulation,
): FileRewindPreview => ({
  sessionId,
  selection,
  checkpointIds: [...simulation.undone],
  files: simulation.files.map(plannedFile),
  unsafe: [...simulation.unsafe],
  ignored: [...simulation.ignored],
  canApply: simulation.unsafe.length === 0 && simulation.undone.length > 0,
})

/** The scope a preview token is issued for: what the preview is about. */
export const selectionTarget = (selection: FileRewindSelection): string =>
  selection._tag === "message"
    ? `file-rewind:message:${selection.messageId}`
    : `file-rewind:turn:${selection.turnId}`

/**
 * A digest of the plan a preview shows: the checkpoints and, per file, the hashes before and
 * after. Apply refuses a preview whose plan is not the one its token was issued for.
 */
export const planDigest = (preview: Pick<FileRewindPreview, "checkpointIds" | "files">): string =>
  hashContent(
    JSON.stringify({
      checkpointIds: preview.checkpointIds,
      files: [...preview.files]
        .map((f) => [f.path, f.currentHash, f.targetHash, f.targetMode ?? null])
        .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    }),
  )

export const samePlan = (
  a: ReadonlyArray<FileRewindPlannedFile>,
  b: ReadonlyArray<FileRewindPlannedFile>,
): boolean => {
  if (a.length !== b.length) return false
  const byPath = new Map(b.map((f) => [f.path as string, f]))
  return a.every((f) => {
    const other = byPath.get(f.path)
    return other !== undefined && other.currentHash === f.currentHash && other.targetHash === f.targetHash
  })
}
