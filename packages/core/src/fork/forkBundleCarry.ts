/**
 * The rest of a fork bundle's steps (see `forkBundleCopy.ts`): what the copy carries beside its
 * messages — goals and verification records under child ids, the last run settings, the caller's
 * notices. Pure. Module-internal to `fork/`.
 */
import {
  ExecutionStateRecorded,
  type GoalId,
  GoalUpdated,
  Message,
  MessageAppended,
  type MessageId,
  ModelSelectionRecorded,
  Part,
  PartAppended,
  type PartId,
  type SessionEvent,
  type VerificationId,
  VerificationRecorded,
} from "@rewind/contracts"
import type { CopySpec } from "./forkBundle.js"
import type { CopyPlan, FreshId } from "./forkBundleCopy.js"

/** The goals and verification records a copy carries, under child ids (none for a side chat). */
export interface GoalCopy {
  readonly goalMap: Map<GoalId, GoalId>
  readonly verificationMap: Map<VerificationId, VerificationId>
}

export const copyGoals = (
  spec: CopySpec,
  fresh: FreshId,
  events: Array<SessionEvent>,
): GoalCopy | undefined => {
  const goalSource = spec.hideCopies ? undefined : spec.goals
  if (goalSource === undefined) return undefined
  const copy: GoalCopy = { goalMap: new Map(), verificationMap: new Map() }
  for (const g of goalSource.goals) {
    const goalId = fresh("g") as GoalId
    copy.goalMap.set(g.goalId, goalId)
    events.push(
      new GoalUpdated(
        {
          goal: {
            goalId,
            text: g.text,
            status: g.status,
            tokensUsed: g.tokensUsed,
            forkOrigin: { sessionId: spec.sourceSessionId, id: g.goalId },
          },
        },
        true,
      ),
    )
  }
  for (const id of goalSource.verificationIds) copy.verificationMap.set(id, fresh("v") as VerificationId)
  return copy
}

export const copyVerifications = (
  spec: CopySpec,
  plan: CopyPlan,
  goals: GoalCopy | undefined,
  events: Array<SessionEvent>,
) => {
  if (goals === undefined) return
  for (const [sourceId, childId] of goals.verificationMap) {
    const v = spec.source.verifications.get(sourceId)
    if (v === undefined) continue
    events.push(
      new VerificationRecorded(
        {
          verification: {
            verificationId: childId,
            messageId: plan.mapMessage(v.messageId),
            turnId: plan.mapTurn(v.turnId),
            outcome: v.outcome,
            summary: v.summary,
            ...(v.goalId === undefined ? {} : { goalId: goals.goalMap.get(v.goalId) ?? v.goalId }),
            forkOrigin: { sessionId: spec.sourceSessionId, id: sourceId },
          },
        },
        true,
      ),
    )
  }
}

/** What the last copied replies ran with (model selection, execution state), not what the source runs with now. */
export const copyLastRunSettings = (spec: CopySpec, plan: CopyPlan, events: Array<SessionEvent>) => {
  const { source } = spec
  let selectionFound = false
  let executionFound = false
  for (let i = plan.copied.length - 1; i >= 0 && !(selectionFound && executionFound); i--) {
    const id = plan.copied[i]!
    if (source.messages.get(id)!.role !== "assistant") continue
    const selection = selectionFound ? undefined : source.modelSelections.get(id)
    if (selection !== undefined) {
      selectionFound = true
      events.push(new ModelSelectionRecorded({ messageId: plan.messageMap.get(id)!, selection }, true))
    }
    const execution = executionFound ? undefined : source.executionStates.get(id)
    if (execution !== undefined) {
      executionFound = true
      events.push(new ExecutionStateRecorded({ messageId: plan.messageMap.get(id)!, state: execution }, true))
    }
  }
}

/** The caller's system notices, appended in the last copied turn. */
export const appendNotices = (
  spec: CopySpec,
  plan: CopyPlan,
  fresh: FreshId,
  events: Array<SessionEvent>,
) => {
  const lastCopied = plan.copied.at(-1)
  if (lastCopied === undefined) return
  const noticeTurn = plan.mapTurn(spec.source.messages.get(lastCopied)!.turnId)
  for (const notice of spec.notices) {
    const messageId = fresh("m") as MessageId
    events.push(
      new MessageAppended(
        {
          message: new Message(
            {
              id: messageId,
              sessionId: spec.child.id,
              turnId: noticeTurn,
              role: "system",
              status: "ok",
              visibility: notice.visibility,
              createdAt: spec.child.createdAt,
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
