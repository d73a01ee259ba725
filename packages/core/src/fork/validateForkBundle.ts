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

export const validateForkBundle = (
  events: ReadonlyArray<SessionEvent>,
  context: ForkBundleContext = {},
): ReadonlyArray<ForkBundleProblem> => {
  const problems: Array<ForkBundleProblem> = []
  const deferred: Array<Deferred> = []
  const report = (eventIndex: number, message: string) => problems.push({ eventIndex, message })

  const first = events[0]
  if (first === undefined || first._tag !== "SessionCreated") {
    report(-1, "a fork bundle starts with SessionCreated")
    return problems
  }
  const session = first.session
  const childId = session.id
  if (session.kind === "main")
    report(0, "a fork bundle creates a fork, side chat or subagent, not a main session")
  if (session.parentId === undefined) report(0, "a forked session names its parent")
  if (session.parentId === childId) report(0, "a session cannot be its own parent")

  // Each message by the index of the event that appended it last (the index also orders them): no
  // record per message on a bundle of thousands.
  const messages = new Map<MessageId, number>()
  const messageAt = (id: MessageId) => (events[messages.get(id)!] as MessageAppended).message
  const parts = new Set<PartId>()
  const turnsStarted = new Set<TurnId>()
  const turnsCompleted = new Set<TurnId>()
  const goals = new Set<GoalId>()
  const verifications = new Set<VerificationId>()
  let forkedCount = 0

  const hasMessage = (id: MessageId) => messages.has(id)

  const checkAnchor = (i: number, messageId: MessageId, anchor: StableBoundary) => {
    if (anchor.boundaryMessageId !== messageId) {
      report(i, `the boundary on ${messageId} names ${anchor.boundaryMessageId} as its boundary message`)
    }
    if (anchor.orderedMessageIds[anchor.orderedMessageIds.length - 1] !== messageId) {
      report(i, `the boundary on ${messageId} does not end at that message`)
    }
    // Sets only grow, so an anchor sound now stays sound; one that is not yet is decided at the end.
    if (anchorProblem(messageId, anchor) !== undefined)
      deferred.push({ kind: "anchor", index: i, messageId, anchor })
  }

  const anchorProblem = (messageId: MessageId, anchor: StableBoundary): string | undefined => {
    const ordered = anchor.orderedMessageIds
    let allInside = true
    for (let k = 0; k < ordered.length && allInside; k++) allInside = hasMessage(ordered[k]!)
    if (!allInside) {
      const missing = ordered.filter((id) => !hasMessage(id))
      return `the boundary on ${messageId} names messages outside the child: ${missing.join(", ")}`
    }
    if (!turnsStarted.has(anchor.turnId))
      return `the boundary on ${messageId} names turn ${anchor.turnId}, not in the child`
    const g = anchor.goalBoundary
    if (g === undefined) return undefined
    const badGoals = g.goals.filter((x) => !goals.has(x.goalId)).map((x) => x.goalId)
    if (badGoals.length > 0)
      return `the boundary on ${messageId} names goals outside the child: ${badGoals.join(", ")}`
    const badVerifications = g.verificationIds.filter((id) => !verifications.has(id))
    if (badVerifications.length > 0) {
      return `the boundary on ${messageId} names verification records outside the child: ${badVerifications.join(", ")}`
    }
    return undefined
  }

  const requireMessage = (i: number, id: MessageId, what: string) => {
    if (!hasMessage(id)) report(i, `${what} names message ${id}, which is not in the child`)
  }

  for (let i = 1; i < events.length; i++) {
    const event = events[i]!
    switch (event._tag) {
      case "SessionForked":
        forkedCount++
        if (event.sourceSessionId === childId) report(i, "a session cannot be forked from itself")
        break
      case "MessageAppended": {
        const m = event.message
        if (m.sessionId !== childId)
          report(i, `message ${m.id} belongs to session ${m.sessionId}, not the child`)
        if (messages.has(m.id)) report(i, `message ${m.id} is appended twice`)
        if (m.forkOrigin !== undefined && m.forkOrigin.sessionId === childId) {
          report(i, `message ${m.id} claims to be copied from the child itself`)
        }
        messages.set(m.id, i)
        // A user message comes before its TurnStarted: only a turn not started yet is checked at the end.
        if (!turnsStarted.has(m.turnId))
          deferred.push({ kind: "turn", index: i, messageId: m.id, turnId: m.turnId })
        if (m.anchor !== undefined) checkAnchor(i, m.id, m.anchor)
        break
      }
      case "PartAppended":
        if (parts.has(event.part.id)) report(i, `part ${event.part.id} is appended twice`)
        parts.add(event.part.id)
        requireMessage(i, event.part.messageId, `part ${event.part.id}`)
        break
      case "TurnStarted": {
        const m = messages.has(event.userMessageId) ? messageAt(event.userMessageId) : undefined
        if (turnsStarted.has(event.turnId)) report(i, `turn ${event.turnId} is started twice`)
        turnsStarted.add(event.turnId)
        if (m === undefined)
          report(i, `turn ${event.turnId} starts at message ${event.userMessageId}, not in the child`)
        else if (m.role !== "user" || m.turnId !== event.turnId) {
          report(i, `turn ${event.turnId} must start at a user message of that turn`)
        }
        break
      }
      case "TurnCompleted":
        if (!turnsStarted.has(event.turnId))
          report(i, `turn ${event.turnId} is completed but was never started`)
        if (turnsCompleted.has(event.turnId)) report(i, `turn ${event.turnId} is completed twice`)
        turnsCompleted.add(event.turnId)
        break
      case "CompactionApplied": {
        const ids = [event.fromMessageId, event.toMessageId, event.summaryMessageId]
        const missing = ids.filter((id) => !hasMessage(id))
        if (missing.length > 0) {
          report(i, `a compaction names messages outside the child: ${missing.join(", ")}`)
        } else {
          const [from, to, summary] = ids.map((id) => messages.get(id)!) as [number, number, number]
          if (!(from <= to && to < summary))
            report(i, "a compaction must cover an earlier range than its summary")
        }
        break
      }
      case "GoalUpdated":
        if (goals.has(event.goal.goalId)) report(i, `goal ${event.goal.goalId} is copied twice`)
        goals.add(event.goal.goalId)
        if (event.goal.liveRun !== undefined)
          report(i, `goal ${event.goal.goalId} carries the source's live-run fields`)
        break
      case "VerificationRecorded": {
        const v = event.verification
        if (verifications.has(v.verificationId)) report(i, `verification ${v.verificationId} is copied twice`)
        verifications.add(v.verificationId)
        requireMessage(i, v.messageId, `verification ${v.verificationId}`)
        if (!turnsStarted.has(v.turnId))
          report(i, `verification ${v.verificationId} names turn ${v.turnId}, not in the child`)
        if (v.goalId !== undefined && !goals.has(v.goalId)) {
          report(i, `verification ${v.verificationId} names goal ${v.goalId}, not in the child`)
        }
        break
      }
      case "ModelSelectionRecorded":
        requireMessage(i, event.messageId, "the model selection")
        break
      case "ExecutionStateRecorded":
        requireMessage(i, event.messageId, "the execution state")
        break
      case "ForkBoundaryPinned":
        requireMessage(i, event.messageId, "a fork boundary")
        checkAnchor(i, event.messageId, event.boundary)
        break
      case "SubagentSpawned":
        if (!turnsStarted.has(event.turnId))
          report(i, `a subagent link names turn ${event.turnId}, not in the child`)
        if (event.messageId !== undefined) requireMessage(i, event.messageId, "a subagent link")
        if (!(context.sessionsInCommit?.has(event.subagentSessionId) ?? false)) {
          report(
            i,
            `a subagent link names session ${event.subagentSessionId}, which is not created with the child`,
          )
        }
        break
      default:
        // Rewinds, checkpoints, background tasks, a second SessionCreated: never part of a fork.
        report(i, `a fork bundle never contains ${event._tag}`)
    }
  }
  if (forkedCount !== 1) report(-1, `a fork bundle records SessionForked exactly once (found ${forkedCount})`)
  for (const d of deferred) {
    const message =
      d.kind === "anchor"
        ? anchorProblem(d.messageId, d.anchor)
        : turnsStarted.has(d.turnId)
          ? undefined
          : `message ${d.messageId} belongs to turn ${d.turnId}, which the child never started`
    if (message !== undefined) report(d.index, message)
  }
  return problems
}
