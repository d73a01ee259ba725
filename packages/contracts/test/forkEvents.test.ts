import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  decodeEvent,
  EVENT_VERSIONS,
  ExecutionStateRecorded,
  encodeEvent,
  ForkBoundaryPinned,
  type GoalId,
  GoalUpdated,
  goalSnapshotOf,
  type MessageId,
  ModelSelectionRecorded,
  type RunId,
  type SessionEvent,
  SessionForked,
  type SessionId,
  SubagentSpawned,
  type TurnId,
  type VerificationId,
  VerificationRecorded,
} from "../src/index.js"

const goal = {
  goalId: "g1" as GoalId,
  text: "ship",
  status: "active" as const,
  tokensUsed: 12,
  liveRun: { runId: "run_1" as RunId, turnId: "t1" as TurnId, startedAt: 3 },
}

const samples: ReadonlyArray<SessionEvent> = [
  new ForkBoundaryPinned({
    messageId: "m2" as MessageId,
    boundary: {
      turnId: "t1" as TurnId,
      historyRoundCount: 1,
      orderedMessageIds: ["m1" as MessageId, "m2" as MessageId],
      boundaryMessageId: "m2" as MessageId,
      goalBoundary: { goals: [goalSnapshotOf(goal)], verificationIds: ["v1" as VerificationId] },
    },
  }),
  new SessionForked({
    sourceSessionId: "s0" as SessionId,
    originMessageId: "m2" as MessageId,
    strategy: "fork_required",
    forkKind: "message",
    copiedEventCount: 7,
  }),
  new GoalUpdated({ goal }),
  new VerificationRecorded({
    verification: {
      verificationId: "v1" as VerificationId,
      goalId: "g1" as GoalId,
      messageId: "m2" as MessageId,
      turnId: "t1" as TurnId,
      outcome: "passed",
      summary: "tests pass",
    },
  }),
  new ModelSelectionRecorded({
    messageId: "m2" as MessageId,
    selection: { provider: "p", model: "m", options: { t: 1 } },
  }),
  new ExecutionStateRecorded({
    messageId: "m2" as MessageId,
    state: { mode: "plan", settings: { approvals: "ask" } },
  }),
  new SubagentSpawned({ subagentSessionId: "s9" as SessionId, turnId: "t1" as TurnId, spawnedAt: 4 }),
]

describe("fork events", () => {
  it.effect("are registered and round-trip through their JSON form", () =>
    Effect.gen(function* () {
      for (const event of samples) {
        expect(Object.hasOwn(EVENT_VERSIONS, event._tag)).toBe(true)
        const decoded = yield* decodeEvent(JSON.parse(JSON.stringify(encodeEvent(event))))
        expect(decoded).toEqual(event)
      }
    }),
  )

  it.effect("refuse a boundary with an empty run and a fork event with another strategy", () =>
    Effect.gen(function* () {
      const pinned = encodeEvent(samples[0]!)
      const empty = yield* Effect.flip(
        decodeEvent({
          ...pinned,
          payload: {
            ...(pinned.payload as object),
            boundary: { ...(samples[0] as ForkBoundaryPinned).boundary, orderedMessageIds: [] },
          },
        }),
      )
      expect(empty.reason).toBe("malformed")
      const forked = encodeEvent(samples[1]!)
      const other = yield* Effect.flip(
        decodeEvent({ ...forked, payload: { ...(forked.payload as object), strategy: "active_chain" } }),
      )
      expect(other.reason).toBe("malformed")
    }),
  )

  it("a goal snapshot leaves the live run behind", () => {
    expect(goalSnapshotOf(goal)).toEqual({ goalId: "g1", text: "ship", status: "active", tokensUsed: 12 })
  })
})
