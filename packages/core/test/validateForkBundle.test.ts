import { describe, expect, it } from "@effect/vitest"
import {
  ConversationRewound,
  ForkBoundaryPinned,
  type GoalId,
  GoalUpdated,
  Message,
  MessageAppended,
  type MessageId,
  Part,
  PartAppended,
  type PartId,
  type SessionEvent,
  type SessionId,
  SubagentSpawned,
  TurnCompleted,
  type TurnId,
  type VerificationId,
  VerificationRecorded,
} from "@rewind/contracts"
import { buildForkBundle, sealBundle } from "../src/fork/forkBundle.js"
import { validateForkBundle } from "../src/fork/validateForkBundle.js"
import { projectSession } from "../src/session/sessionState.js"
import { mid, StreamBuilder, sid, tid } from "./fixtures.js"

const child = "ses_child" as SessionId

/** A source with two turns, a goal, a verification and a pinned boundary on the second reply. */
const source = () => {
  const b = new StreamBuilder().turn(1).turn(2)
  b.events.push(
    new GoalUpdated({ goal: { goalId: "g1" as GoalId, text: "goal", status: "active", tokensUsed: 3 } }),
    new VerificationRecorded({
      verification: {
        verificationId: "v1" as VerificationId,
        goalId: "g1" as GoalId,
        messageId: mid("a2"),
        turnId: tid(2),
        outcome: "passed",
        summary: "ok",
      },
    }),
    new ForkBoundaryPinned({
      messageId: mid("a2"),
      boundary: {
        turnId: tid(2),
        historyRoundCount: 2,
        orderedMessageIds: [mid("u2"), mid("a2")],
        boundaryMessageId: mid("a2"),
        goalBoundary: {
          goals: [{ goalId: "g1" as GoalId, text: "goal", status: "active", tokensUsed: 3 }],
          verificationIds: ["v1" as VerificationId],
        },
      },
    }),
  )
  return projectSession(b.stored())
}

const validBundle = (): Array<SessionEvent> => {
  const state = source()
  const boundary = state.messages.get(mid("a2"))!.anchor!
  const built = buildForkBundle({
    source: state,
    sourceSessionId: sid,
    prefix: [mid("u1"), mid("a1"), mid("u2"), mid("a2")],
    child: {
      id: child,
      kind: "fork",
      title: "Fork of t",
      parentId: sid,
      rootTraceId: state.session!.rootTraceId,
      cwd: "/w",
      createdAt: 9,
    },
    idBase: "fork_1",
    forked: { forkKind: "message", originMessageId: mid("a2") },
    hideCopies: false,
    goals: boundary.goalBoundary,
    notices: [{ visibility: "model_only", kind: "notice", text: "forked" }],
  })
  return [...sealBundle(built)]
}

const messageOf = (events: ReadonlyArray<SessionEvent>, n: number) =>
  (events.filter((e) => e._tag === "MessageAppended")[n] as MessageAppended).message

const replaceAt = (events: Array<SessionEvent>, index: number, event: SessionEvent) => {
  const copy = [...events]
  copy[index] = event
  return copy
}

const indexOfTag = (events: ReadonlyArray<SessionEvent>, tag: SessionEvent["_tag"]) =>
  events.findIndex((e) => e._tag === tag)

const problemsOf = (
  events: ReadonlyArray<SessionEvent>,
  context?: Parameters<typeof validateForkBundle>[1],
) => validateForkBundle(events, context).map((p) => p.message)

