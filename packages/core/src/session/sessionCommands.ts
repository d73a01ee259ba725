/**
 * The host's write side for conversation content: create a session, append user and assistant
 * messages (with their parts), start and complete turns, apply a compaction, and track background
 * tasks. Each command validates against the current state and appends with an expected version.
 * A session that names a parent is created only when that parent exists: a dangling parent would
 * be a reference nothing can ever repair.
 */
import {
  BackgroundTaskFinished,
  BackgroundTaskStarted,
  CompactionApplied,
  Message,
  MessageAppended,
  type MessageId,
  type MessageStatus,
  Part,
  PartAppended,
  type PartKind,
  refuse,
  Session,
  SessionCreated,
  type SessionId,
  type SessionKind,
  type TaskId,
  type TraceId,
  TurnCompleted,
  type TurnId,
  TurnStarted,
  type Visibility,
} from "@rewind/contracts"
import { Clock, Effect } from "effect"
import { IdGenerator } from "../ports/IdGenerator.js"
import { SessionStore } from "../ports/SessionStore.js"
import { branchView } from "./branchView.js"
import { appendDecided, loadSession } from "./loadSession.js"
import { emptySessionState } from "./sessionState.js"

export interface CreateSessionInput {
  readonly sessionId?: SessionId
  readonly title: string
  readonly cwd: string
  readonly kind?: SessionKind
  readonly parentId?: SessionId
  readonly rootTraceId?: TraceId
}

export const createSession = (input: CreateSessionInput) =>
  Effect.gen(function* () {
    const ids = yield* IdGenerator
    const store = yield* SessionStore
    const id = input.sessionId ?? ((yield* ids.next("ses")) as SessionId)
    if ((yield* store.version(id)) > 0) return yield* refuse("conflict", `session ${id} already exists`)
    if (input.parentId !== undefined && (yield* store.version(input.parentId)) === 0) {
      return yield* refuse(
        "session_not_found",
        `the parent session ${input.parentId} does not exist; nothing was created`,
      )
    }
    const createdAt = yield* Clock.currentTimeMillis
    const session = new Session({
      id,
      rootTraceId: input.rootTraceId ?? ((yield* ids.next("trace")) as TraceId),
      kind: input.kind ?? "main",
      title: input.title,
      cwd: input.cwd,
      createdAt,
      ...(input.parentId === undefined ? {} : { parentId: input.parentId }),
    })
    yield* appendDecided(emptySessionState, id, [new SessionCreated({ session })])
    return session
  })

export interface PartInput {
  readonly kind: PartKind
  readonly text?: string
  readonly toolName?: string
  readonly data?: unknown
}

const messageEvents = (
  sessionId: SessionId,
  turnId: TurnId,
  messageId: MessageId,
  fields: { role: Message["role"]; status: MessageStatus; visibility: Visibility },
  parts: ReadonlyArray<PartInput>,
) =>
  Effect.gen(function* () {
    const ids = yield* IdGenerator
    const createdAt = yield* Clock.currentTimeMillis
    const events: Array<MessageAppended | PartAppended> = [
      new MessageAppended({
        message: new Message({ id: messageId, sessionId, turnId, createdAt, ...fields }),
      }),
    ]
    for (const p of parts) {
      const part = new Part({
        id: (yield* ids.next("part")) as Part["id"],
        messageId,
        kind: p.kind,
        ...(p.text === undefined ? {} : { text: p.text }),
        ...(p.toolName === undefined ? {} : { toolName: p.toolName }),
        ...(p.data === undefined ? {} : { data: p.data }),
      })
      events.push(new PartAppended({ part }))
    }
    return events
  })

export interface UserMessageInput {
  readonly text: string
  readonly messageId?: MessageId
  readonly turnId?: TurnId
  readonly visibility?: Visibility
}

/** Appends a user message and starts its turn. */
export const appendUserMessage = (sessionId: SessionId, input: UserMessageInput) =>
  Effect.gen(function* () {
    const ids = yield* IdGenerator
    const state = yield* loadSession(sessionId)
    const messageId = input.messageId ?? ((yield* ids.next("msg")) as MessageId)
    if (state.messages.has(messageId)) return yield* refuse("conflict", `message ${messageId} already exists`)
    const turnId = input.turnId ?? ((yield* ids.next("turn")) as TurnId)
    if (state.turns.has(turnId)) return yield* refuse("conflict", `turn ${turnId} already exists`)
    const events = yield* messageEvents(
      sessionId,
      turnId,
      messageId,
      { role: "user", status: "ok", visibility: input.visibility ?? "all" },
      [{ kind: "text", text: input.text }],
    )
    yield* appendDecided(state, sessionId, [...events, new TurnStarted({ turnId, userMessageId: messageId })])
    return { messageId, turnId }
  })

export interface ReplyInput {
  readonly turnId: TurnId
  readonly role?: "assistant" | "system"
  readonly parts: ReadonlyArray<PartInput>
  readonly status?: MessageStatus
  readonly visibility?: Visibility
  readonly messageId?: MessageId
}

