/**
 * Conversation rewind: move the branch cursor to before a user message without deleting anything.
 *
 * Order matters. Background tasks of the turns being cut are stopped first; if one will not stop,
 * nothing is written. Then one append records the stopped tasks and the new cursor (kept prefix,
 * cut point, generation + 1). Only then is the task registry told the new generation and the
 * derived state rebuilt from the new branch.
 */
import {
  BackgroundTaskFinished,
  ConversationRewound,
  type MessageId,
  type RevertCursor,
  type RewindScope,
  refuse,
  type SessionEvent,
  type SessionId,
  type TaskId,
  type TurnId,
} from "@rewind/contracts"
import { Effect } from "effect"
import { BackgroundTasks } from "../ports/BackgroundTasks.js"
import { type BranchView, branchView } from "../session/branchView.js"
import { appendDecided, loadSession } from "../session/loadSession.js"
import type { SessionState } from "../session/sessionState.js"
import { evaluateRewindTarget } from "./evaluateRewindTarget.js"

export interface RewindConversationInput {
  readonly sessionId: SessionId
  /** A user message, or (conversation scope only) an assistant reply, mapped to its turn's question. */
  readonly messageId: MessageId
  /** Recorded on the cursor; `both` when this is the conversation half of a files-and-conversation rewind. */
  readonly scope?: RewindScope
  /**
   * Events committed in the same append, after the cursor (so messages among them land on the new
   * branch): how a files-and-conversation rewind records its files half atomically with the cursor.
   */
  readonly alsoAppend?: ReadonlyArray<SessionEvent>
}

export interface ConversationRewindResult {
  readonly cursor: RevertCursor
  readonly targetMessageId: MessageId
  readonly removedMessageIds: ReadonlyArray<MessageId>
  readonly stoppedTaskIds: ReadonlyArray<TaskId>
  readonly state: SessionState
  /** Derived state rebuilt from the new active branch. */
  readonly view: BranchView
}

export const rewindConversation = (input: RewindConversationInput) =>
  Effect.gen(function* () {
    const scope = input.scope ?? "conversation"
    const state = yield* loadSession(input.sessionId)
    // Only a pure conversation rewind may map an assistant id; `both` needs the user message itself.
    const evaluation = evaluateRewindTarget(state, input.messageId, "conversation")
    if (evaluation.refusal !== undefined)
      return yield* refuse(evaluation.refusal.kind, evaluation.refusal.message)
    const targetMessageId = evaluation.targetMessageId!
    if (scope !== "conversation" && targetMessageId !== input.messageId) {
      return yield* refuse(
        "not_a_user_message",
        `a ${scope} rewind targets a user message, not ${input.messageId}`,
      )
    }

    const view = branchView(state)
    const position = view.positions.get(targetMessageId)!
    const kept = view.messageIds.slice(0, position)
    const removed = view.messageIds.slice(position)
    const cutTurns = new Set<TurnId>()
    for (const id of removed) {
      const m = state.messages.get(id)
      if (m !== undefined) cutTurns.add(m.turnId)
    }

    const tasks = yield* BackgroundTasks
    const stopped: Array<TaskId> = []
    for (const task of state.backgroundTasks.values()) {
      if (task.status !== "running" || !cutTurns.has(task.turnId)) continue
      const stop = yield* Effect.either(tasks.stop(input.sessionId, task.taskId))
      if (stop._tag === "Left") {
        return yield* refuse(
          "task_not_stopped",
          `background task ${task.taskId} (${task.description}) of a turn being cut could not be stopped: ${stop.left.message}; nothing was rewound`,
          { taskId: task.taskId, alreadyStopped: stopped },
        )
      }
      stopped.push(task.taskId)
    }

    const cursor: RevertCursor = {
      keptMessageIds: kept,
      branchCutAfterMessageId: state.messageOrder.at(-1),
      branchGeneration: state.branchGeneration + 1,
      targetMessageId,
      scope,
    }
    const next = yield* appendDecided(state, input.sessionId, [
      ...stopped.map((taskId) => new BackgroundTaskFinished({ taskId, outcome: "stopped" })),
      new ConversationRewound({ cursor, requestedMessageId: input.messageId }),
      ...(input.alsoAppend ?? []),
    ])
    yield* tasks.setGeneration(input.sessionId, cursor.branchGeneration)
    return {
      cursor,
      targetMessageId,
      removedMessageIds: removed,
      stoppedTaskIds: stopped,
      state: next,
      view: branchView(next),
    } satisfies ConversationRewindResult
  })