describe("validateForkBundle", () => {
  it("accepts what the bundle builder makes", () => {
    const events = validBundle()
    expect(events.map((e) => e._tag).slice(0, 3)).toEqual(["SessionCreated", "SessionForked", "GoalUpdated"])
    expect(problemsOf(events)).toEqual([])
  })

  it("refuses a bundle that does not start with SessionCreated, or forks a main session", () => {
    const events = validBundle()
    expect(problemsOf(events.slice(1))).toEqual(["a fork bundle starts with SessionCreated"])
    const created = events[0] as Extract<SessionEvent, { _tag: "SessionCreated" }>
    const main = replaceAt(events, 0, {
      ...created,
      session: { ...created.session, kind: "main" },
    } as SessionEvent)
    expect(problemsOf(main).join()).toMatch(/not a main session/)
  })

  it("refuses a bundle without exactly one SessionForked", () => {
    const events = validBundle()
    expect(problemsOf(events.filter((e) => e._tag !== "SessionForked")).join()).toMatch(
      /SessionForked exactly once/,
    )
  })

  it("refuses a message of another session and a message whose turn the child never started", () => {
    const events = validBundle()
    const i = indexOfTag(events, "MessageAppended")
    const m = messageOf(events, 0)
    const foreign = replaceAt(
      events,
      i,
      new MessageAppended({ message: new Message({ ...m, sessionId: sid }) }),
    )
    expect(problemsOf(foreign).join()).toMatch(/belongs to session ses_1, not the child/)
    const lost = [
      ...events,
      new MessageAppended({
        message: new Message({ ...m, id: "x" as MessageId, turnId: "t_parent" as TurnId }),
      }),
    ]
    expect(problemsOf(lost).join()).toMatch(/turn t_parent, which the child never started/)
  })

  it("refuses a part whose message is not in the child, and duplicate ids", () => {
    const events = validBundle()
    const orphan = [
      ...events,
      new PartAppended({ part: new Part({ id: "p_x" as PartId, messageId: mid("u1"), kind: "text" }) }),
    ]
    expect(problemsOf(orphan).join()).toMatch(/names message mu1, which is not in the child/)
    const twice = [...events, events[indexOfTag(events, "MessageAppended")]!]
    expect(problemsOf(twice).join()).toMatch(/appended twice/)
  })

  it("refuses an anchor that points outside the child", () => {
    const events = validBundle()
    const anchoredIndex = events.findIndex(
      (e) => e._tag === "MessageAppended" && e.message.anchor !== undefined,
    )
    const m = (events[anchoredIndex] as MessageAppended).message
    const withAnchor = (anchor: NonNullable<Message["anchor"]>) =>
      replaceAt(events, anchoredIndex, new MessageAppended({ message: new Message({ ...m, anchor }) }))
    const a = m.anchor!
    expect(problemsOf(withAnchor({ ...a, orderedMessageIds: [mid("u2"), m.id] })).join()).toMatch(
      /messages outside the child: mu2/,
    )
    expect(problemsOf(withAnchor({ ...a, turnId: tid(2) })).join()).toMatch(/turn t2, not in the child/)
    expect(problemsOf(withAnchor({ ...a, boundaryMessageId: mid("a2") })).join()).toMatch(
      /names ma2 as its boundary/,
    )
    const badGoal = {
      ...a,
      goalBoundary: { ...a.goalBoundary!, goals: [{ ...a.goalBoundary!.goals[0]!, goalId: "g1" as GoalId }] },
    }
    expect(problemsOf(withAnchor(badGoal)).join()).toMatch(/goals outside the child: g1/)
    const badVerification = {
      ...a,
      goalBoundary: { ...a.goalBoundary!, verificationIds: ["v1" as VerificationId] },
    }
    expect(problemsOf(withAnchor(badVerification)).join()).toMatch(
      /verification records outside the child: v1/,
    )
  })

  it("refuses a goal with live-run fields and a verification naming a foreign goal or message", () => {
    const events = validBundle()
    const gi = indexOfTag(events, "GoalUpdated")
    const goal = (events[gi] as GoalUpdated).goal
    const live = replaceAt(
      events,
      gi,
      new GoalUpdated({
        goal: { ...goal, liveRun: { runId: goal.goalId as never, turnId: tid(1), startedAt: 1 } },
      }),
    )
    expect(problemsOf(live).join()).toMatch(/live-run fields/)
    const vi = indexOfTag(events, "VerificationRecorded")
    const v = (events[vi] as VerificationRecorded).verification
    const foreign = replaceAt(
      events,
      vi,
      new VerificationRecorded({ verification: { ...v, goalId: "g1" as GoalId, messageId: mid("a2") } }),
    )
    const problems = problemsOf(foreign).join()
    expect(problems).toMatch(/names message ma2/)
    expect(problems).toMatch(/names goal g1/)
  })

  it("refuses a subagent link to a session not created in the same commit", () => {
    const events = validBundle()
    const turn = (
      events.find((e) => e._tag === "TurnStarted") as Extract<SessionEvent, { _tag: "TurnStarted" }>
    ).turnId
    const link = new SubagentSpawned({
      subagentSessionId: "ses_sub" as SessionId,
      turnId: turn,
      spawnedAt: 1,
    })
    expect(problemsOf([...events, link]).join()).toMatch(/not created with the child/)
    expect(problemsOf([...events, link], { sessionsInCommit: new Set(["ses_sub" as SessionId]) })).toEqual([])
  })

  it("refuses events a fork never contains and turns completed without a start", () => {
    const events = validBundle()
    const rewound = new ConversationRewound({
      cursor: { keptMessageIds: [], branchGeneration: 1, targetMessageId: mid("u1"), scope: "conversation" },
      requestedMessageId: mid("u1"),
    })
    expect(problemsOf([...events, rewound]).join()).toMatch(/never contains ConversationRewound/)
    expect(
      problemsOf([...events, new TurnCompleted({ turnId: tid(1), status: "completed" })]).join(),
    ).toMatch(/completed but was never started/)
  })
})