/** Appends an assistant (or system) message to a turn that is on the active branch. */
export const appendReply = (sessionId: SessionId, input: ReplyInput) =>
  Effect.gen(function* () {
    const ids = yield* IdGenerator
    const state = yield* loadSession(sessionId)
    const turn = state.turns.get(input.turnId)
    if (turn === undefined)
      return yield* refuse("not_found", `turn ${input.turnId} is not in session ${sessionId}`)
    if (!branchView(state).positions.has(turn.userMessageId)) {
      return yield* refuse("not_on_active_branch", `turn ${input.turnId} was cut by a rewind`)
    }
    const messageId = input.messageId ?? ((yield* ids.next("msg")) as MessageId)
    if (state.messages.has(messageId)) return yield* refuse("conflict", `message ${messageId} already exists`)
    const events = yield* messageEvents(
      sessionId,
      input.turnId,
      messageId,
      {
        role: input.role ?? "assistant",
        status: input.status ?? "ok",
        visibility: input.visibility ?? "all",
      },
      input.parts,
    )
    yield* appendDecided(state, sessionId, events)
    return { messageId }
  })

export const completeTurn = (
  sessionId: SessionId,
  turnId: TurnId,
  status: "completed" | "aborted" = "completed",
) =>
  Effect.gen(function* () {
    const state = yield* loadRunningTurn(sessionId, turnId)
    yield* appendDecided(state, sessionId, [new TurnCompleted({ turnId, status })])
  })

/** The session's state, refusing unless `turnId` is one of its turns and still running. */
export const loadRunningTurn = (sessionId: SessionId, turnId: TurnId) =>
  Effect.gen(function* () {
    const state = yield* loadSession(sessionId)
    const turn = state.turns.get(turnId)
    if (turn === undefined) return yield* refuse("not_found", `turn ${turnId} is not in session ${sessionId}`)
    if (turn.status !== "running")
      return yield* refuse("conflict", `turn ${turnId} is already ${turn.status}`)
    return state
  })

export interface CompactionInput {
  readonly fromMessageId: MessageId
  readonly toMessageId: MessageId
  readonly summaryText: string
  /** The turn the summary is filed under; defaults to the turn of the last covered message. */
  readonly turnId?: TurnId
}

/** Appends a summary message covering a contiguous range of the active branch. */
export const applyCompaction = (sessionId: SessionId, input: CompactionInput) =>
  Effect.gen(function* () {
    const ids = yield* IdGenerator
    const state = yield* loadSession(sessionId)
    const view = branchView(state)
    const from = view.positions.get(input.fromMessageId)
    const to = view.positions.get(input.toMessageId)
    if (from === undefined || to === undefined) {
      return yield* refuse("not_on_active_branch", "a compaction covers messages on the active branch only")
    }
    if (from > to)
      return yield* refuse("invalid_input", "a compaction range must run from an earlier to a later message")
    for (let i = from; i <= to; i++) {
      const m = state.messages.get(view.messageIds[i]!)
      if (m?.role === "summary" || view.coveredBy.has(view.messageIds[i]!)) {
        return yield* refuse(
          "invalid_input",
          "a compaction range must not contain a summary or already compacted messages",
        )
      }
    }
    const turnId = input.turnId ?? state.messages.get(input.toMessageId)!.turnId
    const summaryMessageId = (yield* ids.next("msg")) as MessageId
    const events = yield* messageEvents(
      sessionId,
      turnId,
      summaryMessageId,
      { role: "summary", status: "ok", visibility: "model_only" },
      [{ kind: "text", text: input.summaryText }],
    )
    yield* appendDecided(state, sessionId, [
      ...events,
      new CompactionApplied({
        summaryMessageId,
        fromMessageId: input.fromMessageId,
        toMessageId: input.toMessageId,
      }),
    ])
    return { summaryMessageId }
  })

/** Records a background task a turn started, tagged with the current branch generation. */
export const startBackgroundTask = (
  sessionId: SessionId,
  turnId: TurnId,
  description: string,
  taskId?: TaskId,
) =>
  Effect.gen(function* () {
    const ids = yield* IdGenerator
    const state = yield* loadSession(sessionId)
    if (!state.turns.has(turnId))
      return yield* refuse("not_found", `turn ${turnId} is not in session ${sessionId}`)
    const id = taskId ?? ((yield* ids.next("task")) as TaskId)
    if (state.backgroundTasks.has(id)) return yield* refuse("conflict", `task ${id} already exists`)
    yield* appendDecided(state, sessionId, [
      new BackgroundTaskStarted({
        taskId: id,
        turnId,
        description,
        branchGeneration: state.branchGeneration,
      }),
    ])
    return { taskId: id, branchGeneration: state.branchGeneration }
  })

/**
 * Records a task's result. A result from a task started on an older branch generation whose turn
 * a rewind cut is a late result of a dead branch: it is discarded (nothing is appended) and
 * reported as such. Tasks of turns the rewind kept carry on.
 */
export const finishBackgroundTask = (sessionId: SessionId, taskId: TaskId, outcome: "completed" | "failed") =>
  Effect.gen(function* () {
    const state = yield* loadSession(sessionId)
    const task = state.backgroundTasks.get(taskId)
    if (task === undefined) return yield* refuse("not_found", `task ${taskId} is not in session ${sessionId}`)
    if (task.status !== "running") return { accepted: false as const, reason: "already_finished" as const }
    const turn = state.turns.get(task.turnId)
    const onBranch = turn !== undefined && branchView(state).positions.has(turn.userMessageId)
    if (task.branchGeneration < state.branchGeneration && !onBranch) {
      return { accepted: false as const, reason: "stale_generation" as const }
    }
    yield* appendDecided(state, sessionId, [new BackgroundTaskFinished({ taskId, outcome })])
    return { accepted: true as const }
  })

/** Sessions in the store, newest first. */
export const listSessions = () =>
  Effect.flatMap(SessionStore, (store) => store.listSessions()).pipe(
    Effect.map((all) => [...all].sort((a, b) => b.createdAt - a.createdAt)),
  )
