/**
 * Writing a planned set of files all-or-nothing. First every target is read once, so a path the
 * workspace refuses stops the operation before anything is written. Then, before each write, the
 * file's current content is read and journaled; if write N fails (or the file no longer holds what
 * the plan expects), the journal is replayed in reverse, so writes N..1 are undone and the
 * workspace is back where it started, the directories the writes created removed again. Only if
 * that compensation fails too (after a few attempts
 * per file) is an `UnrecoverableRewindError` raised, naming every file of the plan and its state.
 * Once every write is done, the directories the deletions left empty are removed (only those).
 *
 * Deletions run before the writes that put content back, so a path that changes kind needs no
 * order from the caller: a file that stands where a directory must be made (`lib` for `lib/x`) is
 * deleted before anything is written beneath it, and the files of a directory that stands where a
 * file goes (`config/a` for `config`) are deleted before it, their emptied directories removed
 * just before that write (`clearWay`). Compensation runs the journal in reverse, each entry's
 * created directories taken away right after its own undo, so it undoes that in reverse too: the
 * file written over the old directory goes, the directory's files come back (their directories
 * made again), then a file a directory had replaced is put back over the directory taken away.
 */
import {
  type ContentHash,
  type FileRestoreAction,
  UnrecoverableRewindError,
  type WorkspacePath,
} from "@rewind/contracts"
import { Effect, Either, Option } from "effect"
import { Workspace, type WorkspaceFile } from "../ports/Workspace.js"
import { hashContent, sameBytes } from "../workspace/contentHash.js"
import type { FileRewindJournal, JournalEntry } from "./fileRewindJournal.js"
import { readTarget } from "./targetRead.js"

export interface PlannedWrite {
  readonly path: WorkspacePath
  /** The content to put back; null deletes the file. */
  readonly content: Uint8Array | null
  readonly mode?: number
  /** When given, the file must still hash to this (null: must be absent) right before its write. */
  readonly expectedCurrentHash?: ContentHash | null
  /**
   * The hash of `content` when it was just read from the artifact store (so it is there, intact): a
   * durable restore records it as the planned version without storing it again.
   */
  readonly storedHash?: ContentHash
}

export interface FileOutcome {
  readonly path: WorkspacePath
  readonly action: FileRestoreAction
}

export type JournaledWriteResult =
  | { readonly _tag: "Applied"; readonly files: ReadonlyArray<FileOutcome> }
  | {
      readonly _tag: "RolledBack"
      /** The step that failed (0-based) and why; every earlier write was undone. */
      readonly step: number
      readonly path: WorkspacePath
      readonly message: string
    }

const COMPENSATION_ATTEMPTS = 3

const describe = (file: Option.Option<WorkspaceFile>): string =>
  Option.match(file, {
    onNone: () => "should not exist",
    onSome: (f) => `should hold content ${hashContent(f.content)} (mode ${f.mode.toString(8)})`,
  })

const holds = (current: Option.Option<WorkspaceFile>, previous: Option.Option<WorkspaceFile>): boolean =>
  Option.isNone(current)
    ? Option.isNone(previous)
    : Option.isSome(previous) &&
      previous.value.mode === current.value.mode &&
      sameBytes(previous.value.content, current.value.content)

const restoreEntry = (entry: JournalEntry) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const current = yield* Effect.either(readTarget(entry.path))
    // Skipping a file that already holds its journaled content keeps compensation from failing
    // on a file whose own write never happened.
    if (Either.isRight(current) && holds(current.right, entry.previous)) return
    yield* Option.match(entry.previous, {
      onNone: () => Effect.asVoid(workspace.delete(entry.path)),
      onSome: (file) => workspace.write(entry.path, file.content, { mode: file.mode }),
    })
  })

/**
 * Replays the journal in reverse. Succeeds when every journaled file holds its content from before
 * the operation again; otherwise fails naming each planned file's state.
 */
