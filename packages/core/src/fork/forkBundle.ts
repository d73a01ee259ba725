/**
 * Builds a child session's whole stream in memory from a prefix of a source session: messages,
 * parts, turns, compactions, goals and verification records under fresh child-local ids, with
 * `forkOrigin` on every copied message and every anchor rewritten to the child's ids. Pure: ids
 * come from a caller-given fresh base, time from the caller. Nothing is committed here; the caller
 * validates the events (`validateForkBundle`) and commits them in one transaction.
 */
import {
  type CheckpointId,
  type CommandId,
  type ForkKind,
  type GoalSnapshot,
  goalSnapshotOf,
  type MessageId,
  type PartKind,
  type Session,
  type SessionCreated,
  type SessionEvent,
  SessionForked,
  type SessionId,
  type SessionKind,
  type TraceId,
  type TurnId,
  type VerificationId,
  type Visibility,
} from "@rewind/contracts"
import type { SessionState } from "../session/sessionState.js"
import { appendNotices, copyGoals, copyLastRunSettings, copyVerifications } from "./forkBundleCarry.js"
import {
  closeTurns,
  copyCompactions,
  copyMessages,
  freshIds,
  planCopy,
  sessionCreated,
} from "./forkBundleCopy.js"

export interface NoticeSpec {
  readonly visibility: Visibility
  readonly kind: PartKind
  readonly text: string
  readonly data?: unknown
}

export interface ChildSpec {
  readonly id: SessionId
  readonly kind: SessionKind
  readonly title: string
  readonly parentId: SessionId
  readonly rootTraceId: TraceId
  readonly cwd: string
  readonly createdAt: number
}

export interface ForkedSpec {
  readonly forkKind: ForkKind
  readonly originMessageId?: MessageId | undefined
  readonly commandId?: CommandId | undefined
  readonly checkpointId?: CheckpointId | undefined
}

export interface CopySpec {
  readonly source: SessionState
  readonly sourceSessionId: SessionId
  /** Source message ids to copy, in order: a prefix of the source's active branch. */
  readonly prefix: ReadonlyArray<MessageId>
  readonly child: ChildSpec
  /** A fresh id; every child-local id is `<idBase>.<letter><n>`. */
  readonly idBase: string
  readonly forked: ForkedSpec
  /**
   * Side chat: every copy is model-only, UI-only replies are left out, goals, verification
   * records and the goal part of every anchor are not copied.
   */
  readonly hideCopies: boolean
  readonly goals:
    | { readonly goals: ReadonlyArray<GoalSnapshot>; readonly verificationIds: ReadonlyArray<VerificationId> }
    | undefined
  /** System messages appended after the copies, in the last copied turn. */
  readonly notices: ReadonlyArray<NoticeSpec>
}

export interface BuiltBundle {
  readonly sessionId: SessionId
  readonly session: Session
  /** Every event but SessionForked, which `sealBundle` adds once all events are known. */
  readonly events: Array<SessionEvent>
  readonly forked: ForkedSpec
  readonly sourceSessionId: SessionId
  /** Source message id → child message id, for the copied messages. */
  readonly messageMap: ReadonlyMap<MessageId, MessageId>
  readonly turnMap: ReadonlyMap<TurnId, TurnId>
  readonly copiedMessageCount: number
}

/**
 * Builds the child's events in named steps (`forkBundleCopy.ts`, `forkBundleCarry.ts`): plan the copy (child ids for
 * every copied message and turn), the session, its goals, the messages with their parts and turns,
 * the turns closed, the compactions inside the prefix, the verification records, the last run
 * settings, the notices.
 */
export const buildForkBundle = (spec: CopySpec): BuiltBundle => {
  const fresh = freshIds(spec.idBase)
  const plan = planCopy(spec, fresh)
  const events: Array<SessionEvent> = [sessionCreated(spec)]
  const goals = copyGoals(spec, fresh, events)
  copyMessages(spec, plan, goals, fresh, events)
  closeTurns(spec, plan, events)
  copyCompactions(spec, plan, events)
  copyVerifications(spec, plan, goals, events)
  copyLastRunSettings(spec, plan, events)
  appendNotices(spec, plan, fresh, events)
  return {
    sessionId: spec.child.id,
    session: (events[0] as SessionCreated).session,
    events,
    forked: spec.forked,
    sourceSessionId: spec.sourceSessionId,
    messageMap: plan.messageMap,
    turnMap: plan.turnMap,
    copiedMessageCount: plan.copied.length,
  }
}

/**
 * The goals and verification records a copy ending at `prefix` carries: those pinned on the last
 * copied message with a goal boundary, else the current goals (live-run fields stripped) and the
 * verification records made on copied messages.
 */
export const goalsForPrefix = (
  state: SessionState,
  prefix: ReadonlyArray<MessageId>,
): {
  readonly goals: ReadonlyArray<GoalSnapshot>
  readonly verificationIds: ReadonlyArray<VerificationId>
} => {
  for (let i = prefix.length - 1; i >= 0; i--) {
    const boundary = state.messages.get(prefix[i]!)?.anchor?.goalBoundary
    if (boundary !== undefined) return boundary
  }
  const inPrefix = new Set(prefix)
  return {
    goals: [...state.goals.values()].map(goalSnapshotOf),
    verificationIds: [...state.verifications.values()]
      .filter((v) => inPrefix.has(v.messageId))
      .map((v) => v.verificationId),
  }
}

/**
 * The final event list: SessionCreated, then SessionForked (which counts every event of the
 * copied history, so later carries know where the child's own life starts), then the rest.
 */
export const sealBundle = (
  built: BuiltBundle,
  extra: ReadonlyArray<SessionEvent> = [],
): ReadonlyArray<SessionEvent> => {
  const f = built.forked
  const forked = new SessionForked({
    sourceSessionId: built.sourceSessionId,
    strategy: "fork_required",
    forkKind: f.forkKind,
    copiedEventCount: built.events.length + extra.length + 1,
    ...(f.originMessageId === undefined ? {} : { originMessageId: f.originMessageId }),
    ...(f.commandId === undefined ? {} : { commandId: f.commandId }),
    ...(f.checkpointId === undefined ? {} : { checkpointId: f.checkpointId }),
  })
  // One copy of a list that may hold tens of thousands of events.
  const events = built.events
  const out = new Array<SessionEvent>(events.length + extra.length + 1)
  out[0] = events[0]!
  out[1] = forked
  for (let i = 1; i < events.length; i++) out[i + 1] = events[i]!
  for (let i = 0; i < extra.length; i++) out[events.length + 1 + i] = extra[i]!
  return out
}
