import { describe, expect, it } from "@effect/vitest"
import {
  ForkBoundaryPinned,
  type GoalId,
  GoalUpdated,
  type RunId,
  type VerificationId,
  VerificationRecorded,
} from "@rewind/contracts"
import { checkForkBoundary, stableBoundaryFor } from "../src/fork/forkBoundary.js"
import { evolve, projectSession } from "../src/session/sessionState.js"
import { mid, StreamBuilder, tid } from "./fixtures.js"

const pinned = (b: StreamBuilder, turn: number) => {
  const state = projectSession(b.stored())
  const decision = stableBoundaryFor(state, tid(turn))
  if (!decision.pinned) throw new Error(decision.message)
  b.events.push(
    new ForkBoundaryPinned({ messageId: decision.boundary.boundaryMessageId, boundary: decision.boundary }),
  )
  return decision.boundary
}

describe("stableBoundaryFor", () => {
  it("runs from the turn's user message to its last reply and counts the rounds before it", () => {
    const b = new StreamBuilder()
      .turn(1)
      .message(mid("u2"), "user", tid(2))
      .message(mid("x2"), "assistant", tid(2))
    b.message(mid("a2"), "assistant", tid(2))
    b.events.push(
      new GoalUpdated({
        goal: {
          goalId: "g" as GoalId,
          text: "t",
          status: "active",
          tokensUsed: 5,
          liveRun: { runId: "r" as RunId, turnId: tid(2), startedAt: 1 },
        },
      }),
      new VerificationRecorded({
        verification: {
          verificationId: "v" as VerificationId,
          messageId: mid("x2"),
          turnId: tid(2),
          outcome: "passed",
          summary: "s",
        },
      }),
    )
    const boundary = pinned(b, 2)
    expect(boundary).toEqual({
      turnId: tid(2),
      historyRoundCount: 2,
      orderedMessageIds: [mid("u2"), mid("x2"), mid("a2")],
      boundaryMessageId: mid("a2"),
      goalBoundary: {
        goals: [{ goalId: "g", text: "t", status: "active", tokensUsed: 5 }],
        verificationIds: ["v"],
      },
    })
    const state = projectSession(b.stored())
    expect(checkForkBoundary(state, mid("a2"))).toEqual({
      ok: true,
      boundary,
      prefix: [mid("u1"), mid("a1"), mid("u2"), mid("x2"), mid("a2")],
    })
  })

  it("has no boundary for a turn without reply or one a rewind cut", () => {
    const b = new StreamBuilder().turn(1).message(mid("u2"), "user", tid(2))
    expect(stableBoundaryFor(projectSession(b.stored()), tid(2))).toMatchObject({
      pinned: false,
      reason: "no_assistant_reply",
    })
    b.rewind({
      keptMessageIds: [],
      branchCutAfterMessageId: mid("u2"),
      branchGeneration: 1,
      targetMessageId: mid("u1"),
      scope: "conversation",
    })
    expect(stableBoundaryFor(projectSession(b.stored()), tid(1))).toMatchObject({
      pinned: false,
      reason: "not_on_active_branch",
    })
  })
})

describe("checkForkBoundary", () => {
  it("refuses once the boundary's run is broken on the active branch", () => {
    const b = new StreamBuilder().turn(1).turn(2)
    pinned(b, 2)
    const state = projectSession(b.stored())
    // Hand-craft a state whose boundary names a message that is not in its run any more.
    const broken = evolve(
      state,
      new ForkBoundaryPinned({
        messageId: mid("a2"),
        boundary: { ...state.messages.get(mid("a2"))!.anchor!, orderedMessageIds: [mid("u1"), mid("a2")] },
      }),
    )
    expect(checkForkBoundary(broken, mid("a2"))).toMatchObject({ ok: false, kind: "fork_boundary_invalid" })
    expect(checkForkBoundary(state, mid("a1"))).toMatchObject({ ok: false, kind: "fork_boundary_invalid" })
    expect(checkForkBoundary(state, mid("zz"))).toMatchObject({ ok: false, kind: "not_found" })
  })
})
