/**
 * Side chats (DESIGN §6.3): ask about the conversation without disturbing the running task. A
 * side chat is a hidden fork: it inherits the parent's active branch (only up to the running
 * turn's user input when the parent is mid-turn) as model-only context, carries no goals or
 * verification records, and ends with a model-only reminder that the context is inherited and the
 * workspace is not to be changed unless asked. It shares the parent's workspace; the reminder is a
 * request to the model, not isolation.
 */
import { type CommandId, ForkBundleInvalid, refuse, type SessionId } from "@rewind/contracts"
import { Clock, Effect, Option } from "effect"
import { IdGenerator } from "../ports/IdGenerator.js"
import { branchView } from "../session/branchView.js"
import type { SessionState } from "../session/sessionState.js"
import { buildForkBundle, sealBundle } from "./forkBundle.js"
import { commitFork, readSessionStream, replayedFork, requireCommandId } from "./forkCommit.js"
import { validateForkBundle } from "./validateForkBundle.js"

export const SIDE_CHAT_TITLE = "Side chat"

export const SIDE_CHAT_REMINDER = [
  "You are in a side chat. The conversation above was inherited from the main task as background only.",
  "Do not pick up or continue the main task's work; answer only the questions asked in this side chat.",
  "Leave the workspace unchanged unless the user explicitly asks you, in this side chat, to change it.",
].join(" ")

export interface CreateSideChatInput {
  readonly sessionId: SessionId
  readonly commandId: CommandId
}

/** The part of the active branch a side chat inherits: all of it, or up to a running turn's input. */
export const sideChatPrefix = (state: SessionState) => {
  const view = branchView(state)
  const lastUser = view.lastUserMessageId
  if (lastUser === undefined) return view.messageIds
  const turn = state.turns.get(state.messages.get(lastUser)!.turnId)
  if (turn?.status !== "running" || turn.userMessageId !== lastUser) return view.messageIds
  // Mid-turn: the reply being generated and its tool calls are not settled context.
  return view.messageIds.slice(0, view.positions.get(lastUser)! + 1)
}

export const createSideChat = (input: CreateSideChatInput) =>
  Effect.gen(function* () {
    yield* requireCommandId(input.commandId)
    const requestKey = "side_chat"
    const replay = yield* replayedFork(input.sessionId, input.commandId, "side_chat", requestKey)
    if (Option.isSome(replay)) return replay.value
    const { state } = yield* readSessionStream(input.sessionId)
    const prefix = sideChatPrefix(state)
    if (prefix.length === 0) {
      return yield* refuse(
        "unavailable",
        `session ${input.sessionId} has no conversation yet to start a side chat from`,
      )
    }
    const ids = yield* IdGenerator
    const parent = state.session!
    const childId = (yield* ids.next("ses")) as SessionId
    const at = yield* Clock.currentTimeMillis
    const built = buildForkBundle({
      source: state,
      sourceSessionId: input.sessionId,
      prefix,
      child: {
        id: childId,
        kind: "selection_side_chat",
        title: SIDE_CHAT_TITLE,
        parentId: input.sessionId,
        rootTraceId: parent.rootTraceId,
        cwd: parent.cwd,
        createdAt: at,
      },
      idBase: yield* ids.next("fork"),
      forked: { forkKind: "side_chat", originMessageId: prefix.at(-1), commandId: input.commandId },
      hideCopies: true,
      goals: undefined,
      notices: [{ visibility: "model_only", kind: "notice", text: SIDE_CHAT_REMINDER }],
    })
    const events = sealBundle(built)
    const problems = validateForkBundle(events)
    if (problems.length > 0) {
      return yield* new ForkBundleInvalid({
        sessionId: childId,
        problems: problems.map((p) => `event ${p.eventIndex}: ${p.message}`),
      })
    }
    return yield* commitFork({
      sessionId: input.sessionId,
      commandId: input.commandId,
      result: {
        command: "side_chat",
        requestKey,
        parentSessionId: input.sessionId,
        childSessionId: childId,
        originMessageId: prefix.at(-1)!,
        copiedMessageCount: built.copiedMessageCount,
        carried: [],
        warnings: [],
      },
      streams: [{ sessionId: childId, events }],
      at,
    })
  })
