/**
 * The session projection: `evolve(state, event)` folds one event into the state, and
 * `projectSession(events)` folds a whole stream. Both are pure from the outside; internally a fold
 * works on one private copy so that loading a 100,000-event stream is linear, not quadratic.
 */
import type {
  Checkpoint,
  CheckpointId,
  Message,
  MessageId,
  Part,
  RevertCursor,
  Session,
  SessionEvent,
  StoredEvent,
  TaskId,
  Turn,
  TurnId,
} from "@rewind/contracts"

export interface Compaction {
  readonly summaryMessageId: MessageId
  readonly fromMessageId: MessageId
  readonly toMessageId: MessageId
}

export interface BackgroundTask {
  readonly taskId: TaskId
  readonly turnId: TurnId
  readonly description: string
  readonly branchGeneration: number
  readonly status: "running" | "completed" | "failed" | "stopped"
}

export interface SessionState {
  readonly session: Session | undefined
  /** Number of events folded in: the stream version an append must expect. */
  readonly version: number
  readonly messages: ReadonlyMap<MessageId, Message>
  /** Every message in append order, cut branches included (the stream never forgets). */
  readonly messageOrder: ReadonlyArray<MessageId>
  readonly messageIndex: ReadonlyMap<MessageId, number>
  readonly parts: ReadonlyMap<MessageId, ReadonlyArray<Part>>
  readonly turns: ReadonlyMap<TurnId, Turn>
  readonly cursor: RevertCursor | undefined
  readonly branchGeneration: number
  readonly compactions: ReadonlyArray<Compaction>
  readonly backgroundTasks: ReadonlyMap<TaskId, BackgroundTask>
  readonly checkpoints: ReadonlyArray<Checkpoint>
  /** Checkpoints whose undo was applied (preview/apply or a restore): the offer is spent. */
  readonly spentCheckpointIds: ReadonlySet<CheckpointId>
  readonly lastEventAt: number
}

interface MutableState {
  session: Session | undefined
  version: number
  messages: Map<MessageId, Message>
  messageOrder: Array<MessageId>
  messageIndex: Map<MessageId, number>
  parts: Map<MessageId, ReadonlyArray<Part>>
  turns: Map<TurnId, Turn>
  cursor: RevertCursor | undefined
  branchGeneration: number
  compactions: Array<Compaction>
  backgroundTasks: Map<TaskId, BackgroundTask>
  checkpoints: Array<Checkpoint>
  spentCheckpointIds: Set<CheckpointId>
  lastEventAt: number
}

export const emptySessionState: SessionState = Object.freeze<SessionState>({
  session: undefined,
  version: 0,
  messages: new Map(),
  messageOrder: [],
  messageIndex: new Map(),
  parts: new Map(),
  turns: new Map(),
  cursor: undefined,
  branchGeneration: 0,
  compactions: [],
  backgroundTasks: new Map(),
  checkpoints: [],
  spentCheckpointIds: new Set<CheckpointId>(),
  lastEventAt: 0,
})

const copy = (s: SessionState): MutableState => ({
  session: s.session,
  version: s.version,
  messages: new Map(s.messages),
  messageOrder: [...s.messageOrder],
  messageIndex: new Map(s.messageIndex),
  parts: new Map(s.parts),
  turns: new Map(s.turns),
  cursor: s.cursor,
  branchGeneration: s.branchGeneration,
  compactions: [...s.compactions],
  backgroundTasks: new Map(s.backgroundTasks),
  checkpoints: [...s.checkpoints],
  spentCheckpointIds: new Set(s.spentCheckpointIds),
  lastEventAt: s.lastEventAt,
})

const apply = (s: MutableState, event: SessionEvent, at: number): void => {
  s.version += 1
  s.lastEventAt = at
  switch (event._tag) {
    case "SessionCreated":
      s.session = event.session
      return
    case "MessageAppended": {
      const m = event.message
      if (!s.messageIndex.has(m.id)) {
        s.messageIndex.set(m.id, s.messageOrder.length)
        s.messageOrder.push(m.id)
      }
      s.messages.set(m.id, m)
      return
    }
    case "PartAppended": {
      const existing = s.parts.get(event.part.messageId) ?? []
      s.parts.set(event.part.messageId, [...existing, event.part])
      return
    }
    case "TurnStarted": {
      const sessionId = s.session?.id
      if (sessionId === undefined) return
      s.turns.set(
        event.turnId,
        makeTurn({
          id: event.turnId,
          sessionId,
          userMessageId: event.userMessageId,
          startedAt: at,
          status: "running",
        }),
      )
      return
    }
    case "TurnCompleted": {
      const turn = s.turns.get(event.turnId)
      if (turn !== undefined) {
        s.turns.set(event.turnId, makeTurn({ ...turn, status: event.status, completedAt: at }))
      }
      return
    }
    case "ConversationRewound":
      s.cursor = event.cursor
      s.branchGeneration = event.cursor.branchGeneration
      return
    case "CompactionApplied":
      s.compactions.push({
        summaryMessageId: event.summaryMessageId,
        fromMessageId: event.fromMessageId,
        toMessageId: event.toMessageId,
      })
      return
    case "BackgroundTaskStarted":
      s.backgroundTasks.set(event.taskId, {
        taskId: event.taskId,
        turnId: event.turnId,
        description: event.description,
        branchGeneration: event.branchGeneration,
        status: "running",
      })
      return
    case "BackgroundTaskFinished": {
      const task = s.backgroundTasks.get(event.taskId)
      if (task !== undefined) s.backgroundTasks.set(event.taskId, { ...task, status: event.outcome })
      return
    }
    case "CheckpointCreated":
      s.checkpoints.push(event.checkpoint)
      return
    case "FileRewindApplied":
      for (const id of event.checkpointIds) s.spentCheckpointIds.add(id)
      return
    case "WorkspaceRewound":
      if (event.outcome === "applied") for (const id of event.checkpointIds) s.spentCheckpointIds.add(id)
      return
  }
}

// Turn is a Schema.Class; building it through its constructor would re-validate on every fold.
// The fields were validated when the event was decoded, so a plain object with the same shape is used.
const makeTurn = (fields: Turn): Turn => fields

/** Folds one event into a state, returning a new state; the input is left untouched. */
export const evolve = (state: SessionState, event: SessionEvent, at = state.lastEventAt): SessionState => {
  const next = copy(state)
  apply(next, event, at)
  return next
}

/** Folds a whole stream (as read from a store) into a state. */
export const projectSession = (
  events: ReadonlyArray<StoredEvent>,
  initial: SessionState = emptySessionState,
): SessionState => {
  const s = copy(initial)
  for (const stored of events) apply(s, stored.event, stored.at)
  return s
}

/** Folds plain events (no store envelope), e.g. the ones a command just decided on. */
export const evolveAll = (
  state: SessionState,
  events: ReadonlyArray<SessionEvent>,
  at: number,
): SessionState => {
  const s = copy(state)
  for (const event of events) apply(s, event, at)
  return s
}