export const rollBack = (
  journal: FileRewindJournal,
  plannedPaths: ReadonlyArray<WorkspacePath>,
  cause: string,
): Effect.Effect<void, UnrecoverableRewindError, Workspace> =>
  Effect.gen(function* () {
    const entries = yield* journal.entries()
    // Walking backwards, the last result kept for a path is that of its earliest entry: the one
    // that decides what the file holds in the end.
    const results = new Map<WorkspacePath, { ok: boolean; detail: string }>()
    for (let i = entries.length - 1; i >= 0; i--) {
      const entry = entries[i]!
      // A transient failure (a busy file, a flaky disk) should not turn into an unrecoverable
      // rewind: each entry gets a few attempts.
      const restored = yield* Effect.either(
        Effect.retry(restoreEntry(entry), { times: COMPENSATION_ATTEMPTS - 1 }),
      )
      results.set(
        entry.path,
        Either.isRight(restored)
          ? { ok: true, detail: "restored from the journal" }
          : {
              ok: false,
              detail: `compensation failed (${restored.left.message}); it ${describe(entry.previous)}`,
            },
      )
      // The directories this write created go right after its undo, deepest first, where nothing
      // else lives in them now (a failed restore removes what it created): before an earlier
      // entry's undo, which may put back a file where one of them stands (a directory made where
      // a deleted file was). Best effort: a directory that cannot be removed holds nobody's data,
      // and the files are what compensation promises.
      for (const dir of [...(entry.createdDirectories ?? [])].reverse()) {
        yield* Effect.either((yield* Workspace).removeEmptyDirectory(dir))
      }
    }
    if ([...results.values()].every((r) => r.ok)) return
    const files = [...new Set([...plannedPaths, ...results.keys()])].map((path) => {
      const result = results.get(path)
      return result === undefined
        ? { path, state: "untouched" as const, detail: "not written" }
        : { path, state: result.ok ? ("restored" as const) : ("unknown" as const), detail: result.detail }
    })
    const unknown = files.filter((f) => f.state === "unknown").map((f) => f.path)
    return yield* new UnrecoverableRewindError({
      operationId: journal.operationId,
      files,
      message: `file rewind ${journal.operationId} failed (${cause}) and could not be undone for ${unknown.join(", ")}; see files for what each should hold`,
    })
  })

const outcomes = (
  entries: ReadonlyArray<JournalEntry>,
  writes: ReadonlyArray<PlannedWrite>,
): ReadonlyArray<FileOutcome> => {
  const original = new Map<WorkspacePath, Option.Option<WorkspaceFile>>()
  for (const e of entries) if (!original.has(e.path)) original.set(e.path, e.previous)
  const final = new Map<WorkspacePath, PlannedWrite>()
  for (const w of writes) final.set(w.path, w)
  return [...final].map(([path, { content, mode }]) => {
    const before = original.get(path) ?? Option.none()
    // A write that changed only the mode (a point restore, its redo) restored something too.
    const action: FileRestoreAction =
      content === null
        ? Option.isNone(before)
          ? "unchanged"
          : "deleted"
        : Option.isSome(before) &&
            sameBytes(before.value.content, content) &&
            (mode === undefined || before.value.mode === mode)
          ? "unchanged"
          : "restored"
    return { path, action }
  })
}

/** The directories above `path` that do not exist yet (a write creates them), shallowest first. */
const missingDirectories = (path: WorkspacePath) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const missing: Array<WorkspacePath> = []
    for (let cut = path.lastIndexOf("/"); cut > 0; cut = path.lastIndexOf("/", cut - 1)) {
      const dir = path.slice(0, cut) as WorkspacePath
      const stat = yield* Effect.either(workspace.stat(dir))
      if (Either.isLeft(stat) || Option.isSome(stat.right)) break
      missing.unshift(dir)
    }
    return missing
  })

export interface ApplyJournaledOptions {
  /**
   * The caller has just read every target through the workspace (a durable restore reads them all
   * for its rescue point), so the preflight read of each would only repeat it.
   */
  readonly targetsRead?: boolean
  /**
   * Paths the same operation removed for good just before these writes (links the new state does
   * not have): a directory they left empty is removed as one the deletions emptied is, before a
   * file is written where it stands and at the end.
   */
  readonly removedBefore?: ReadonlyArray<WorkspacePath>
}

/**
 * The order the writes run in, as indexes into the plan: deletions first, then the writes that
 * put content back, each group in plan order (see the header: a path that changed kind).
 */
const runOrder = (writes: ReadonlyArray<PlannedWrite>) => [
  ...writes.flatMap((w, i) => (w.content === null ? [i] : [])),
  ...writes.flatMap((w, i) => (w.content === null ? [] : [i])),
]

/**
 * Applies the writes with a journal, deletions first (see the header); rolls back on the first
 * failure. Steps are numbered by plan position.
 */
