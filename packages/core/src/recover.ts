/**
 * Crash recovery of interrupted restores. `recover()` lists every operation the journal holds as
 * begun but never completed, with what each of its files holds now: its rescue version (as before
 * the operation), its planned version (as after), or something else (changed by someone meanwhile,
 * or unreadable). `resolveOperation` then finishes one: `continue` writes the planned versions,
 * `rollback` the rescue versions. Either way a file that holds neither is refused, not overwritten,
 * and nothing is written. An operation whose result the session already recorded can only be
 * continued; continuing one it did not record also writes the record, so the session and the files
 * agree again.
 */
import {
  type ContentHash,
  type OperationId,
  type OperationRecord,
  RedoApplied,
  refuse,
  type SessionEvent,
  type SessionId,
  type WorkspacePath,
} from "@rewind/contracts"
import { Clock, Effect, Either, Option } from "effect"
import { hashContent } from "./contentHash.js"
import { makeMemoryJournal } from "./fileRewindJournal.js"
import { appendFresh, workspaceRewound } from "./internal/restoreRecords.js"
import { applyJournaled, type PlannedWrite } from "./journaledWrites.js"
import { OperationJournal } from "./ports/OperationJournal.js"
import { SessionStore } from "./ports/SessionStore.js"
import { Workspace } from "./ports/Workspace.js"
import { loadFileVersion, restoreBranch, versionHash } from "./redo.js"
import type { SessionState } from "./sessionState.js"

export type RecoveredFileState = "rescue" | "planned" | "changed" | "unreadable"

export interface RecoveredFile {
  readonly path: WorkspacePath
  readonly state: RecoveredFileState
  readonly currentHash: ContentHash | null
  readonly rescueHash: ContentHash | null
  readonly plannedHash: ContentHash | null
}

export interface IncompleteOperation {
  readonly record: OperationRecord
  /** Whether the session stream already records the operation as done. */
  readonly recorded: boolean
  readonly files: ReadonlyArray<RecoveredFile>
  /** True when every file holds its rescue or planned version, so both resolutions are possible. */
  readonly resolvable: boolean
}

export type Resolution = "continue" | "rollback"

const operationOf = (event: SessionEvent): string | undefined => {
  switch (event._tag) {
    case "WorkspaceRewound":
      return event.outcome === "applied" ? event.operationId : undefined
    case "FileRewindApplied":
    case "RedoApplied":
    case "PointRestored":
      return event.operationId
    default:
      return undefined
  }
}

const isRecorded = (sessionId: SessionId, operationId: OperationId) =>
  Effect.gen(function* () {
    const events = yield* (yield* SessionStore).read(sessionId)
    return events.some((e) => operationOf(e.event) === operationId)
  })

const inspect = (record: OperationRecord) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const files: Array<RecoveredFile> = []
    for (const file of record.intent.files) {
      const rescueHash = versionHash(file.rescue)
      const plannedHash = versionHash(file.planned)
      const current = yield* Effect.either(workspace.read(file.path))
      if (Either.isLeft(current)) {
        files.push({ path: file.path, state: "unreadable", currentHash: null, rescueHash, plannedHash })
        continue
      }
      const currentHash = Option.match(current.right, {
        onNone: () => null,
        onSome: (f) => hashContent(f.content),
      })
      const state: RecoveredFileState =
        currentHash === plannedHash ? "planned" : currentHash === rescueHash ? "rescue" : "changed"
      files.push({ path: file.path, state, currentHash, rescueHash, plannedHash })
    }
    const recorded = yield* isRecorded(record.intent.sessionId, record.intent.operationId)
    return {
      record,
      recorded,
      files,
      resolvable: files.every((f) => f.state === "rescue" || f.state === "planned"),
    } satisfies IncompleteOperation
  })

/** Every interrupted operation, oldest first, with the state of each of its files. */
export const recover = () =>
  Effect.gen(function* () {
    const journal = yield* OperationJournal
    const pending = yield* journal.incomplete()
    return yield* Effect.forEach(pending, inspect)
  })

