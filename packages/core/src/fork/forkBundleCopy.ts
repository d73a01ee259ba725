/**
 * The steps of `buildForkBundle` that copy the history itself — the copy plan, the session, the
 * messages with their parts and turns, the closed turns, the compactions — each appending to the one
 * event list (a fork of a long session copies tens of thousands of events: no step builds a list of
 * its own to concatenate). Pure. Module-internal to `fork/`.
 *
 * Unmapped references keep their source id on purpose: `validateForkBundle` then reports them.
 */
import {
  CompactionApplied,
  Message,
  MessageAppended,
  type MessageId,
  Part,
  PartAppended,
  type PartId,
  Session,
  SessionCreated,
  type SessionEvent,
  type StableBoundary,
  TurnCompleted,
  type TurnId,
  TurnStarted,
  trustedInstance,
} from "@rewind/contracts"
import { branchView } from "../session/branchView.js"
import type { CopySpec } from "./forkBundle.js"
import type { GoalCopy } from "./forkBundleCarry.js"

/** Mints child-local ids: `<idBase>.<letter><n>`. */
export type FreshId = (letter: "m" | "p" | "t" | "g" | "v") => string

export const freshIds = (idBase: string): FreshId => {
  const counters = { m: 0, p: 0, t: 0, g: 0, v: 0 }
  return (letter) => `${idBase}.${letter}${++counters[letter]}`
}

/**
 * The copied messages side by side (source id, source message, child id, the child turn a user
 * message starts), so the later steps look nothing up again.
 */
export interface CopyPlan {
  readonly copied: Array<MessageId>
  readonly copiedMessages: Array<Message>
  readonly childIds: Array<MessageId>
  readonly startsTurn: Array<TurnId | undefined>
  readonly messageMap: Map<MessageId, MessageId>
  readonly turnMap: Map<TurnId, TurnId>
  readonly mapMessage: (id: MessageId) => MessageId
  readonly mapTurn: (id: TurnId) => TurnId
}

export const planCopy = (spec: CopySpec, fresh: FreshId): CopyPlan => {
  const { source } = spec
  const plan: CopyPlan = {
    copied: [],
    copiedMessages: [],
    childIds: [],
    startsTurn: [],
    messageMap: new Map(),
    turnMap: new Map(),
    mapMessage: (id) => plan.messageMap.get(id) ?? id,
    mapTurn: (id) => plan.turnMap.get(id) ?? id,
  }
  for (const id of spec.prefix) {
    const m = source.messages.get(id)
    if (m === undefined) continue
    // A side chat starts with a blank screen: UI-only replies have nothing for the model.
    if (spec.hideCopies && m.visibility === "ui_only" && m.role !== "user") continue
    const childId = fresh("m") as MessageId
    plan.messageMap.set(id, childId)
    plan.copied.push(id)
    plan.copiedMessages.push(m)
    plan.childIds.push(childId)
    let childTurn: TurnId | undefined
    if (m.role === "user" && source.turns.get(m.turnId)?.userMessageId === id) {
      childTurn = fresh("t") as TurnId
      plan.turnMap.set(m.turnId, childTurn)
    }
    plan.startsTurn.push(childTurn)
  }
  return plan
}

export const sessionCreated = (spec: CopySpec): SessionCreated => {
  const { child } = spec
  return new SessionCreated({
    session: new Session({
      id: child.id,
      parentId: child.parentId,
      rootTraceId: child.rootTraceId,
      kind: child.kind,
      title: child.title,
      cwd: child.cwd,
      createdAt: child.createdAt,
    }),
  })
}

