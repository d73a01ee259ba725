/**
 * Crash recovery of interrupted restores. `recover()` (`incompleteOperations.ts`) lists every
 * operation the journal holds as begun but never completed, with what each of its files holds
 * now: its rescue version (as before the operation), its planned version (as after), or something
 * else (changed by someone meanwhile, or unreadable). `resolveOperation` then finishes one: `continue` writes the planned versions,
 * `rollback` the rescue versions. The symlinks journaled beside the files (`JournaledLink`) are
 * recovered the same way: each is listed as it stands now (rescue, planned or changed), and a
 * resolution removes the links not of the side wanted, writes the files, then makes that side's
 * links, from whatever mix of the two the crash left. An isolated fork's interrupted
 * materialisation (`fork_materialise`) is listed with its tree and resolved by `recoverTree.ts`.
 * Either way a file or link that holds neither is refused, not overwritten, and nothing is
 * written; temp files that writes cut short by the crash left next to the operation's files are
 * removed. An operation whose result the session already recorded can only be
 * continued; continuing one it did not record also writes the record, so the session and the files
 * agree again.
 */
import { type OperationId, refuse, type WorkspacePath } from "@rewind/contracts"
import { Clock, Effect, Either, Option } from "effect"
import { OperationJournal } from "../ports/OperationJournal.js"
import { Workspace } from "../ports/Workspace.js"
import { nothingCanBeThere } from "../workspace/pathAbsence.js"
import { refuseProtected } from "./durableRestore.js"
import { makeMemoryJournal } from "./fileRewindJournal.js"
import { inspect, type Resolution } from "./incompleteOperations.js"
import { createRecoveredLinks, type LinkUndo, removeRecoveredLinks, runLinkUndo } from "./journaledLinks.js"
import { applyJournaled, type PlannedWrite, rollBack } from "./journaledWrites.js"
import { cursorProblem, recordContinued } from "./recoverRecords.js"
import { resolveTree } from "./recoverTree.js"
import { loadFileVersion } from "./redo.js"

export {
  type IncompleteOperation,
  type RecoveredFile,
  type RecoveredFileState,
  type Resolution,
  recover,
} from "./incompleteOperations.js"

/**
 * Finishes an interrupted operation. Refuses `conflict` (writing nothing) when a file holds
 * neither version or cannot be read, when rolling back an operation the session recorded, or when
 * its journal row is damaged.
 */
