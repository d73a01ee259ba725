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
  CompactionApplied,
  ExecutionStateRecorded,
  type ForkKind,
  type GoalId,
  type GoalSnapshot,
  GoalUpdated,
  goalSnapshotOf,
  Message,
  MessageAppended,
  type MessageId,
  ModelSelectionRecorded,
  Part,
  PartAppended,
  type PartId,
  type PartKind,
  Session,
  SessionCreated,
  type SessionEvent,
  SessionForked,
  type SessionId,
  type SessionKind,
  type StableBoundary,
  type TraceId,
  TurnCompleted,
  type TurnId,
  TurnStarted,
  trustedInstance,
  type VerificationId,
  VerificationRecorded,
  type Visibility,
} from "@rewind/contracts"
import { branchView } from "../session/branchView.js"
import type { SessionState } from "../session/sessionState.js"

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

export const buildForkBundle = (spec: CopySpec): BuiltBundle => {
  const { source, sourceSessionId, child, idBase } = spec
  const counters = { m: 0, p: 0, t: 0, g: 0, v: 0 }
  const fresh = (letter: keyof typeof counters) => `${idBase}.${letter}${++counters[letter]}`

  // The copied messages side by side (source id, source message, child id, the child turn a user
  // message starts), so the copy loop below looks nothing up again.
  const copied: Array<MessageId> = []
  const copiedMessages: Array<Message> = []
  const childIds: Array<MessageId> = []
  const startsTurn: Array<TurnId | undefined> = []
  const messageMap = new Map<MessageId, MessageId>()
  const turnMap = new Map<TurnId, TurnId>()
  for (const id of spec.prefix) {
    const m = source.messages.get(id)
    if (m === undefined) continue
    // A side chat starts with a blank screen: UI-only replies have nothing for the model.
    if (spec.hideCopies && m.visibility === "ui_only" && m.role !== "user") continue
    const childId = fresh("m") as MessageId
    messageMap.set(id, childId)
    copied.push(id)
    copiedMessages.push(m)
    childIds.push(childId)
    let childTurn: TurnId | undefined
    if (m.role === "user" && source.turns.get(m.turnId)?.userMessageId === id) {
      childTurn = fresh("t") as TurnId
      turnMap.set(m.turnId, childTurn)
    }
    startsTurn.push(childTurn)
  }

  // Unmapped references keep their source id on purpose: validation then reports them.
  const mapMessage = (id: MessageId) => messageMap.get(id) ?? id
  const mapTurn = (id: TurnId) => turnMap.get(id) ?? id
  const goalMap = new Map<GoalId, GoalId>()
  const verificationMap = new Map<VerificationId, VerificationId>()

  const events: Array<SessionEvent> = [
    new SessionCreated({
      session: new Session({
        id: child.id,
        parentId: child.parentId,
        rootTraceId: child.rootTraceId,
        kind: child.kind,
        title: child.title,
        cwd: child.cwd,
        createdAt: child.createdAt,
      }),
    }),
  ]

  const goalSource = spec.hideCopies ? undefined : spec.goals
  if (goalSource !== undefined) {
    for (const g of goalSource.goals) {
      const goalId = fresh("g") as GoalId
      goalMap.set(g.goalId, goalId)
      events.push(
        new GoalUpdated(
          {
            goal: {
              goalId,
              text: g.text,
              status: g.status,
              tokensUsed: g.tokensUsed,
              forkOrigin: { sessionId: sourceSessionId, id: g.goalId },
            },
          },
          true,
        ),
      )
    }
    for (const id of goalSource.verificationIds) verificationMap.set(id, fresh("v") as VerificationId)
  }

  const remapAnchor = (anchor: StableBoundary, rounds: number): StableBoundary => {
    const ordered: Array<MessageId> = []
    for (const id of anchor.orderedMessageIds) {
      const mapped = messageMap.get(id)
      if (mapped !== undefined) ordered.push(mapped)
    }
    const goalBoundary =
      anchor.goalBoundary === undefined || goalSource === undefined
        ? undefined
        : {
            goals: anchor.goalBoundary.goals.map((g) => ({
              ...g,
              goalId: goalMap.get(g.goalId) ?? g.goalId,
            })),
            verificationIds: anchor.goalBoundary.verificationIds.map((id) => verificationMap.get(id) ?? id),
          }
    const remapped: { -readonly [K in keyof StableBoundary]: StableBoundary[K] } = {
      turnId: mapTurn(anchor.turnId),
      // Recounted on the child's own history (a side chat may leave messages out).
      historyRoundCount: rounds,
      orderedMessageIds: (ordered.length === 0 ? [mapMessage(anchor.boundaryMessageId)] : ordered) as [
        MessageId,
        ...Array<MessageId>,
      ],
      boundaryMessageId: mapMessage(anchor.boundaryMessageId),
    }
    if (goalBoundary !== undefined) remapped.goalBoundary = goalBoundary
    return remapped
  }

  let rounds = 0
  for (let c = 0; c < copied.length; c++) {
    const id = copied[c]!
    const m = copiedMessages[c]!
    if (m.role === "user") rounds++
    const childId = childIds[c]!
    // Copies of decoded values under minted ids: built as trusted instances (the constructors'
    // validation would only repeat what decoding checked; validateForkBundle checks the references
    // and the store's encoding checks every value before it is written).
    // Optional fields are set only when present (no `...{}` spreads: this loop runs per message).
    const fields: { -readonly [K in keyof Message]: Message[K] } = {
      id: childId,
      sessionId: child.id,
      turnId: mapTurn(m.turnId),
      role: m.role,
      status: m.status,
      visibility: spec.hideCopies ? "model_only" : m.visibility,
      createdAt: m.createdAt,
      forkOrigin: { sessionId: sourceSessionId, messageId: id },
    }
    if (m.anchor !== undefined) fields.anchor = remapAnchor(m.anchor, rounds)
    const message = trustedInstance(Message, fields)
    events.push(trustedInstance(MessageAppended, { _tag: "MessageAppended", message }))
    for (const p of source.parts.get(id) ?? []) {
      const partFields: { -readonly [K in keyof Part]: Part[K] } = {
        id: fresh("p") as PartId,
        messageId: childId,
        kind: p.kind,
      }
      if (p.text !== undefined) partFields.text = p.text
      if (p.toolName !== undefined) partFields.toolName = p.toolName
      if (p.data !== undefined) partFields.data = p.data
      events.push(
        trustedInstance(PartAppended, { _tag: "PartAppended", part: trustedInstance(Part, partFields) }),
      )
    }
    const childTurn = startsTurn[c]
    if (childTurn !== undefined) {
      events.push(
        trustedInstance(TurnStarted, { _tag: "TurnStarted", turnId: childTurn, userMessageId: childId }),
      )
    }
  }

  // The child will never continue a turn that was still running in the source.
  for (const [sourceTurn, childTurn] of turnMap) {
    const status = source.turns.get(sourceTurn)?.status
    events.push(
      trustedInstance(TurnCompleted, {
        _tag: "TurnCompleted",
        turnId: childTurn,
        status: status === "completed" ? "completed" : "aborted",
      }),
    )
  }

  const view = branchView(source)
  const limit = spec.prefix.length
  for (const c of view.activeCompactions) {
    const from = view.positions.get(c.fromMessageId)!
    const to = view.positions.get(c.toMessageId)!
    const summary = view.positions.get(c.summaryMessageId)!
    if (summary >= limit || to >= limit || !messageMap.has(c.summaryMessageId)) continue
    let first: MessageId | undefined
    let last: MessageId | undefined
    for (let i = from; i <= to; i++) {
      const id = view.messageIds[i]!
      if (!messageMap.has(id)) continue
      first ??= id
      last = id
    }
    if (first === undefined || last === undefined) continue
    events.push(
      new CompactionApplied(
        {
          summaryMessageId: mapMessage(c.summaryMessageId),
          fromMessageId: mapMessage(first),
          toMessageId: mapMessage(last),
        },
        true,
      ),
    )
  }

  if (goalSource !== undefined) {
    for (const [sourceId, childId] of verificationMap) {
      const v = source.verifications.get(sourceId)
      if (v === undefined) continue
      events.push(
        new VerificationRecorded(
          {
            verification: {
              verificationId: childId,
              messageId: mapMessage(v.messageId),
              turnId: mapTurn(v.turnId),
              outcome: v.outcome,
              summary: v.summary,
              ...(v.goalId === undefined ? {} : { goalId: goalMap.get(v.goalId) ?? v.goalId }),
              forkOrigin: { sessionId: sourceSessionId, id: sourceId },
            },
          },
          true,
        ),
      )
    }
  }

  // What the last copied replies ran with, not what the source runs with now.
  let selectionFound = false
  let executionFound = false
  for (let i = copied.length - 1; i >= 0 && !(selectionFound && executionFound); i--) {
    const id = copied[i]!
    if (source.messages.get(id)!.role !== "assistant") continue
    const selection = selectionFound ? undefined : source.modelSelections.get(id)
    if (selection !== undefined) {
      selectionFound = true
      events.push(new ModelSelectionRecorded({ messageId: messageMap.get(id)!, selection }, true))
    }
    const execution = executionFound ? undefined : source.executionStates.get(id)
    if (execution !== undefined) {
      executionFound = true
      events.push(new ExecutionStateRecorded({ messageId: messageMap.get(id)!, state: execution }, true))
    }
  }

  const lastCopied = copied.at(-1)
  const noticeTurn = lastCopied === undefined ? undefined : mapTurn(source.messages.get(lastCopied)!.turnId)
  if (noticeTurn !== undefined) {
    for (const notice of spec.notices) {
      const messageId = fresh("m") as MessageId
      events.push(
        new MessageAppended(
          {
            message: new Message(
              {
                id: messageId,
                sessionId: child.id,
                turnId: noticeTurn,
                role: "system",
                status: "ok",
                visibility: notice.visibility,
                createdAt: child.createdAt,
              },
              true,
            ),
          },
          true,
        ),
        new PartAppended(
          {
            part: new Part(
              {
                id: fresh("p") as PartId,
                messageId,
                kind: notice.kind,
                text: notice.text,
                ...(notice.data === undefined ? {} : { data: notice.data }),
              },
              true,
            ),
          },
          true,
        ),
      )
    }
  }

  return {
    sessionId: child.id,
    session: (events[0] as SessionCreated).session,
    events,
    forked: spec.forked,
    sourceSessionId,
    messageMap,
    turnMap,
    copiedMessageCount: copied.length,
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