/** An anchor rewritten to the child's ids; its round count is recounted on the child's history. */
const remapAnchor = (
  plan: CopyPlan,
  goals: GoalCopy | undefined,
  anchor: StableBoundary,
  rounds: number,
): StableBoundary => {
  const ordered: Array<MessageId> = []
  for (const id of anchor.orderedMessageIds) {
    const mapped = plan.messageMap.get(id)
    if (mapped !== undefined) ordered.push(mapped)
  }
  const goalBoundary =
    anchor.goalBoundary === undefined || goals === undefined
      ? undefined
      : {
          goals: anchor.goalBoundary.goals.map((g) => ({
            ...g,
            goalId: goals.goalMap.get(g.goalId) ?? g.goalId,
          })),
          verificationIds: anchor.goalBoundary.verificationIds.map(
            (id) => goals.verificationMap.get(id) ?? id,
          ),
        }
  const remapped: { -readonly [K in keyof StableBoundary]: StableBoundary[K] } = {
    turnId: plan.mapTurn(anchor.turnId),
    // Recounted on the child's own history (a side chat may leave messages out).
    historyRoundCount: rounds,
    orderedMessageIds: (ordered.length === 0 ? [plan.mapMessage(anchor.boundaryMessageId)] : ordered) as [
      MessageId,
      ...Array<MessageId>,
    ],
    boundaryMessageId: plan.mapMessage(anchor.boundaryMessageId),
  }
  if (goalBoundary !== undefined) remapped.goalBoundary = goalBoundary
  return remapped
}

/** Every copied message with its parts, and `TurnStarted` after the user message that opens a turn. */
export const copyMessages = (
  spec: CopySpec,
  plan: CopyPlan,
  goals: GoalCopy | undefined,
  fresh: FreshId,
  events: Array<SessionEvent>,
) => {
  const { source, child, sourceSessionId } = spec
  let rounds = 0
  for (let c = 0; c < plan.copied.length; c++) {
    const id = plan.copied[c]!
    const m = plan.copiedMessages[c]!
    if (m.role === "user") rounds++
    const childId = plan.childIds[c]!
    // Copies of decoded values under minted ids: built as trusted instances (the constructors'
    // validation would only repeat what decoding checked; validateForkBundle checks the references
    // and the store's encoding checks every value before it is written).
    // Optional fields are set only when present (no `...{}` spreads: this loop runs per message).
    const fields: { -readonly [K in keyof Message]: Message[K] } = {
      id: childId,
      sessionId: child.id,
      turnId: plan.mapTurn(m.turnId),
      role: m.role,
      status: m.status,
      visibility: spec.hideCopies ? "model_only" : m.visibility,
      createdAt: m.createdAt,
      forkOrigin: { sessionId: sourceSessionId, messageId: id },
    }
    if (m.anchor !== undefined) fields.anchor = remapAnchor(plan, goals, m.anchor, rounds)
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
    const childTurn = plan.startsTurn[c]
    if (childTurn !== undefined) {
      events.push(
        trustedInstance(TurnStarted, { _tag: "TurnStarted", turnId: childTurn, userMessageId: childId }),
      )
    }
  }
}

/** The child will never continue a turn that was still running in the source. */
export const closeTurns = (spec: CopySpec, plan: CopyPlan, events: Array<SessionEvent>) => {
  for (const [sourceTurn, childTurn] of plan.turnMap) {
    const status = spec.source.turns.get(sourceTurn)?.status
    events.push(
      trustedInstance(TurnCompleted, {
        _tag: "TurnCompleted",
        turnId: childTurn,
        status: status === "completed" ? "completed" : "aborted",
      }),
    )
  }
}

/** The source's active compactions that lie wholly inside the prefix, over the copied messages. */
export const copyCompactions = (spec: CopySpec, plan: CopyPlan, events: Array<SessionEvent>) => {
  const view = branchView(spec.source)
  const limit = spec.prefix.length
  for (const c of view.activeCompactions) {
    const from = view.positions.get(c.fromMessageId)!
    const to = view.positions.get(c.toMessageId)!
    const summary = view.positions.get(c.summaryMessageId)!
    if (summary >= limit || to >= limit || !plan.messageMap.has(c.summaryMessageId)) continue
    let first: MessageId | undefined
    let last: MessageId | undefined
    for (let i = from; i <= to; i++) {
      const id = view.messageIds[i]!
      if (!plan.messageMap.has(id)) continue
      first ??= id
      last = id
    }
    if (first === undefined || last === undefined) continue
    events.push(
      new CompactionApplied(
        {
          summaryMessageId: plan.mapMessage(c.summaryMessageId),
          fromMessageId: plan.mapMessage(first),
          toMessageId: plan.mapMessage(last),
        },
        true,
      ),
    )
  }
}
