/**
 * Preview, then apply (DESIGN §5, path 2): the safe undo behind a UI's "undo" button.
 *
 * The preview simulates the rewind in memory, newest checkpoint first. A file is safe only if what
 * it holds now (or, for an older checkpoint of the same file, what the simulation put back) hashes
 * to the after-content of the checkpoint being undone; anything else was changed by someone other
 * than the agent and is `external_modified`. Checkpoints made by shell-like tools are listed as
 * `ignored`. One unsafe file makes `canApply` false, and a preview never writes.
 *
 * Apply runs the simulation again and refuses unless it matches the preview hash for hash, then
 * writes each file once with the journal (compensating on failure), and commits
 * `FileRewindApplied` so the undo offer stays spent after a reopen.
 */
import {
  type Checkpoint,
  type CheckpointId,
  type ContentHash,
  FileRewindApplied,
  type FileRewindIgnoredChange,
  type FileRewindPlannedFile,
  FileRewindPreview,
  type FileRewindSelection,
  type FileRewindUnsafeFile,
  type MessageId,
  type OperationId,
  refuse,
  type SessionId,
  type TurnId,
  UnrecoverableRewindError,
  WorkspacePath,
} from "@rewind/contracts"
import { Effect, Either, Option, Schema } from "effect"
import { evaluateRewindTarget } from "../conversation/evaluateRewindTarget.js"
import { type ConversationRewindResult, rewindConversation } from "../conversation/rewindConversation.js"
import { IdGenerator } from "../ports/IdGenerator.js"
import { Workspace } from "../ports/Workspace.js"
import { runDurableRestore } from "../restore/durableRestore.js"
import type { FileOutcome, PlannedWrite } from "../restore/journaledWrites.js"
import { checkPreviewToken, issuePreviewToken, redeemPreviewToken } from "../restore/previewTokens.js"
import {
  appendFresh,
  lastBranchTurn,
  noticeTurnBefore,
  type RewoundRecord,
  recordUnavailable,
  restoreNoticeEvents,
} from "../restore/restoreRecords.js"
import { loadSession } from "../session/loadSession.js"
import type { SessionState } from "../session/sessionState.js"
import { hashContent } from "../workspace/contentHash.js"
import { makeProtectionCheck } from "../workspace/protection.js"
import { loadCheckpointContent } from "./checkpointContent.js"
import { FileRewindSettings, isShellLikeTool } from "./fileRewindSettings.js"

export type FileRewindTarget =
  | { readonly sessionId: SessionId; readonly messageId: MessageId }
  | { readonly sessionId: SessionId; readonly turnId: TurnId }

interface SimulatedFile {
  readonly path: WorkspacePath
  readonly currentHash: ContentHash | null
  simulated: Uint8Array | null
  mode: number | undefined
  readonly checkpointIds: Array<CheckpointId>
}

interface Simulation {
  readonly files: ReadonlyArray<SimulatedFile>
  readonly unsafe: ReadonlyArray<FileRewindUnsafeFile>
  readonly ignored: ReadonlyArray<FileRewindIgnoredChange>
  readonly undone: ReadonlyArray<CheckpointId>
}

const isWorkspacePath = Schema.is(WorkspacePath)
const hashOrNull = (bytes: Uint8Array | null): ContentHash | null =>
  bytes === null ? null : hashContent(bytes)

/** Runs the rewind newest to oldest in memory; reads files and snapshots, writes nothing. */
const simulate = (newestFirst: ReadonlyArray<Checkpoint>) =>
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

