/**
 * The durable frame around every restore that writes files (file rewind apply, cascade, direct
 * restore, fork restore, redo). Order (DESIGN §7): read every target once; store what each holds
 * now in the ArtifactStore (the rescue point) and what it will hold (the planned version); record
 * both in the OperationJournal before the first write; write with the journaled, compensating
 * writer; then let the caller commit its session record, and only then complete
 * the operation, which makes its redo entry available in that same journal write. A failure before
 * the commit undoes the files and completes the operation as rolled back; a crash anywhere leaves a
 * pending operation for `recover()`.
 *
 * Symlinks are journaled beside the files (`input.links`) and changed here too, for every caller:
 * the links in the way of the new state are removed right after the intent is journaled (their
 * paths are not read for the rescue point: a link holds no file, so the rescue there is absent),
 * the new state's links are made at the commit, before the caller's record, and every link step
 * is put back when anything after it fails (`journaledLinks.ts`). A crash anywhere after the
 * intent leaves every link step for `recover()` to finish or undo.
 *
 * Every restore passes the protection policy here (`refuseProtected`): a plan that would write or
 * delete Rewind's store, a `.git` path or an ignored path is refused whole, before the journal.
 *
 * A caller that has already read and stored a target in this command (a point restore's rescue
 * point) passes its version in `rescued`, and a planned content just read from the store carries
 * its hash (`PlannedWrite.storedHash`): neither is read or stored again. Whatever the source of the
 * rescue version, each write first checks that the file still holds it, so the journal never
 * promises a rescue copy of content that was not what got overwritten (`journaledVersions.ts`).
 */
import {
  describeError,
  type FileVersion,
  type JournaledLink,
  type MessageId,
  type OperationId,
  type OperationKind,
  type RedoConversation,
  refuse,
  type SessionId,
  type WorkspacePath,
} from "@rewind/contracts"
import { Clock, Effect, Either, Schema } from "effect"
import { OperationJournal } from "../ports/OperationJournal.js"
import { checkProtection } from "../workspace/protection.js"
import { makeMemoryJournal } from "./fileRewindJournal.js"
import { createLinksFor, type LinkUndo, removeLinksFor, runLinkUndo } from "./journaledLinks.js"
import { finalWrites, journaledVersions } from "./journaledVersions.js"
import { applyJournaled, type FileOutcome, type PlannedWrite, rollBack } from "./journaledWrites.js"

/**
 * Refuses (`unsafe_files`, the protected paths in `details.protected`) when any path is one the
 * protection policy keeps; nothing has been written when it does.
 */
export const refuseProtected = (paths: Iterable<WorkspacePath>) =>
  Effect.gen(function* () {
    const found = yield* checkProtection(paths)
    if (found.size === 0) return
    const list = [...found.values()]
    return yield* refuse(
      "unsafe_files",
      `refused: ${list
        .slice(0, 5)
        .map((p) => p.message)
        .join("; ")}${list.length > 5 ? ` (and ${list.length - 5} more)` : ""}; nothing was written`,
      { protected: list },
    )
  })

export interface DurableRestoreInput {
  readonly sessionId: SessionId
  readonly operationId: OperationId
  readonly kind: OperationKind
  /** In plan order; a path may appear more than once, but it is written once, with its last content. */
  readonly writes: ReadonlyArray<PlannedWrite>
  /** The conversation before the restore, when the restore can be redone. */
  readonly redo?: RedoConversation
  /** For a redo: the operation whose redo entry this one consumes. */
  readonly redoes?: OperationId
  /** For a files-and-conversation rewind: where `commit` moves the cursor (journaled for recovery). */
  readonly cursorTarget?: MessageId
  /**
   * What some targets hold now, as the caller read them and stored their content within this same
   * command (for a path that was a symlink it has removed since: absent). Those paths are not read
   * again here.
   */
  readonly rescued?: ReadonlyMap<WorkspacePath, FileVersion>
  /**
   * The symlinks the caller removes before the writes and creates in `commit` (`journaledLinks.ts`),
   * journaled with the files so a redo or a recovery can put them back too.
   */
  readonly links?: ReadonlyArray<JournaledLink>
}

export type DurableRestoreResult<A> =
  | { readonly _tag: "Applied"; readonly files: ReadonlyArray<FileOutcome>; readonly committed: A }
  | {
      readonly _tag: "RolledBack"
      readonly step: number
      readonly path: WorkspacePath
      readonly message: string
    }

/**
 * Runs `writes` as one durable, redoable operation and calls `commit` once every file is written.
 * When `commit` fails the files are put back and its error is re-raised.
 */
export const runDurableRestore = <A, E, R>(
  input: DurableRestoreInput,
  commit: (files: ReadonlyArray<FileOutcome>) => Effect.Effect<A, E, R>,
) =>
  Effect.gen(function* () {
    const writes = finalWrites(input.writes)
    const paths = writes.map((w) => w.path)
    // The protection policy, once more, where every restore passes: whatever a caller planned,
    // the store, `.git` and ignored paths are never written. Refused before anything is journaled.
    yield* refuseProtected(paths)

    const links = input.links ?? []
    const removed: Array<LinkUndo> = []
    const result = yield* journalAndWrite(input, writes, paths, removed, linkThenCommit(links, commit)).pipe(
      Effect.tapError(() => runLinkUndo(removed)),
      Effect.catchIf(
        (error): error is LinkNotMade => error instanceof LinkNotMade,
        (error): Effect.Effect<DurableRestoreResult<A>> =>
          Effect.succeed({
            _tag: "RolledBack",
            step: writes.length,
            path: error.path as WorkspacePath,
            message: `the link ${error.path} could not be made: ${error.message}`,
          }),
      ),
    )
    if (result._tag === "RolledBack") yield* runLinkUndo(removed)
    return result
  })

