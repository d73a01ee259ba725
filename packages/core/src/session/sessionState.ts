/**
 * The session projection: `evolve(state, event)` folds one event into the state, and
 * `projectSession(events)` folds a whole stream. Both are pure from the outside; internally a fold
 * works on one private copy so that loading a 100,000-event stream is linear, not quadratic.
 */
import {
  type Checkpoint,
  type CheckpointId,
  type ExecutionState,
  type ForkKind,
  type Goal,
  type GoalId,
  Message,
  type MessageId,
  type ModelSelection,
  type Part,
  type PointCaptured,
  type RevertCursor,
  type Session,
  type SessionEvent,
  type SessionId,
  type StoredEvent,
  type TaskId,
  type Turn,
  type TurnId,
  type VerificationId,
  type VerificationRecord,
  type WorkspaceAssigned,
  type WriteIntentDeclared,
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

/** A subagent session a turn of this session spawned (or a carried clone replacing one). */
export interface SubagentLink {
  readonly subagentSessionId: SessionId
  readonly turnId: TurnId
  readonly messageId: MessageId | undefined
  readonly carriedFrom: SessionId | undefined
  /** When the subagent was born: a carry leaves out subagents born after its cut. */
  readonly spawnedAt: number
}

/** Where a forked child's content came from (its SessionForked event). */
export interface ForkedFrom {
  readonly sourceSessionId: SessionId
  readonly originMessageId: MessageId | undefined
  readonly forkKind: ForkKind
  /** The number of leading events of the stream that are copied history. */
  readonly copiedEventCount: number
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
  // Fork-related records (goals, verifications, what replies ran with, subagents, fork origin).
  readonly goals: ReadonlyMap<GoalId, Goal>
  /** In the order they were recorded. */
  readonly verifications: ReadonlyMap<VerificationId, VerificationRecord>
  readonly modelSelections: ReadonlyMap<MessageId, ModelSelection>
  readonly executionStates: ReadonlyMap<MessageId, ExecutionState>
  readonly subagents: ReadonlyArray<SubagentLink>
  readonly forkedFrom: ForkedFrom | undefined
  /** The snapshot engine's point index: every point of the stream, in order (inherited ones too). */
  readonly points: ReadonlyArray<PointCaptured>
  readonly writeIntents: ReadonlyArray<WriteIntentDeclared>
  /** The tree of an isolated fork (`WorkspaceAssigned`); undefined: the host's shared workspace. */
  readonly workspace: WorkspaceAssigned | undefined
  /** The last message of the stream when each conversation rewind happened, in order (an inspector's branch boundaries). */
  readonly rewoundAfter: ReadonlyArray<MessageId>
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
  goals: Map<GoalId, Goal>
  verifications: Map<VerificationId, VerificationRecord>
  modelSelections: Map<MessageId, ModelSelection>
  executionStates: Map<MessageId, ExecutionState>
  subagents: Array<SubagentLink>
  forkedFrom: ForkedFrom | undefined
  points: Array<PointCaptured>
  writeIntents: Array<WriteIntentDeclared>
  workspace: WorkspaceAssigned | undefined
  rewoundAfter: Array<MessageId>
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
  goals: new Map(),
  verifications: new Map(),
  modelSelections: new Map(),
  executionStates: new Map(),
  subagents: [],
  forkedFrom: undefined,
  points: [],
  writeIntents: [],
  workspace: undefined,
  rewoundAfter: [],
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
  goals: new Map(s.goals),
  verifications: new Map(s.verifications),
  modelSelections: new Map(s.modelSelections),
  executionStates: new Map(s.executionStates),
  subagents: [...s.subagents],
  forkedFrom: s.forkedFrom,
  points: [...s.points],
  writeIntents: [...s.writeIntents],
  workspace: s.workspace,
  rewoundAfter: [...s.rewoundAfter],
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
    case "ConversationRewound": {
      const last = s.messageOrder[s.messageOrder.length - 1]
      if (last !== undefined) s.rewoundAfter.push(last)
      s.cursor = event.cursor
      s.branchGeneration = event.cursor.branchGeneration
      return
    }
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
    case "RedoApplied":
      if (event.cursor !== undefined) {
        s.cursor = event.cursor
        s.branchGeneration = event.cursor.branchGeneration
      }
      for (const id of event.unspentCheckpointIds) s.spentCheckpointIds.delete(id)
      return
    case "ForkBoundaryPinned": {
      const m = s.messages.get(event.messageId)
      // Validated when decoded; rebuilt without re-validation to keep a long fold linear.
      if (m !== undefined) s.messages.set(m.id, new Message({ ...m, anchor: event.boundary }, true))
      return
    }
    case "SessionForked":
      s.forkedFrom = {
        sourceSessionId: event.sourceSessionId,
        originMessageId: event.originMessageId,
        forkKind: event.forkKind,
        copiedEventCount: event.copiedEventCount,
      }
      return
    case "GoalUpdated":
      s.goals.set(event.goal.goalId, event.goal)
      return
    case "VerificationRecorded":
      s.verifications.set(event.verification.verificationId, event.verification)
      return
    case "ModelSelectionRecorded":
      s.modelSelections.set(event.messageId, event.selection)
      return
    case "ExecutionStateRecorded":
      s.executionStates.set(event.messageId, event.state)
      return
    // The point index is projected, so a capture on a long session does not re-read its stream.
    case "PointCaptured":
      s.points.push(event)
      return
    case "WriteIntentDeclared":
      s.writeIntents.push(event)
      return
    case "PointRestored":
      return
    case "WorkspaceAssigned":
      s.workspace = event
      return
    case "SubagentSpawned":
      s.subagents.push({
        subagentSessionId: event.subagentSessionId,
        turnId: event.turnId,
        messageId: event.messageId,
        carriedFrom: event.carriedFrom,
        spawnedAt: event.spawnedAt,
      })
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