export const applyJournaled = (
  writes: ReadonlyArray<PlannedWrite>,
  journal: FileRewindJournal,
  options: ApplyJournaledOptions = {},
): Effect.Effect<JournaledWriteResult, UnrecoverableRewindError, Workspace> =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const plannedPaths = [...new Set(writes.map((w) => w.path))]
    const fail = (step: number, path: WorkspacePath, message: string) =>
      Effect.as(rollBack(journal, plannedPaths, message), {
        _tag: "RolledBack",
        step,
        path,
        message,
      } satisfies JournaledWriteResult)
    const order = runOrder(writes)

    // Preflight: every target must be readable through the workspace (inside the root, a regular
    // file or nothing) before the first write, so a refused path costs no write and no rollback.
    // The first write's own journal read is that check for its path.
    for (const step of options.targetsRead === true ? [] : order.slice(1)) {
      const write = writes[step]!
      if (writes.findIndex((w) => w.path === write.path) !== step) continue
      const readable = yield* Effect.either(readTarget(write.path))
      if (Either.isLeft(readable)) {
        return {
          _tag: "RolledBack",
          step,
          path: write.path,
          message: `cannot restore ${write.path}: ${readable.left.message}`,
        } satisfies JournaledWriteResult
      }
    }

    const deleted: Array<WorkspacePath> = [...(options.removedBefore ?? [])]
    for (const step of order) {
      const write = writes[step]!
      if (write.content !== null) yield* clearWay(write.path, deleted)
      const current = yield* Effect.either(readTarget(write.path))
      if (Either.isLeft(current)) {
        return yield* fail(
          step,
          write.path,
          `could not read ${write.path} before writing it: ${current.left.message}`,
        )
      }
      if (write.expectedCurrentHash !== undefined) {
        const actual = Option.match(current.right, {
          onNone: () => null,
          onSome: (f) => hashContent(f.content),
        })
        if (actual !== write.expectedCurrentHash) {
          return yield* fail(
            step,
            write.path,
            `${write.path} changed after it was checked (it now hashes to ${actual ?? "nothing"}, expected ${write.expectedCurrentHash ?? "nothing"})`,
          )
        }
      }
      const createdDirectories =
        write.content !== null && Option.isNone(current.right) ? yield* missingDirectories(write.path) : []
      yield* journal.record({
        step,
        path: write.path,
        previous: current.right,
        ...(createdDirectories.length === 0 ? {} : { createdDirectories }),
      })
      const written = yield* Effect.either(
        write.content === null
          ? Effect.asVoid(workspace.delete(write.path))
          : workspace.write(write.path, write.content, {
              // Without a recorded mode the file keeps the one it has (just read for the journal).
              mode: write.mode ?? Option.getOrUndefined(Option.map(current.right, (f) => f.mode)),
            }),
      )
      if (Either.isLeft(written)) {
        return yield* fail(step, write.path, `could not write ${write.path}: ${written.left.message}`)
      }
      if (write.content === null) deleted.push(write.path)
    }
    yield* removeEmptied([
      ...(options.removedBefore ?? []),
      ...writes.filter((w) => w.content === null).map((w) => w.path),
    ])
    return {
      _tag: "Applied",
      files: outcomes(yield* journal.entries(), writes),
    } satisfies JournaledWriteResult
  })

/**
 * Before a file is written where a directory stands: the directories at and under `path` that the
 * operation's deletions emptied go, deepest first, as `removeEmptied` takes them (only above a
 * deleted path, only if empty). Nothing else is removed: a directory that still holds anything
 * (a file made meanwhile, an empty directory the operation did not empty) stays, and the write
 * then fails on it, which rolls the operation back. Nothing to journal: undoing the deletions puts
 * the files back and makes these directories again.
 */
const clearWay = (path: WorkspacePath, deleted: ReadonlyArray<WorkspacePath>) =>
  Effect.gen(function* () {
    const stat = yield* Effect.either((yield* Workspace).stat(path))
    if (Either.isLeft(stat) || Option.isNone(stat.right) || stat.right.value.kind !== "directory") return
    yield* removeEmptied(
      deleted.filter((d) => d.startsWith(`${path}/`)),
      path,
    )
  })

/**
 * The directories the deletions left empty go too, deepest first, as git's checkout does: a restore
 * that puts back a tree without a directory should not leave its empty skeleton. Only directories
 * above a deleted path are tried, each removed only if empty (never recursively), so a directory
 * that still holds anything (an ignored file, the store, a file made meanwhile) stays, with all its
 * ancestors (one that is not there at all keeps none). Best effort, like the rollback's: a directory left behind holds nobody's data, and
 * putting a file back (rollback, redo, recover) makes its parents again. `within`: only that
 * directory and those under it are tried.
 */
const removeEmptied = (deleted: ReadonlyArray<WorkspacePath>, within?: WorkspacePath) =>
  Effect.gen(function* () {
    if (deleted.length === 0) return
    const workspace = yield* Workspace
    const above = new Set<WorkspacePath>()
    for (const path of deleted) {
      for (let cut = path.lastIndexOf("/"); cut > 0; cut = path.lastIndexOf("/", cut - 1)) {
        const dir = path.slice(0, cut) as WorkspacePath
        if (within === undefined || dir === within || dir.startsWith(`${within}/`)) above.add(dir)
      }
    }
    const depth = (path: string) => path.split("/").length
    // The ancestors of a directory that stayed hold it: not empty, no call for them.
    const holding = new Set<WorkspacePath>()
    for (const dir of [...above].sort((a, b) => depth(b) - depth(a) || (a < b ? -1 : 1))) {
      if (holding.has(dir)) continue
      if (yield* Effect.orElseSucceed(workspace.removeEmptyDirectory(dir), () => false)) continue
      // Not there at all (a path recovery finds gone already, whose directories were never made):
      // it holds nothing, so it keeps no ancestor.
      const there = yield* Effect.either(workspace.stat(dir))
      if (Either.isRight(there) && Option.isNone(there.right)) continue
      for (let cut = dir.lastIndexOf("/"); cut > 0; cut = dir.lastIndexOf("/", cut - 1)) {
        holding.add(dir.slice(0, cut) as WorkspacePath)
      }
    }
  })
