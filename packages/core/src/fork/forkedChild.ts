/**
 * The child of a fork (at a message or from a checkpoint): built whole from a prefix of the
 * parent's active branch, with the fork notices and the carried subagents, checked by
 * `validateForkBundle`, then committed with the parent's command fact in one transaction. The
 * commit can be wrapped (a fork from a checkpoint runs it inside its workspace restore, after the
 * files are back, so a refused or failed restore commits nothing).
 */
import {
  type CheckpointId,
  type CommandId,
  ForkBundleInvalid,
  type ForkCommand,
  type ForkKind,
  type MessageId,
  type PlannedFileRestore,
  type SessionId,
} from "@rewind/contracts"
import { Clock, Effect } from "effect"
import { IdGenerator } from "../ports/IdGenerator.js"
import type { SessionState } from "../session/sessionState.js"
import type { ForkBoundaryAt } from "./forkBase.js"
import { buildForkBundle, type CopySpec, type NoticeSpec, sealBundle } from "./forkBundle.js"
import { commitFork } from "./forkCommit.js"
import { buildIsolatedTree, type IsolatedWorkspace } from "./isolatedFork.js"
import { planSubagentCarry } from "./subagentCarry.js"
import { validateForkBundle } from "./validateForkBundle.js"

/** The pair of notices a fork ends with: one for the model only, one divider for the UI only. */
export const forkNotices = (
  parentTitle: string,
  parentId: SessionId,
  originMessageId: MessageId,
): ReadonlyArray<NoticeSpec> => [
  {
    visibility: "model_only",
    kind: "notice",
    text:
      `This session is a fork of "${parentTitle}". Everything above was copied from it up to this point; ` +
      "the original session carries on separately, and nothing done here changes its conversation.",
  },
  {
    visibility: "ui_only",
    kind: "divider",
    text: `Forked from ${parentTitle}`,
    data: { parentSessionId: parentId, originMessageId },
  },
]

export interface ForkedChildInput<E, R> {
  readonly parent: SessionState
  readonly parentId: SessionId
  /** A non-empty prefix of the parent's active branch. */
  readonly prefix: ReadonlyArray<MessageId>
  readonly commandId: CommandId
  readonly command: Extract<ForkCommand, "fork_at_message" | "fork_from_checkpoint" | "rewind_by_fork">
  readonly requestKey: string
  readonly forkKind: Extract<ForkKind, "message" | "checkpoint">
  readonly checkpointId?: CheckpointId | undefined
  readonly goals: CopySpec["goals"]
  readonly restoredFiles?: ReadonlyArray<PlannedFileRestore>
  /** An isolated fork: the child's own tree, materialised from the state at `boundary`. */
  readonly isolated?: { readonly workspace: IsolatedWorkspace; readonly boundary: ForkBoundaryAt }
  /** Runs the commit (given as an Effect) in a frame of the caller's, e.g. a workspace restore. */
  readonly wrapCommit?: <A, E2, R2>(
    childId: SessionId,
    commit: Effect.Effect<A, E2, R2>,
  ) => Effect.Effect<A, E | E2, R | R2>
}

export const commitForkedChild = <E = never, R = never>(input: ForkedChildInput<E, R>) =>
  Effect.gen(function* () {
    const ids = yield* IdGenerator
    const parentSession = input.parent.session!
    const childId = (yield* ids.next("ses")) as SessionId
    const at = yield* Clock.currentTimeMillis
    const origin = input.prefix.at(-1)!
    const built = buildForkBundle({
      source: input.parent,
      sourceSessionId: input.parentId,
      prefix: input.prefix,
      child: {
        id: childId,
        kind: "fork",
        title: `Fork of ${parentSession.title}`,
        parentId: input.parentId,
        rootTraceId: parentSession.rootTraceId,
        cwd: parentSession.cwd,
        createdAt: at,
      },
      idBase: yield* ids.next("fork"),
      forked: {
        forkKind: input.forkKind,
        originMessageId: origin,
        commandId: input.commandId,
        checkpointId: input.checkpointId,
      },
      hideCopies: false,
      goals: input.goals,
      notices: forkNotices(parentSession.title, input.parentId, origin),
    })
    // The family at the fork point: subagents of the copied turns, cut when the origin was born.
    const carry = yield* planSubagentCarry({
      source: input.parent,
      sourceSessionId: input.parentId,
      turnMap: built.turnMap,
      messageMap: built.messageMap,
      cutAt: input.parent.messages.get(origin)!.createdAt,
      ownerSessionId: childId,
      createdAt: at,
      onlyIfCut: false,
    })
    const sealed = sealBundle(built, carry.links)
    // An isolated child's tree is made before anything is committed; a failed commit removes it.
    const tree =
      input.isolated === undefined
        ? undefined
        : yield* buildIsolatedTree({
            parentId: input.parentId,
            parent: input.parent,
            boundary: input.isolated.boundary,
            workspace: input.isolated.workspace,
            childId,
            childTurnId: built.turnMap.get(input.parent.messages.get(origin)!.turnId)!,
          })
    // The bundle is the copy of the parent; the tree's records (its base point, its root) are the
    // child's own and follow it.
    const events = tree === undefined ? sealed : [...sealed, ...tree.events]
    const problems = validateForkBundle(sealed, {
      sessionsInCommit: new Set(carry.links.map((l) => l.subagentSessionId)),
    })
    if (problems.length > 0) {
      if (tree !== undefined) yield* tree.discard
      return yield* new ForkBundleInvalid({
        sessionId: childId,
        problems: problems.map((p) => `event ${p.eventIndex}: ${p.message}`),
      })
    }
    const commit = commitFork({
      sessionId: input.parentId,
      commandId: input.commandId,
      result: {
        command: input.command,
        requestKey: input.requestKey,
        parentSessionId: input.parentId,
        childSessionId: childId,
        originMessageId: origin,
        copiedMessageCount: built.copiedMessageCount,
        carried: carry.carried,
        warnings: carry.warnings,
        ...(input.restoredFiles === undefined ? {} : { restoredFiles: input.restoredFiles }),
        ...(tree === undefined ? {} : { isolated: tree.report }),
      },
      streams: [{ sessionId: childId, events }, ...carry.streams],
      at,
    })
    const committed = input.wrapCommit === undefined ? commit : input.wrapCommit(childId, commit)
    return yield* tree === undefined
      ? committed
      : committed.pipe(Effect.onExit((exit) => (exit._tag === "Success" ? tree.committed : tree.discard)))
  })