/** The session record `continue` writes for an operation the session never recorded. */
const recordContinued = (record: OperationRecord) => {
  const { intent } = record
  const files = intent.files.map((f) => ({
    path: f.path,
    action:
      versionHash(f.rescue) === versionHash(f.planned)
        ? ("unchanged" as const)
        : f.planned._tag === "absent"
          ? ("deleted" as const)
          : ("restored" as const),
  }))
  return Effect.gen(function* () {
    const redone =
      intent.redoes === undefined ? Option.none() : yield* (yield* OperationJournal).get(intent.redoes)
    return yield* appendFresh(intent.sessionId, (fresh) =>
      Effect.succeed([
        intent.kind === "redo" && intent.redoes !== undefined
          ? redoRecord(fresh, intent.operationId, intent.redoes, redone, files)
          : workspaceRewound(
              {
                operationId: intent.operationId,
                scope: "workspace",
                targetMessageId: undefined,
                checkpointIds: intent.redo?.spentCheckpointIds ?? [],
                files,
              },
              "applied",
              `recovered: continued after an interruption (${intent.kind})`,
            ),
      ]),
    )
  })
}

const redoRecord = (
  state: SessionState,
  operationId: OperationId,
  redoes: OperationId,
  redone: Option.Option<OperationRecord>,
  files: ReadonlyArray<{ readonly path: WorkspacePath }>,
) => {
  const conversation = Option.getOrUndefined(redone)?.intent.redo
  const cursor = conversation === undefined ? undefined : restoreBranch(state, conversation.activeBranch)
  return new RedoApplied({
    operationId,
    redoneOperationId: redoes,
    ...(cursor === undefined ? {} : { cursor }),
    unspentCheckpointIds: [...(conversation?.spentCheckpointIds ?? [])],
    files: files.map((f) => f.path),
  })
}

/**
 * Finishes an interrupted operation. Refuses `conflict` (writing nothing) when a file holds
 * neither version or cannot be read, or when rolling back an operation the session recorded.
 */
export const resolveOperation = (operationId: OperationId, resolution: Resolution) =>
  Effect.gen(function* () {
    const journal = yield* OperationJournal
    const found = yield* journal.get(operationId)
    if (Option.isNone(found)) return yield* refuse("not_found", `operation ${operationId} is not journaled`)
    if (found.value.status !== "pending") {
      return yield* refuse("conflict", `operation ${operationId} is already ${found.value.status}`)
    }
    const op = yield* inspect(found.value)
    if (!op.resolvable) {
      const bad = op.files.filter((f) => f.state === "changed" || f.state === "unreadable")
      return yield* refuse(
        "conflict",
        `cannot ${resolution} ${operationId}: ${bad.map((f) => `${f.path} (${f.state})`).join(", ")} hold(s) neither the content from before nor from after the operation; nothing was written`,
        { operation: op },
      )
    }
    if (resolution === "rollback" && op.recorded) {
      return yield* refuse(
        "conflict",
        `operation ${operationId} is already recorded in session ${op.record.intent.sessionId}; continue it instead`,
        { operation: op },
      )
    }
    const want = resolution === "continue" ? "planned" : "rescue"
    const writes: Array<PlannedWrite> = []
    for (const file of op.record.intent.files) {
      const state = op.files.find((f) => f.path === file.path)!
      if (state.state === want) continue
      const version = resolution === "continue" ? file.planned : file.rescue
      const content = yield* Effect.either(loadFileVersion(version))
      if (Either.isLeft(content)) {
        return yield* refuse(
          "unavailable",
          `cannot ${resolution} ${operationId}: the content for ${file.path} cannot be read (${content.left.message}); nothing was written`,
        )
      }
      writes.push({
        path: file.path,
        content: content.right,
        expectedCurrentHash: state.currentHash,
        ...(version._tag === "present" && version.mode !== undefined ? { mode: version.mode } : {}),
      })
    }
    const applied = yield* applyJournaled(writes, yield* makeMemoryJournal(operationId))
    if (applied._tag === "RolledBack") {
      return yield* refuse(
        "conflict",
        `cannot ${resolution} ${operationId}: ${applied.message}; every file already written was put back`,
      )
    }
    if (resolution === "continue" && !op.recorded) yield* recordContinued(op.record)
    const at = yield* Clock.currentTimeMillis
    yield* journal.complete(operationId, {
      status: resolution === "continue" ? "committed" : "rolled_back",
      at,
    })
    return { operationId, resolution, files: applied.files }
  })
