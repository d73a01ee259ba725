/**
 * Host commands for the records a fork copies: goals (with their live-run fields), verification
 * records, and the model selection and execution state an assistant message ran with. Each command
 * validates against the current state and appends with an expected version.
 */
import {
  ExecutionState,
  ExecutionStateRecorded,
  Goal,
  type GoalId,
  type GoalLiveRun,
  type GoalStatus,
  GoalUpdated,
  type MessageId,
  ModelSelection,
  ModelSelectionRecorded,
  type RunId,
  refuse,
  type SessionId,
  type TurnId,
  type VerificationId,
  type VerificationOutcome,
  VerificationRecord,
  VerificationRecorded,
} from "@rewind/contracts"
import { Clock, Effect, Either, ParseResult, Schema } from "effect"
import { IdGenerator } from "../ports/IdGenerator.js"
import { branchView } from "./branchView.js"
import { appendDecided, loadSession } from "./loadSession.js"
import type { SessionState } from "./sessionState.js"

/** Decodes host input against a schema; a mismatch is an `invalid_input` refusal naming the problem. */
const decodeInput = <A, I>(schema: Schema.Schema<A, I>, what: string, input: unknown) =>
  Either.match(Schema.decodeUnknownEither(schema)(input), {
    onLeft: (error) =>
      refuse("invalid_input", `${what} is invalid: ${ParseResult.TreeFormatter.formatErrorSync(error)}`),
    onRight: (value) => Effect.succeed(value),
  })

export interface GoalInput {
  /** Omit to create a new goal. */
  readonly goalId?: GoalId
  readonly text?: string
  readonly status?: GoalStatus
  readonly tokensUsed?: number
  /** Start a live run on the goal (`turnId` must be a turn of this session); `null` ends it. */
  readonly liveRun?: { readonly runId: RunId; readonly turnId: TurnId } | null
}

/** Creates or updates a goal; the event carries the whole goal, live-run fields included. */
export const updateGoal = (sessionId: SessionId, input: GoalInput) =>
  Effect.gen(function* () {
    const ids = yield* IdGenerator
    const state = yield* loadSession(sessionId)
    const existing = input.goalId === undefined ? undefined : state.goals.get(input.goalId)
    if (input.goalId !== undefined && existing === undefined && input.text === undefined) {
      return yield* refuse("not_found", `goal ${input.goalId} is not in session ${sessionId}`)
    }
    if (existing === undefined && (input.text === undefined || input.text.trim() === "")) {
      return yield* refuse("invalid_input", "a new goal needs a non-empty text")
    }
    let liveRun: GoalLiveRun | undefined = existing?.liveRun
    if (input.liveRun === null) liveRun = undefined
    else if (input.liveRun !== undefined) {
      if (!state.turns.has(input.liveRun.turnId)) {
        return yield* refuse("not_found", `turn ${input.liveRun.turnId} is not in session ${sessionId}`)
      }
      liveRun = { ...input.liveRun, startedAt: yield* Clock.currentTimeMillis }
    }
    const goalId = input.goalId ?? ((yield* ids.next("goal")) as GoalId)
    const goal = yield* decodeInput(Goal, "the goal", {
      goalId,
      text: input.text ?? existing?.text,
      status: input.status ?? existing?.status ?? "active",
      tokensUsed: input.tokensUsed ?? existing?.tokensUsed ?? 0,
      ...(liveRun === undefined ? {} : { liveRun }),
    })
    yield* appendDecided(state, sessionId, [new GoalUpdated({ goal })])
    return goal
  })

export interface VerificationInput {
  readonly messageId: MessageId
  readonly outcome: VerificationOutcome
  readonly summary: string
  readonly goalId?: GoalId
  readonly verificationId?: VerificationId
}

/** Records a completed verification, tied to a message on the active branch (and a goal, if any). */
export const recordVerification = (sessionId: SessionId, input: VerificationInput) =>
  Effect.gen(function* () {
    const ids = yield* IdGenerator
    const state = yield* loadSession(sessionId)
    const message = state.messages.get(input.messageId)
    if (message === undefined)
      return yield* refuse("not_found", `message ${input.messageId} is not in session ${sessionId}`)
    if (!branchView(state).positions.has(input.messageId)) {
      return yield* refuse("not_on_active_branch", `message ${input.messageId} was cut by a rewind`)
    }
    if (input.goalId !== undefined && !state.goals.has(input.goalId)) {
      return yield* refuse("not_found", `goal ${input.goalId} is not in session ${sessionId}`)
    }
    const verificationId = input.verificationId ?? ((yield* ids.next("verif")) as VerificationId)
    if (state.verifications.has(verificationId)) {
      return yield* refuse("conflict", `verification ${verificationId} already exists`)
    }
    const verification = yield* decodeInput(VerificationRecord, "the verification record", {
      verificationId,
      messageId: input.messageId,
      turnId: message.turnId,
      outcome: input.outcome,
      summary: input.summary,
      ...(input.goalId === undefined ? {} : { goalId: input.goalId }),
    })
    yield* appendDecided(state, sessionId, [new VerificationRecorded({ verification })])
    return verification
  })

const assistantMessage = (state: SessionState, sessionId: SessionId, messageId: MessageId) => {
  const message = state.messages.get(messageId)
  if (message === undefined) return refuse("not_found", `message ${messageId} is not in session ${sessionId}`)
  if (message.role !== "assistant") {
    return refuse(
      "invalid_input",
      `message ${messageId} is a ${message.role} message; model selection and execution state are recorded on assistant messages`,
    )
  }
  return Effect.succeed(message)
}

/** Records the model an assistant message was produced with. */
export const recordModelSelection = (sessionId: SessionId, messageId: MessageId, selection: ModelSelection) =>
  Effect.gen(function* () {
    const state = yield* loadSession(sessionId)
    yield* assistantMessage(state, sessionId, messageId)
    const decoded = yield* decodeInput(ModelSelection, "the model selection", selection)
    yield* appendDecided(state, sessionId, [new ModelSelectionRecorded({ messageId, selection: decoded })])
    return decoded
  })

/** Records the execution state (mode, settings) an assistant message was produced under. */
export const recordExecutionState = (
  sessionId: SessionId,
  messageId: MessageId,
  executionState: ExecutionState,
) =>
  Effect.gen(function* () {
    const state = yield* loadSession(sessionId)
    yield* assistantMessage(state, sessionId, messageId)
    const decoded = yield* decodeInput(ExecutionState, "the execution state", executionState)
    yield* appendDecided(state, sessionId, [new ExecutionStateRecorded({ messageId, state: decoded })])
    return decoded
  })