export const resolveOperation = (operationId: OperationId, resolution: Resolution) =>
  Effect.gen(function* () {
    const journal = yield* OperationJournal
    const read = yield* Effect.either(journal.get(operationId))
    if (Either.isLeft(read)) {
      // A damaged row is a refusal naming what is wrong; any other failure is the store's.
      const damaged = (yield* journal.scan("all")).damaged.find((d) => d.operationId === operationId)
      if (damaged === undefined) return yield* Effect.fail(read.left)
      return yield* refuse(
        "conflict",
        `cannot ${resolution} ${operationId}: ${damaged.problem}; nothing was written`,
      )
    }
    const found = read.right
    if (Option.isNone(found)) return yield* refuse("not_found", `operation ${operationId} is not journaled`)
    if (found.value.status !== "pending") {
      return yield* refuse("conflict", `operation ${operationId} is already ${found.value.status}`)
    }
    if (found.value.intent.kind === "fork_materialise" && found.value.intent.tree !== undefined) {
      return yield* resolveTree(found.value, resolution)
    }
    const op = yield* inspect(found.value)
    if (!op.resolvable) {
      const unsettled = (s: string) => s === "changed" || s === "unreadable"
      const bad = [
        ...op.files.filter((f) => unsettled(f.state)),
        ...op.links
          .filter((l) => unsettled(l.state))
          .map((l) => ({ path: `${l.path} (link)`, state: l.state })),
      ]
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
    // Files the side wanted does not have and that are gone already (deleted before the crash, or
    // never written): their directories are emptied as if deleted now, since an operation cut
    // short removes the directories its deletions emptied only at its end.
    const goneAlready: Array<WorkspacePath> = []
    for (const file of op.record.intent.files) {
      const state = op.files.find((f) => f.path === file.path)!
      const version = resolution === "continue" ? file.planned : file.rescue
      if (state.state === want) {
        if (version._tag === "absent") goneAlready.push(file.path)
        continue
      }
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
    // The protection policy holds for recovery too: continuing never writes the store, `.git` or
    // an ignored path (a journal row is data; it may name anything). Rolling back only puts back
    // what the operation found there.
    if (resolution === "continue") {
      yield* refuseProtected([...writes.map((w) => w.path), ...op.links.map((l) => l.path)])
    }
    const recordNeeded = resolution === "continue" && !op.recorded
    if (recordNeeded) {
      const problem = yield* cursorProblem(op.record)
      if (problem !== undefined) {
        return yield* refuse(
          "conflict",
          `cannot continue ${operationId}: its conversation cursor cannot be written (${problem}); roll it back instead. Nothing was written`,
          { operation: op },
        )
      }
    }
    // Links as in every restore: those in the way first, the files, then the links of the side
    // wanted; each link from the state the crash left it in. A failed step puts back the earlier.
    const linkUndo: Array<LinkUndo> = []
    const unlinked = yield* Effect.either(removeRecoveredLinks(op.links, want, linkUndo))
    if (Either.isLeft(unlinked)) {
      yield* runLinkUndo(linkUndo)
      return yield* refuse(
        "conflict",
        `cannot ${resolution} ${operationId}: the link ${unlinked.left.path} cannot be removed (${unlinked.left.message}); nothing was left changed`,
      )
    }
    // A write the crash cut short may have left its temp file next to its target: removed first, so
    // a directory it alone holds is emptied with the others. None can be beside a path a file or a
    // link now stands on the way to (the path changed kind), and the workspace never goes through
    // the link to look.
    const workspace = yield* Workspace
    for (const file of op.record.intent.files)
      yield* Effect.catchIf(workspace.discardPartialWrites(file.path), nothingCanBeThere, () =>
        Effect.succeed([]),
      )
    const writeJournal = yield* makeMemoryJournal(operationId)
    const applied = yield* applyJournaled(writes, writeJournal, {
      removedBefore: [
        ...goneAlready,
        ...op.links.flatMap((l) => (l.current !== null && l[want] === null ? [l.path] : [])),
      ],
    })
    if (applied._tag === "RolledBack") {
      yield* runLinkUndo(linkUndo)
      return yield* refuse(
        "conflict",
        `cannot ${resolution} ${operationId}: ${applied.message}; every file already written was put back`,
      )
    }
    const linked = yield* Effect.either(createRecoveredLinks(op.links, want, linkUndo))
    if (Either.isLeft(linked)) {
      yield* rollBack(
        writeJournal,
        writes.map((w) => w.path),
        `the link ${linked.left.path} could not be made`,
      )
      yield* runLinkUndo(linkUndo)
      return yield* refuse(
        "conflict",
        `cannot ${resolution} ${operationId}: the link ${linked.left.path} cannot be made (${linked.left.message}); every file and link already changed was put back`,
      )
    }
    if (recordNeeded) {
      // Files that the session does not record are not left behind: put them back, keep it pending.
      const recorded = yield* Effect.either(recordContinued(op.record))
      if (Either.isLeft(recorded)) {
        yield* rollBack(
          writeJournal,
          writes.map((w) => w.path),
          `the session record could not be written`,
        )
        yield* runLinkUndo(linkUndo)
        return yield* Effect.fail(recorded.left)
      }
    }
    const at = yield* Clock.currentTimeMillis
    yield* journal.complete(operationId, {
      status: resolution === "continue" ? "committed" : "rolled_back",
      at,
    })
    return { operationId, resolution, files: applied.files }
  })
