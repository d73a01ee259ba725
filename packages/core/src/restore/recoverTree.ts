/**
 * Recovery of an interrupted isolated-fork materialisation (`fork_materialise`, journaled by
 * `fork/isolatedFork.ts` before its private directory was made). What a crash can have left:
 *
 * - the private directory, full or partial (it crashed before the rename): rollback removes it
 *   whole; nothing else was created but the target's missing parents;
 * - the tree renamed onto the target with no child committed (it crashed between the rename and
 *   the commit): rollback leaves that tree where it is and reports it (`treeLeft`), because it may
 *   already be in someone's use and Rewind removes nobody's files on a guess; delete it by hand or
 *   fork again into another directory;
 * - the child committed (it crashed before the journal was closed): only `continue` applies, and
 *   it just closes the record.
 */
import { type OperationRecord, refuse, type SessionId } from "@rewind/contracts"
import { Clock, Effect, Either, Option } from "effect"
import { OperationJournal } from "../ports/OperationJournal.js"
import { SessionStore } from "../ports/SessionStore.js"
import { type StagedTreeState, Workspaces } from "../ports/Workspaces.js"

export interface RecoveredTree {
  readonly root: string
  readonly staging: string
  readonly childSessionId: SessionId
  /** What is there now; undefined when this host has no Workspaces to look with. */
  readonly state?: StagedTreeState
}

/** Whether the fork's child session was committed (its stream exists). */
const childCommitted = (childSessionId: SessionId) =>
  Effect.gen(function* () {
    const events = yield* Effect.either((yield* SessionStore).read(childSessionId))
    return Either.isRight(events) && events.right.length > 0
  })

/** The recover() entry of a `fork_materialise` operation. */
export const inspectTree = (record: OperationRecord) =>
  Effect.gen(function* () {
    const tree = record.intent.tree!
    const workspaces = yield* Effect.serviceOption(Workspaces)
    const state = Option.isNone(workspaces)
      ? undefined
      : Option.getOrUndefined(Option.getRight(yield* Effect.either(workspaces.value.inspect(tree))))
    const recorded = yield* childCommitted(tree.childSessionId)
    const recovered: RecoveredTree = { ...tree, ...(state === undefined ? {} : { state }) }
    return {
      record,
      recorded,
      files: [],
      links: [],
      // Rollback needs the Workspaces to remove the private directory with.
      resolvable: recorded || state !== undefined,
      tree: recovered,
    }
  })

/** `resolveOperation` of a `fork_materialise` operation. */
export const resolveTree = (record: OperationRecord, resolution: "continue" | "rollback") =>
  Effect.gen(function* () {
    const tree = record.intent.tree!
    const operationId = record.intent.operationId
    const journal = yield* OperationJournal
    const recorded = yield* childCommitted(tree.childSessionId)
    const finish = (status: "committed" | "rolled_back") =>
      Effect.flatMap(Clock.currentTimeMillis, (at) => journal.complete(operationId, { status, at }))
    if (resolution === "continue") {
      if (!recorded) {
        return yield* refuse(
          "conflict",
          `cannot continue ${operationId}: the fork's child ${tree.childSessionId} was never committed, so there is nothing to finish; roll it back (its private directory ${tree.staging} is removed)`,
        )
      }
      yield* finish("committed")
      return { operationId, resolution, files: [], tree: { ...tree, stagingRemoved: false, treeLeft: false } }
    }
    if (recorded) {
      return yield* refuse(
        "conflict",
        `operation ${operationId} is already recorded: session ${tree.childSessionId} works in ${tree.root}; continue it instead`,
      )
    }
    const workspaces = yield* Effect.serviceOption(Workspaces)
    if (Option.isNone(workspaces)) {
      return yield* refuse(
        "unavailable",
        `this host supplies no Workspaces, so the private directory ${tree.staging} cannot be removed here`,
      )
    }
    const stagingRemoved = yield* Effect.catchAll(workspaces.value.discard(tree), (e) =>
      refuse("unavailable", `the private directory ${tree.staging} cannot be removed: ${e.message}`),
    )
    const after = yield* Effect.either(workspaces.value.inspect(tree))
    // A tree at the target with no child to own it: what the rename made before the crash (or
    // what someone put there since). Left and reported, never removed on a guess.
    const treeLeft = Either.isRight(after) && after.right.root === "occupied"
    yield* finish("rolled_back")
    return { operationId, resolution, files: [], tree: { ...tree, stagingRemoved, treeLeft } }
  })