/**
 * A link of the new state could not be made at the commit: the commit fails with it (files rolled
 * back, operation completed as rolled back) and `runDurableRestore` answers `RolledBack`, so it
 * never reaches a caller.
 */
export class LinkNotMade extends Schema.TaggedError<LinkNotMade>()("LinkNotMade", {
  path: Schema.String,
  message: Schema.String,
}) {}

/** The commit with the new state's links made first; a failure takes them away again. */
const linkThenCommit =
  <A, E, R>(
    links: ReadonlyArray<JournaledLink>,
    commit: (files: ReadonlyArray<FileOutcome>) => Effect.Effect<A, E, R>,
  ) =>
  (files: ReadonlyArray<FileOutcome>) =>
    Effect.gen(function* () {
      const made: Array<LinkUndo> = []
      const linked = yield* Effect.either(createLinksFor(links, "planned", made))
      if (Either.isLeft(linked)) {
        yield* runLinkUndo(made)
        return yield* Effect.fail(new LinkNotMade(linked.left))
      }
      return yield* Effect.tapError(commit(files), () => runLinkUndo(made))
    })

/** Rescue versions, the journal's intent, the journaled writes and the commit (see the header). */
const journalAndWrite = <A, E, R>(
  input: DurableRestoreInput,
  writes: ReadonlyArray<PlannedWrite>,
  paths: ReadonlyArray<WorkspacePath>,
  removed: Array<LinkUndo>,
  commit: (files: ReadonlyArray<FileOutcome>) => Effect.Effect<A, E, R>,
) =>
  Effect.gen(function* () {
    const journal = yield* OperationJournal
    const links = input.links ?? []
    // A path where a link stands that this restore removes holds no file: its rescue version is
    // absent, and it is not read (a read never meets a link). The link goes after the journal's
    // intent, so a crash in between leaves it journaled for recovery.
    const unlinking = new Set(
      links.flatMap((l) => (l.rescue !== null && l.rescue !== l.planned ? [l.path] : [])),
    )

    const versions = yield* journaledVersions(input.rescued, writes, paths, unlinking)
    if (versions._tag === "Unreadable") {
      const { _tag, ...at } = versions
      return { _tag: "RolledBack", ...at } satisfies DurableRestoreResult<A>
    }
    const { files, checkedWrites } = versions

    yield* journal.begin({
      operationId: input.operationId,
      sessionId: input.sessionId,
      kind: input.kind,
      files,
      ...(input.links === undefined || input.links.length === 0 ? {} : { links: input.links }),
      startedAt: yield* Clock.currentTimeMillis,
      ...(input.redo === undefined ? {} : { redo: input.redo }),
      ...(input.redoes === undefined ? {} : { redoes: input.redoes }),
      ...(input.cursorTarget === undefined ? {} : { cursorTarget: input.cursorTarget }),
    })

    const unlinked = yield* Effect.either(removeLinksFor(links, "planned", removed))
    if (Either.isLeft(unlinked)) {
      yield* runLinkUndo(removed)
      yield* Effect.flatMap(Clock.currentTimeMillis, (at) =>
        journal.complete(input.operationId, { status: "rolled_back", at }),
      )
      return {
        _tag: "RolledBack",
        step: 0,
        path: unlinked.left.path,
        message: unlinked.left.message,
      } satisfies DurableRestoreResult<A>
    }

    // The in-memory entries drive compensation. Nothing more is logged durably while writing: the
    // intent, durable before the first write, already says the files may differ from the rescue
    // point from here on, and recovery decides each file by its content (rescue version, planned
    // version or neither), never by how far a log got. A logged step cost a commit per restore.
    const logged = yield* makeMemoryJournal(input.operationId)
    const finish = (status: "committed" | "rolled_back") =>
      Effect.flatMap(Clock.currentTimeMillis, (at) => journal.complete(input.operationId, { status, at }))

    const applied = yield* applyJournaled(checkedWrites, logged, {
      targetsRead: true,
      removedBefore: links.flatMap((l) => (l.rescue !== null && l.planned === null ? [l.path] : [])),
    })
    if (applied._tag === "RolledBack") {
      yield* finish("rolled_back")
      return applied satisfies DurableRestoreResult<A>
    }
    const committed = yield* Effect.either(commit(applied.files))
    if (Either.isLeft(committed)) {
      yield* rollBack(logged, paths, `the restore could not be committed: ${describeError(committed.left)}`)
      yield* finish("rolled_back")
      return yield* Effect.fail(committed.left)
    }
    yield* finish("committed")
    return {
      _tag: "Applied",
      files: applied.files,
      committed: committed.right,
    } satisfies DurableRestoreResult<A>
  })
