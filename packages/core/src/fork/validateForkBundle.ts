/**
 * The last check before a fork bundle is committed: every reference in the child's events points
 * inside the child. Messages belong to the child and to a turn it started, parts to its messages,
 * anchors, compactions, goals, verification records, model selection and execution state to its
 * own ids, subagent links to sessions created in the same commit. Provenance (`forkOrigin`,
 * SessionForked's source) is the one thing allowed to name the source. Pure; returns every problem
 * found, an empty list when the bundle is sound.
 */
import type {
  GoalId,
  MessageAppended,
  MessageId,
  PartId,
  SessionEvent,
  SessionId,
  StableBoundary,
  TurnId,
  VerificationId,
} from "@rewind/contracts"

export interface ForkBundleProblem {
  /** Index of the offending event in the bundle (-1 for the bundle as a whole). */
  readonly eventIndex: number
  readonly message: string
}

export interface ForkBundleContext {
  /** Other sessions created in the same commit (carried subagent clones). */
  readonly sessionsInCommit?: ReadonlySet<SessionId>
}

/** A check that needs the whole bundle (a turn or goal may come after the message naming it). */
type Deferred =
  | { readonly kind: "turn"; readonly index: number; readonly messageId: MessageId; readonly turnId: TurnId }
  | {
      readonly kind: "anchor"
      readonly index: number
      readonly messageId: MessageId
      readonly anchor: StableBoundary
    }

/** What the scan has seen so far; sets only grow, so a reference sound now stays sound. */
interface BundleScan {
  readonly events: ReadonlyArray<SessionEvent>
  readonly childId: SessionId
  readonly context: ForkBundleContext
  readonly problems: Array<ForkBundleProblem>
  readonly deferred: Array<Deferred>
  /** Each message by the index of the event that appended it last (the index also orders them): no record per message on a bundle of thousands. */
  readonly messages: Map<MessageId, number>
  readonly parts: Set<PartId>
  readonly turnsStarted: Set<TurnId>
  readonly turnsCompleted: Set<TurnId>
  readonly goals: Set<GoalId>
  readonly verifications: Set<VerificationId>
  forkedCount: number
}

const report = (scan: BundleScan, eventIndex: number, message: string) => {
  scan.problems.push({ eventIndex, message })
}

const requireMessage = (scan: BundleScan, i: number, id: MessageId, what: string) => {
  if (!scan.messages.has(id)) report(scan, i, `${what} names message ${id}, which is not in the child`)
}

/** Why an anchor is not (yet) sound inside the child, or undefined. */
const anchorProblem = (
  scan: BundleScan,
  messageId: MessageId,
  anchor: StableBoundary,
): string | undefined => {
  const ordered = anchor.orderedMessageIds
  let allInside = true
  for (let k = 0; k < ordered.length && allInside; k++) allInside = scan.messages.has(ordered[k]!)
  if (!allInside) {
    const missing = ordered.filter((id) => !scan.messages.has(id))
    return `the boundary on ${messageId} names messages outside the child: ${missing.join(", ")}`
  }
  if (!scan.turnsStarted.has(anchor.turnId))
    return `the boundary on ${messageId} names turn ${anchor.turnId}, not in the child`
  const g = anchor.goalBoundary
  if (g === undefined) return undefined
  const badGoals = g.goals.filter((x) => !scan.goals.has(x.goalId)).map((x) => x.goalId)
  if (badGoals.length > 0)
    return `the boundary on ${messageId} names goals outside the child: ${badGoals.join(", ")}`
  const badVerifications = g.verificationIds.filter((id) => !scan.verifications.has(id))
  if (badVerifications.length > 0) {
    return `the boundary on ${messageId} names verification records outside the child: ${badVerifications.join(", ")}`
  }
  return undefined
}

const checkAnchor = (scan: BundleScan, i: number, messageId: MessageId, anchor: StableBoundary) => {
  if (anchor.boundaryMessageId !== messageId) {
    report(scan, i, `the boundary on ${messageId} names ${anchor.boundaryMessageId} as its boundary message`)
  }
  if (anchor.orderedMessageIds[anchor.orderedMessageIds.length - 1] !== messageId) {
    report(scan, i, `the boundary on ${messageId} does not end at that message`)
  }
  // One that is not sound yet may be once later events are seen: decided at the end.
  if (anchorProblem(scan, messageId, anchor) !== undefined)
    scan.deferred.push({ kind: "anchor", index: i, messageId, anchor })
}

