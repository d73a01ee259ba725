/**
 * The session projection: `evolve(state, event)` folds one event into the state, and
 * `projectSession(events)` folds a whole stream. Both are pure from the outside; internally a fold
 * works on one private copy so that loading a 100,000-event stream is linear, not quadratic.
 */
import type {
  Checkpoint,
  CheckpointId,
  ExecutionState,
  ForkKind,
  Goal,
  GoalId,
  Message,
  MessageId,
  ModelSelection,
  Part,
  PointCaptured,
  RevertCursor,
  Session,
  SessionEvent,
  SessionId,
  StoredEvent,
  TaskId,
  Turn,
  TurnId,
  VerificationId,
  VerificationRecord,
  WorkspaceAssigned,
  WriteIntentDeclared,
} from "@rewind/contracts"
import { apply, copy } from "./sessionFold.js"

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
