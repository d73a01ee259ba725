import { describe, expect, it } from "@effect/vitest"
import { activeBranch, evaluateRewindTarget, projectSession } from "@rewind/core"
import { buildSyntheticSession } from "../src/session/syntheticSession.js"

describe("synthetic session", () => {
  it("has the requested length and rewinds, and the core agrees with its active branch", () => {
    const s = buildSyntheticSession({ messages: 3_000, rewinds: 100, seed: 5 })
    expect(s.messageCount).toBe(3_000)
    expect(s.rewinds).toBe(100)
    expect(s.compactions).toBeGreaterThan(0)
    expect(s.checkpoints).toBeGreaterThan(0)
    const state = projectSession(s.events)
    expect(state.messageOrder).toHaveLength(3_000)
    expect(state.branchGeneration).toBe(100)
    expect(activeBranch(state)).toEqual(s.expectedActive)
    expect(evaluateRewindTarget(state, s.rewindTarget, "both").strategy).toBe("active_chain")
  })

  it("is deterministic for a seed", () => {
    const a = buildSyntheticSession({ messages: 500, rewinds: 10, seed: 1 })
    const b = buildSyntheticSession({ messages: 500, rewinds: 10, seed: 1 })
    expect(b.events.map((e) => e.event)).toEqual(a.events.map((e) => e.event))
  })
})