/** The child's own session: a fork, side chat or subagent with a parent other than itself. */
const checkCreated = (
  scan: BundleScan,
  session: Extract<SessionEvent, { _tag: "SessionCreated" }>["session"],
) => {
  if (session.kind === "main")
    report(scan, 0, "a fork bundle creates a fork, side chat or subagent, not a main session")
  if (session.parentId === undefined) report(scan, 0, "a forked session names its parent")
  if (session.parentId === scan.childId) report(scan, 0, "a session cannot be its own parent")
}

const checkMessage = (scan: BundleScan, i: number, event: MessageAppended) => {
  const m = event.message
  if (m.sessionId !== scan.childId)
    report(scan, i, `message ${m.id} belongs to session ${m.sessionId}, not the child`)
  if (scan.messages.has(m.id)) report(scan, i, `message ${m.id} is appended twice`)
  if (m.forkOrigin !== undefined && m.forkOrigin.sessionId === scan.childId) {
    report(scan, i, `message ${m.id} claims to be copied from the child itself`)
  }
  scan.messages.set(m.id, i)
  // A user message comes before its TurnStarted: only a turn not started yet is checked at the end.
  if (!scan.turnsStarted.has(m.turnId))
    scan.deferred.push({ kind: "turn", index: i, messageId: m.id, turnId: m.turnId })
  if (m.anchor !== undefined) checkAnchor(scan, i, m.id, m.anchor)
}

type EventOf<T extends SessionEvent["_tag"]> = Extract<SessionEvent, { _tag: T }>

const checkTurnStarted = (scan: BundleScan, i: number, event: EventOf<"TurnStarted">) => {
  const at = scan.messages.get(event.userMessageId)
  const m = at === undefined ? undefined : (scan.events[at] as MessageAppended).message
  if (scan.turnsStarted.has(event.turnId)) report(scan, i, `turn ${event.turnId} is started twice`)
  scan.turnsStarted.add(event.turnId)
  if (m === undefined)
    report(scan, i, `turn ${event.turnId} starts at message ${event.userMessageId}, not in the child`)
  else if (m.role !== "user" || m.turnId !== event.turnId) {
    report(scan, i, `turn ${event.turnId} must start at a user message of that turn`)
  }
}

const checkCompaction = (scan: BundleScan, i: number, event: EventOf<"CompactionApplied">) => {
  const ids = [event.fromMessageId, event.toMessageId, event.summaryMessageId]
  const missing = ids.filter((id) => !scan.messages.has(id))
  if (missing.length > 0) {
    report(scan, i, `a compaction names messages outside the child: ${missing.join(", ")}`)
    return
  }
  const [from, to, summary] = ids.map((id) => scan.messages.get(id)!) as [number, number, number]
  if (!(from <= to && to < summary))
    report(scan, i, "a compaction must cover an earlier range than its summary")
}

const checkVerification = (scan: BundleScan, i: number, event: EventOf<"VerificationRecorded">) => {
  const v = event.verification
  if (scan.verifications.has(v.verificationId))
    report(scan, i, `verification ${v.verificationId} is copied twice`)
  scan.verifications.add(v.verificationId)
  requireMessage(scan, i, v.messageId, `verification ${v.verificationId}`)
  if (!scan.turnsStarted.has(v.turnId))
    report(scan, i, `verification ${v.verificationId} names turn ${v.turnId}, not in the child`)
  if (v.goalId !== undefined && !scan.goals.has(v.goalId)) {
    report(scan, i, `verification ${v.verificationId} names goal ${v.goalId}, not in the child`)
  }
}

