/**
 * The fold behind `evolve`/`projectSession` (sessionState.ts): `copy` makes the one private,
 * mutable copy a fold works on, `apply` folds one event into it in place. Internal to `session/`:
 * nothing outside may hold a `MutableState`, so every `SessionState` a caller sees is never
 * changed after it is returned.
 */
import {
  type Checkpoint,
  type CheckpointId,
  type ExecutionState,
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
  type TaskId,
  type Turn,
  type TurnId,
  type VerificationId,
  type VerificationRecord,
  type WorkspaceAssigned,
  type WriteIntentDeclared,
} from "@rewind/contracts"
import type { BackgroundTask, Compaction, ForkedFrom, SessionState, SubagentLink } from "./sessionState.js"

export interface MutableState {
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

export const copy = (s: SessionState): MutableState => ({
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

export const apply = (s: MutableState, event: SessionEvent, at: number): void => {
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