const toPreview = (
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

const selectCheckpoints = (state: SessionState, target: FileRewindTarget) =>
  Effect.gen(function* () {
    if ("messageId" in target) {
      const evaluation = evaluateRewindTarget(state, target.messageId, "workspace")
      if (evaluation.refusal !== undefined) {
        return yield* refuse(evaluation.refusal.kind, evaluation.refusal.message)
      }
      const ids = new Set(evaluation.checkpointIds)
      return {
        selection: { _tag: "message", messageId: evaluation.targetMessageId! } as FileRewindSelection,
        checkpoints: state.checkpoints.filter((c) => ids.has(c.checkpointId)),
      }
    }
    if (!state.turns.has(target.turnId)) {
      return yield* refuse("not_found", `turn ${target.turnId} is not in session ${target.sessionId}`)
    }
    const checkpoints = state.checkpoints.filter(
      (c) => c.turnId === target.turnId && !state.spentCheckpointIds.has(c.checkpointId),
    )
    if (checkpoints.length === 0) {
      return yield* refuse("nothing_to_undo", `turn ${target.turnId} has no file change left to undo`)
    }
    return { selection: { _tag: "turn", turnId: target.turnId } as FileRewindSelection, checkpoints }
  })

/**
 * What undoing the changes of a turn (or of everything from a user message onward) would do.
 * Writes nothing.
 */
export const previewFileRewind = (target: FileRewindTarget) =>
  Effect.gen(function* () {
    const state = yield* loadSession(target.sessionId)
    const { selection, checkpoints } = yield* selectCheckpoints(state, target)
    const simulation = yield* simulate([...checkpoints].reverse())
    const preview = toPreview(target.sessionId, selection, simulation)
    const { token, expiresAt } = yield* issuePreviewToken(
      target.sessionId,
      selectionTarget(selection),
      planDigest(preview),
    )
    return { ...preview, token, tokenExpiresAt: expiresAt } satisfies FileRewindPreview
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

export interface FileRewindApplyResult {
  readonly operationId: OperationId
  readonly checkpointIds: ReadonlyArray<CheckpointId>
  readonly files: ReadonlyArray<FileOutcome>
  /** Present when the conversation was rewound in the same commit (`rewindConversationTo`). */
  readonly conversation?: ConversationRewindResult
}

const samePlan = (
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

/**
 * Applies a preview: re-checks every hash, writes with the journal, records `FileRewindApplied`.
 * Refuses (writing nothing) when the preview cannot be applied or the workspace moved on since.
 */
export interface ApplyFileRewindOptions {
  /**
   * Also rewind the conversation to this user message, in the same append as the files' record
   * (and journaled with the operation, so a recovery that continues it moves the cursor too):
   * the files-and-conversation form an edit in `rewind` mode uses.
   */
  readonly rewindConversationTo?: MessageId
}

export const applyFileRewind = (input: FileRewindPreview, options: ApplyFileRewindOptions = {}) =>
  Effect.gen(function* () {
    const decoded = Schema.decodeUnknownEither(FileRewindPreview)(input)
    if (Either.isLeft(decoded)) return yield* refuse("invalid_input", "this is not a file rewind preview")
    const preview = decoded.right
    // The token first: without a valid one for this very plan, nothing else is looked at.
    if (preview.token === undefined) {
      return yield* refuse("token_invalid", "apply needs the token of a preview; run the preview again")
    }
    const token = preview.token
    const target = selectionTarget(preview.selection)
    const issued = yield* checkPreviewToken(preview.sessionId, target, token)
    if (issued.planDigest !== planDigest(preview)) {
      return yield* refuse(
        "token_invalid",
        "this token was issued for a different plan than the one given; run the preview again",
      )
    }
    if (preview.checkpointIds.length === 0) {
      return yield* refuse("nothing_to_undo", "the preview has no checkpoint to undo")
    }
    if (!preview.canApply) {
      return yield* refuse(
        "unsafe_files",
        `the preview has ${preview.unsafe.length} unsafe file(s): ${preview.unsafe.map((u) => `${u.path} (${u.reason})`).join(", ")}; nothing was written`,
        { preview },
      )
    }
    const state = yield* loadSession(preview.sessionId)
    const byId = new Map(state.checkpoints.map((c) => [c.checkpointId as string, c]))
    for (const id of preview.checkpointIds) {
      if (!byId.has(id))
        return yield* refuse("not_found", `checkpoint ${id} is not in session ${preview.sessionId}`)
      if (state.spentCheckpointIds.has(id)) {
        return yield* refuse("conflict", `checkpoint ${id} was already undone; preview again`)
      }
    }
    const wanted = new Set<string>(preview.checkpointIds)
    const newestFirst = state.checkpoints.filter((c) => wanted.has(c.checkpointId)).reverse()
    const simulation = yield* simulate(newestFirst)
    const fresh = toPreview(preview.sessionId, preview.selection, simulation)
    if (!fresh.canApply) {
      return yield* refuse(
        "unsafe_files",
        `files changed since the preview: ${fresh.unsafe.map((u) => `${u.path} (${u.reason})`).join(", ")}; nothing was written`,
        { preview: fresh },
      )
    }
    if (!samePlan(fresh.files, preview.files)) {
      return yield* refuse(
        "conflict",
        "the workspace changed since the preview; preview again. Nothing was written",
        {
          preview: fresh,
        },
      )
    }

    const cursorTarget = options.rewindConversationTo
    if (cursorTarget !== undefined) {
      // The files half was checked by the preview; this is the cursor's own check.
      const evaluation = evaluateRewindTarget(state, cursorTarget, "conversation")
      if (evaluation.refusal !== undefined) {
        return yield* refuse(evaluation.refusal.kind, evaluation.refusal.message)
      }
      if (evaluation.targetMessageId !== cursorTarget) {
        return yield* refuse(
          "not_a_user_message",
          `a files-and-conversation rewind targets a user message, not ${cursorTarget}`,
        )
      }
    }

    // The workspace matches the preview: spend the token now, before the first write, so of two
    // concurrent applies of one preview only one gets to write.
    yield* redeemPreviewToken(preview.sessionId, target, token)
    const ids = yield* IdGenerator
    const operationId = (yield* ids.next("op")) as OperationId
    const record = (files: ReadonlyArray<FileOutcome>): RewoundRecord => ({
      operationId,
      scope: "workspace",
      targetMessageId: preview.selection._tag === "message" ? preview.selection.messageId : undefined,
      checkpointIds: preview.checkpointIds,
      files,
    })
    const writes: Array<PlannedWrite> = simulation.files
      .filter((f) => hashOrNull(f.simulated) !== f.currentHash)
      .map((f) => ({
        path: f.path,
        content: f.simulated,
        expectedCurrentHash: f.currentHash,
        ...(f.mode === undefined ? {} : { mode: f.mode }),
      }))
    const files: ReadonlyArray<FileOutcome> = fresh.files.map((f) => ({ path: f.path, action: f.action }))
    const applied = yield* runDurableRestore(
      {
        sessionId: preview.sessionId,
        operationId,
        kind: "file_rewind_apply",
        writes,
        redo: { branchAtVersion: state.version, spentCheckpointIds: [...preview.checkpointIds] },
        ...(cursorTarget === undefined ? {} : { cursorTarget }),
      },
      () => {
        const applied = new FileRewindApplied({
          operationId,
          checkpointIds: [...preview.checkpointIds],
          files: files.map((f) => ({ path: f.path, action: f.action })),
        })
        const noticeInput = { operationId, checkpointIds: preview.checkpointIds, files }
        if (cursorTarget !== undefined) {
          // The notice follows the cursor, so it is filed under the last turn kept.
          const turn = noticeTurnBefore(state, cursorTarget, newestFirst[0]!.turnId)
          return Effect.flatMap(restoreNoticeEvents(preview.sessionId, turn, noticeInput), (notice) =>
            rewindConversation({
              sessionId: preview.sessionId,
              messageId: cursorTarget,
              scope: "both",
              alsoAppend: [applied, ...notice],
            }),
          )
        }
        return Effect.as(
          appendFresh(
            preview.sessionId,
            (latest) =>
              Effect.map(
                restoreNoticeEvents(
                  preview.sessionId,
                  lastBranchTurn(latest, newestFirst[0]!.turnId),
                  noticeInput,
                ),
                (notice) => [applied, ...notice],
              ),
            state,
          ),
          undefined,
        )
      },
    ).pipe(
      Effect.tapError((e) =>
        e instanceof UnrecoverableRewindError
          ? recordUnavailable(preview.sessionId, record([]), `unrecoverable: ${e.message}`)
          : recordUnavailable(preview.sessionId, record([]), `the undo failed: ${e.message}`),
      ),
    )
    if (applied._tag === "RolledBack") {
      yield* recordUnavailable(preview.sessionId, record([]), `write_failed: ${applied.message}`)
      return yield* refuse(
        "unavailable",
        `the undo failed: ${applied.message}; every file already written was put back, nothing changed`,
        { operationId, step: applied.step, path: applied.path },
      )
    }
    return {
      operationId,
      checkpointIds: preview.checkpointIds,
      files,
      ...(applied.committed === undefined ? {} : { conversation: applied.committed }),
    } satisfies FileRewindApplyResult
  })
