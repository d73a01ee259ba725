/**
 * Fork from a checkpoint (DESIGN §6.2): a fork whose workspace is put back too. The plan
 * (`planForkRestore`) says what to copy and which file versions to write. The child is built and
 * validated first; then the ForkWorkspaceRestore port checks every file (an unsafe one refuses with
 * nothing written and no child), writes them, and only then commits the child, so a refused or
 * failed restore creates no child. The workspace is the parent's: the parent must not be mid-turn.
 */
import {
  type CommandId,
  type ForkWorkspace,
  type OperationId,
  refuse,
  type SessionId,
} from "@rewind/contracts"
import { Effect, Option } from "effect"
import { IdGenerator } from "../ports/IdGenerator.js"
import { branchView } from "../session/branchView.js"
import { goalsForPrefix } from "./forkBundle.js"
import { readSessionStream, replayedFork, requireCommandId } from "./forkCommit.js"
import { commitForkedChild } from "./forkedChild.js"
import { type ForkRestoreError, ForkWorkspaceRestore } from "./forkWorkspaceRestoreService.js"
import { isolatedKey } from "./isolatedFork.js"
import { type ForkRestoreTarget, lastWrittenVersions, planForkRestore } from "./planForkRestore.js"

export interface ForkFromCheckpointInput {
  readonly sessionId: SessionId
  readonly target: ForkRestoreTarget
  readonly commandId: CommandId
  /**
   * `shared` (the default): the parent's tree is put back as planned. `isolated`: the parent's tree
   * is left alone and the child gets its own, as it stood at the end of the message's turn, or
   * just before the checkpoint.
   */
  readonly workspace?: ForkWorkspace | undefined
}

const requestKeyOf = (target: ForkRestoreTarget) =>
  "messageId" in target
    ? `fork_from_checkpoint:message:${target.messageId}`
    : "checkpointId" in target
      ? `fork_from_checkpoint:checkpoint:${target.checkpointId}`
      : "fork_from_checkpoint:latest"

export const forkFromCheckpoint = (input: ForkFromCheckpointInput) =>
  Effect.gen(function* () {
    yield* requireCommandId(input.commandId)
    const requestKey = requestKeyOf(input.target) + isolatedKey(input.workspace)
    const replay = yield* replayedFork(input.sessionId, input.commandId, "fork_from_checkpoint", requestKey)
    if (Option.isSome(replay)) return replay.value
    const { state } = yield* readSessionStream(input.sessionId)
    const plan = planForkRestore(state, input.target)
    if (!plan.ok) return yield* refuse(plan.kind, plan.message)
    if (input.workspace?.mode === "isolated") {
      return yield* commitForkedChild({
        parent: state,
        parentId: input.sessionId,
        prefix: plan.prefix,
        commandId: input.commandId,
        command: "fork_from_checkpoint",
        requestKey,
        forkKind: "checkpoint",
        checkpointId: plan.checkpointId,
        goals: goalsForPrefix(state, plan.prefix),
        isolated: {
          workspace: input.workspace,
          boundary:
            plan.checkpointId === undefined
              ? { after: "turn_end", messageId: plan.prefix.at(-1)! }
              : { before: "checkpoint", checkpointId: plan.checkpointId },
        },
      })
    }
    const lastUser = branchView(state).lastUserMessageId
    const running = lastUser === undefined ? undefined : state.turns.get(state.messages.get(lastUser)!.turnId)
    if (plan.files.length > 0 && running?.status === "running") {
      return yield* refuse(
        "busy",
        `session ${input.sessionId} is running turn ${running.id}; a fork from a checkpoint rewrites files in the workspace it shares, so wait for the turn to end`,
      )
    }
    const restorer = yield* ForkWorkspaceRestore
    const ids = yield* IdGenerator
    const lastWritten = lastWrittenVersions(state)
    return yield* commitForkedChild<ForkRestoreError>({
      parent: state,
      parentId: input.sessionId,
      prefix: plan.prefix,
      commandId: input.commandId,
      command: "fork_from_checkpoint",
      requestKey,
      forkKind: "checkpoint",
      checkpointId: plan.checkpointId,
      goals: goalsForPrefix(state, plan.prefix),
      restoredFiles: plan.files,
      wrapCommit: (childSessionId, commit) =>
        plan.files.length === 0
          ? commit
          : Effect.flatMap(ids.next("op"), (operationId) =>
              restorer.restore(
                {
                  sessionId: input.sessionId,
                  childSessionId,
                  operationId: operationId as OperationId,
                  files: plan.files.map((f) => ({ ...f, lastWritten: lastWritten.get(f.path) })),
                },
                commit,
              ),
            ),
    })
  })
