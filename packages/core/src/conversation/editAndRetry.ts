/**
 * Edit & resend and retry (DESIGN §5): the two ways a host re-asks the last question.
 *
 * `editUserQuery` replaces the last turn's question. In `preserve` mode (the default) only the
 * conversation moves back; in `rewind` mode that turn's file changes are undone first through
 * preview/apply, and the edit is refused (with the preview in the refusal's details) when any
 * file is unsafe, any change came from a shell-like tool (it cannot be undone), or there is
 * nothing to undo. The cursor is written only after the files succeeded, then the new turn starts
 * with the new text.
 *
 * `retryTurn` re-asks the question of the last reply: the original input is read before the cut,
 * the conversation goes back to that question, and the same text starts a new turn. Only the last
 * turn's reply can be retried: while the last question still awaits its reply it refuses
 * `not_last_turn` and changes nothing.
 */
import { type CheckpointId, type Message, type MessageId, refuse, type SessionId } from "@rewind/contracts"
import { Effect } from "effect"
import { applyFileRewind } from "../files/applyFileRewind.js"
import { previewFileRewind } from "../files/fileRewindPreview.js"
import { activeBranch } from "../session/activeBranch.js"
import { loadSession } from "../session/loadSession.js"
import { appendUserMessage } from "../session/sessionCommands.js"
import type { SessionState } from "../session/sessionState.js"
import { messageText } from "../session/transcript.js"
import { rewindConversation } from "./rewindConversation.js"

export type EditMode = "preserve" | "rewind"

export interface EditUserQueryInput {
  readonly sessionId: SessionId
  /** The user message of the last turn. */
  readonly messageId: MessageId
  readonly text: string
  readonly mode?: EditMode
}

/** The messages of the active branch, newest last. */
const branchMessages = (state: SessionState): ReadonlyArray<Message> =>
  activeBranch(state).flatMap((id) => {
    const m = state.messages.get(id)
    return m === undefined ? [] : [m]
  })

const lastUserMessage = (state: SessionState): Message | undefined =>
  branchMessages(state).findLast((m) => m.role === "user")

export const editUserQuery = (input: EditUserQueryInput) =>
  Effect.gen(function* () {
    const mode = input.mode ?? "preserve"
    const state = yield* loadSession(input.sessionId)
    const target = state.messages.get(input.messageId)
    if (target === undefined) {
      return yield* refuse("not_found", `message ${input.messageId} is not in session ${input.sessionId}`)
    }
    if (target.role !== "user") {
      return yield* refuse("not_a_user_message", `message ${input.messageId} is not a user message`)
    }
    const last = lastUserMessage(state)
    if (last?.id !== input.messageId) {
      return yield* refuse(
        "not_last_turn",
        `only the last turn's question can be edited; ${input.messageId} is not it${last === undefined ? "" : ` (${last.id} is)`}`,
      )
    }

    let undone: ReadonlyArray<CheckpointId> = []
    let removedMessageIds: ReadonlyArray<MessageId> | undefined
    if (mode === "rewind") {
      const preview = yield* previewFileRewind({ sessionId: input.sessionId, turnId: target.turnId })
      if (preview.unsafe.length > 0) {
        return yield* refuse(
          "unsafe_files",
          `the turn's file changes cannot be undone safely: ${preview.unsafe.map((u) => `${u.path} (${u.reason})`).join(", ")}; nothing was changed`,
          { preview },
        )
      }
      if (preview.ignored.length > 0) {
        return yield* refuse(
          "unsafe_files",
          `the turn changed files a rewind leaves alone (${preview.ignored.map((i) => (i.reason === "ignore_rule" ? `${i.path}, excluded by ignore rules` : `${i.path} by ${i.toolName}`)).join("; ")}), which cannot be undone; edit in preserve mode or undo them by hand. Nothing was changed`,
          { preview },
        )
      }
      if (preview.checkpointIds.length === 0) {
        return yield* refuse("nothing_to_undo", "the turn has no file change to undo; nothing was changed", {
          preview,
        })
      }
      // Files first; the cursor is committed in the same append as their record, and only once
      // every file is written (a cursor that cannot be written puts the files back).
      const applied = yield* applyFileRewind(preview, { rewindConversationTo: input.messageId })
      undone = applied.checkpointIds
      removedMessageIds = applied.conversation?.removedMessageIds
    }
    if (removedMessageIds === undefined) {
      const conversation = yield* rewindConversation({
        sessionId: input.sessionId,
        messageId: input.messageId,
        scope: "conversation",
      })
      removedMessageIds = conversation.removedMessageIds
    }
    const turn = yield* appendUserMessage(input.sessionId, { text: input.text })
    return {
      ...turn,
      mode,
      replacedMessageId: input.messageId,
      removedMessageIds,
      /** The checkpoints undone in `rewind` mode. */
      undoneCheckpointIds: undone,
    }
  })

export interface RetryTurnInput {
  readonly sessionId: SessionId
  /** The reply to retry; by default the last reply on the active branch. */
  readonly messageId?: MessageId
}

export const retryTurn = (input: RetryTurnInput) =>
  Effect.gen(function* () {
    const state = yield* loadSession(input.sessionId)
    const lastReply = branchMessages(state).findLast((m) => m.role === "assistant")
    if (lastReply === undefined) {
      return yield* refuse("nothing_to_undo", `session ${input.sessionId} has no reply to retry`)
    }
    if (input.messageId !== undefined && input.messageId !== lastReply.id) {
      return yield* refuse(
        "not_last_turn",
        `only the last reply can be retried; ${input.messageId} is not it (${lastReply.id} is)`,
      )
    }
    const question = state.turns.get(lastReply.turnId)?.userMessageId
    const original = question === undefined ? undefined : state.messages.get(question)
    if (original === undefined) {
      return yield* refuse("not_found", `the question of reply ${lastReply.id} is not in the session`)
    }
    // A newer question still waiting for its reply: retrying the older reply would cut that
    // question from the branch, which is not what "retry" means.
    const lastQuestion = lastUserMessage(state)
    if (lastQuestion !== undefined && lastQuestion.id !== original.id) {
      return yield* refuse(
        "not_last_turn",
        `only the last turn's reply can be retried, and the last turn (question ${lastQuestion.id}) has no reply yet; nothing was changed`,
      )
    }
    // Resolved before the cut: after it, the question is no longer on the active branch.
    const text = messageText(state, original)
    const conversation = yield* rewindConversation({
      sessionId: input.sessionId,
      messageId: original.id,
      scope: "conversation",
    })
    const turn = yield* appendUserMessage(input.sessionId, { text })
    return {
      ...turn,
      text,
      retriedMessageId: lastReply.id,
      removedMessageIds: conversation.removedMessageIds,
    }
  })