const checkSubagentLink = (scan: BundleScan, i: number, event: EventOf<"SubagentSpawned">) => {
  if (!scan.turnsStarted.has(event.turnId))
    report(scan, i, `a subagent link names turn ${event.turnId}, not in the child`)
  if (event.messageId !== undefined) requireMessage(scan, i, event.messageId, "a subagent link")
  if (!(scan.context.sessionsInCommit?.has(event.subagentSessionId) ?? false)) {
    report(
      scan,
      i,
      `a subagent link names session ${event.subagentSessionId}, which is not created with the child`,
    )
  }
}

/** One event after SessionCreated, checked against what came before it. */
const checkEvent = (scan: BundleScan, i: number, event: SessionEvent) => {
  switch (event._tag) {
    case "SessionForked":
      scan.forkedCount++
      if (event.sourceSessionId === scan.childId) report(scan, i, "a session cannot be forked from itself")
      return
    case "MessageAppended":
      return checkMessage(scan, i, event)
    case "PartAppended":
      if (scan.parts.has(event.part.id)) report(scan, i, `part ${event.part.id} is appended twice`)
      scan.parts.add(event.part.id)
      return requireMessage(scan, i, event.part.messageId, `part ${event.part.id}`)
    case "TurnStarted":
      return checkTurnStarted(scan, i, event)
    case "TurnCompleted":
      if (!scan.turnsStarted.has(event.turnId))
        report(scan, i, `turn ${event.turnId} is completed but was never started`)
      if (scan.turnsCompleted.has(event.turnId)) report(scan, i, `turn ${event.turnId} is completed twice`)
      scan.turnsCompleted.add(event.turnId)
      return
    case "CompactionApplied":
      return checkCompaction(scan, i, event)
    case "GoalUpdated":
      if (scan.goals.has(event.goal.goalId)) report(scan, i, `goal ${event.goal.goalId} is copied twice`)
      scan.goals.add(event.goal.goalId)
      if (event.goal.liveRun !== undefined)
        report(scan, i, `goal ${event.goal.goalId} carries the source's live-run fields`)
      return
    case "VerificationRecorded":
      return checkVerification(scan, i, event)
    case "ModelSelectionRecorded":
      return requireMessage(scan, i, event.messageId, "the model selection")
    case "ExecutionStateRecorded":
      return requireMessage(scan, i, event.messageId, "the execution state")
    case "ForkBoundaryPinned":
      requireMessage(scan, i, event.messageId, "a fork boundary")
      return checkAnchor(scan, i, event.messageId, event.boundary)
    case "SubagentSpawned":
      return checkSubagentLink(scan, i, event)
    default:
      // Rewinds, checkpoints, background tasks, a second SessionCreated: never part of a fork.
      report(scan, i, `a fork bundle never contains ${event._tag}`)
  }
}

/** What could only be decided with the whole bundle seen: turns started after their message, anchors. */
const settleDeferred = (scan: BundleScan) => {
  for (const d of scan.deferred) {
    const message =
      d.kind === "anchor"
        ? anchorProblem(scan, d.messageId, d.anchor)
        : scan.turnsStarted.has(d.turnId)
          ? undefined
          : `message ${d.messageId} belongs to turn ${d.turnId}, which the child never started`
    if (message !== undefined) report(scan, d.index, message)
  }
}

export const validateForkBundle = (
  events: ReadonlyArray<SessionEvent>,
  context: ForkBundleContext = {},
): ReadonlyArray<ForkBundleProblem> => {
  const first = events[0]
  if (first === undefined || first._tag !== "SessionCreated") {
    return [{ eventIndex: -1, message: "a fork bundle starts with SessionCreated" }]
  }
  const scan: BundleScan = {
    events,
    childId: first.session.id,
    context,
    problems: [],
    deferred: [],
    messages: new Map(),
    parts: new Set(),
    turnsStarted: new Set(),
    turnsCompleted: new Set(),
    goals: new Set(),
    verifications: new Set(),
    forkedCount: 0,
  }
  checkCreated(scan, first.session)
  for (let i = 1; i < events.length; i++) checkEvent(scan, i, events[i]!)
  if (scan.forkedCount !== 1)
    report(scan, -1, `a fork bundle records SessionForked exactly once (found ${scan.forkedCount})`)
  settleDeferred(scan)
  return scan.problems
}
