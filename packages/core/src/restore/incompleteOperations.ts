/**
 * What crash recovery lists (`recover()`): every operation the journal holds as begun but never
 * completed, with what each of its files and links holds now — its rescue version (as before the
 * operation), its planned version (as after), or something else (changed meanwhile, or
 * unreadable) — and whether the session already records it. Each operation is inspected in the
 * tree of its session; a tree that cannot be opened reads as unreadable files, and a damaged
 * journal row is listed by name, never resolvable. Listing writes nothing.
 */
import {
  type ContentHash,
  type OperationId,
  type OperationIntent,
  type OperationRecord,
  Refused,
  type SessionEvent,
  type SessionId,
  type WorkspacePath,
} from "@rewind/contracts"
import { Effect, Either, Option } from "effect"
import { type DamagedOperation, OperationJournal } from "../ports/OperationJournal.js"
import { SessionStore } from "../ports/SessionStore.js"
import { withSessionWorkspace } from "../session/sessionWorkspace.js"
import { hashContent } from "../workspace/contentHash.js"
import { inspectLinks, type RecoveredLink } from "./journaledLinks.js"
import { inspectTree, type RecoveredTree } from "./recoverTree.js"
import { versionHash } from "./redo.js"
import { readTarget } from "./targetRead.js"

export type RecoveredFileState = "rescue" | "planned" | "changed" | "unreadable"

export interface RecoveredFile {
  readonly path: WorkspacePath
  readonly state: RecoveredFileState
  readonly currentHash: ContentHash | null
  readonly rescueHash: ContentHash | null
  readonly plannedHash: ContentHash | null
}

export interface IncompleteOperation {
  /**
   * For a damaged row, built from the columns stored beside its intent (id, session, kind, start),
   * with no files: what is known without reading the damaged intent.
   */
  readonly record: OperationRecord
  /** Whether the session stream already records the operation as done. */
  readonly recorded: boolean
  readonly files: ReadonlyArray<RecoveredFile>
  /** The symlinks the operation changes (journaled beside the files), each as it is now. */
  readonly links: ReadonlyArray<RecoveredLink>
  /** For an isolated fork's materialisation: the tree and what is at its two places now. */
  readonly tree?: RecoveredTree
  /**
   * True when every file and link holds its rescue or planned version, so both resolutions are
   * possible (any mix of the two: a crash can come between any two steps).
   */
  readonly resolvable: boolean
  /** Set when the journal row does not decode: what is wrong with it, in a sentence. */
  readonly damaged?: string
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

export const inspect = (record: OperationRecord) =>
  Effect.gen(function* () {
    const links = yield* inspectLinks(record.intent.links ?? [])
    // A path where a journaled link stands now holds no file: its file version there is absent.
    const linkedNow = new Set(links.flatMap((l) => (l.current === null ? [] : [l.path])))
    const files: Array<RecoveredFile> = []
    for (const file of record.intent.files) {
      const rescueHash = versionHash(file.rescue)
      const plannedHash = versionHash(file.planned)
      const current = linkedNow.has(file.path)
        ? Either.right(Option.none())
        : yield* Effect.either(readTarget(file.path))
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
    const settled = (s: string) => s === "rescue" || s === "planned" || s === "removed"
    return {
      record,
      recorded,
      files,
      links,
      resolvable: files.every((f) => settled(f.state)) && links.every((l) => settled(l.state)),
    } satisfies IncompleteOperation
  })

/** A damaged row as an operation nothing can be done with until it is repaired by hand. */
const damagedOperation = (row: DamagedOperation): IncompleteOperation => ({
  record: {
    intent: {
      operationId: row.operationId as OperationId,
      sessionId: row.sessionId as SessionId,
      kind: row.kind as OperationIntent["kind"],
      files: [],
      startedAt: row.startedAt,
    },
    status: "pending",
    steps: [],
    redoConsumed: false,
  },
  recorded: false,
  files: [],
  links: [],
  resolvable: false,
  damaged: row.problem,
})

/**
 * Every interrupted operation, oldest first, with the state of each of its files; then each
 * damaged journal row, named.
 */
export const recover = () =>
  Effect.gen(function* () {
    const journal = yield* OperationJournal
    const scan = yield* journal.scan("incomplete")
    // Each operation's files are read in the tree of its session (an isolated fork's own); a tree
    // that cannot be opened any more reads as unreadable files, not as a failure of the whole list.
    const readable = yield* Effect.forEach(scan.records, (record) =>
      withSessionWorkspace(
        record.intent.sessionId,
        record.intent.kind === "fork_materialise" && record.intent.tree !== undefined
          ? inspectTree(record)
          : inspect(record),
      ).pipe(
        Effect.catchIf(
          (e): e is Refused => e instanceof Refused,
          () =>
            Effect.succeed<IncompleteOperation>({
              record,
              recorded: false,
              files: record.intent.files.map((f) => ({
                path: f.path,
                state: "unreadable",
                currentHash: null,
                rescueHash: versionHash(f.rescue),
                plannedHash: versionHash(f.planned),
              })),
              links: (record.intent.links ?? []).map((l) => ({ ...l, state: "unreadable", current: null })),
              resolvable: false,
            }),
        ),
      ),
    )
    const damaged = scan.damaged.map(damagedOperation)
    const listed: ReadonlyArray<IncompleteOperation> = [...readable, ...damaged]
    return listed
  })
