import { describe, expect, it } from "@effect/vitest"
import { evaluateRewindTarget } from "../src/conversation/evaluateRewindTarget.js"
import { projectSession } from "../src/session/sessionState.js"
import { mid, StreamBuilder, tid } from "./fixtures.js"

// Three turns, with turns 1-2 compacted into a summary filed under turn 2.
const compacted = () =>
  new StreamBuilder().turn(1).turn(2).compaction(mid("s1"), mid("u1"), mid("a2"), tid(2)).turn(3)

describe("evaluateRewindTarget (DESIGN §4 table)", () => {
  it("active_chain, conversation only, when the target is on the chain and there is no checkpoint", () => {
    const state = projectSession(new StreamBuilder().turn(1).turn(2).stored())
    const r = evaluateRewindTarget(state, mid("u2"), "conversation")
    expect(r.strategy).toBe("active_chain")
    expect(r.allowedScopes).toEqual(["conversation"])
    expect(r.targetMessageId).toBe(mid("u2"))
    expect(r.refusal).toBeUndefined()
  })

  it("active_chain with all three scopes when a checkpoint exists at or after the target", () => {
    const state = projectSession(
      new StreamBuilder().turn(1).turn(2).checkpoint("cp1", mid("u2"), tid(2)).stored(),
    )
    for (const scope of ["conversation", "workspace", "both"] as const) {
      const r = evaluateRewindTarget(state, mid("u1"), scope)
      expect(r.strategy).toBe("active_chain")
      expect(r.allowedScopes).toEqual(["conversation", "workspace", "both"])
      expect(r.checkpointIds).toEqual(["cp1"])
    }
  })

  it("a checkpoint before the target does not count", () => {
    const state = projectSession(
      new StreamBuilder().turn(1).checkpoint("cp1", mid("u1"), tid(1)).turn(2).stored(),
    )
    const r = evaluateRewindTarget(state, mid("u2"), "workspace")
    expect(r.strategy).toBe("unavailable")
    expect(r.refusal?.kind).toBe("no_checkpoint")
  })

  it("active_chain for a compacted target when rewinding the conversation", () => {
    const state = projectSession(compacted().stored())
    const r = evaluateRewindTarget(state, mid("u2"), "conversation")
    expect(r.strategy).toBe("active_chain")
    expect(r.coveredByCompaction).toBe(true)
    expect(r.allowedScopes).toEqual(["conversation"])
  })

  it("file_only for a compacted target, files only, with a checkpoint", () => {
    const state = projectSession(compacted().checkpoint("cp1", mid("u2"), tid(2)).stored())
    const r = evaluateRewindTarget(state, mid("u2"), "workspace")
    expect(r.strategy).toBe("file_only")
    expect(r.allowedScopes).toEqual(["workspace"])
  })

  it("active_chain for a compacted target with scope both (the conversation part rebuilds the range)", () => {
    const state = projectSession(compacted().checkpoint("cp1", mid("u2"), tid(2)).stored())
    const r = evaluateRewindTarget(state, mid("u2"), "both")
    expect(r.strategy).toBe("active_chain")
    expect(r.coveredByCompaction).toBe(true)
  })

  it("unavailable when the target is not found", () => {
    const state = projectSession(new StreamBuilder().turn(1).stored())
    const r = evaluateRewindTarget(state, mid("nope"), "conversation")
    expect(r.strategy).toBe("unavailable")
    expect(r.allowedScopes).toEqual([])
    expect(r.refusal?.kind).toBe("not_found")
  })

  it("unavailable when files are asked for and there is no checkpoint", () => {
    const state = projectSession(new StreamBuilder().turn(1).stored())
    for (const scope of ["workspace", "both"] as const) {
      const r = evaluateRewindTarget(state, mid("u1"), scope)
      expect(r.strategy).toBe("unavailable")
      expect(r.refusal?.kind).toBe("no_checkpoint")
    }
  })

  it("unavailable when files are asked for a compacted target without a checkpoint", () => {
    const r = evaluateRewindTarget(projectSession(compacted().stored()), mid("u1"), "workspace")
    expect(r.strategy).toBe("unavailable")
    expect(r.refusal?.kind).toBe("no_checkpoint")
  })

  it("maps an assistant id to its turn's user message for the conversation scope only", () => {
    const state = projectSession(
      new StreamBuilder().turn(1).turn(2).checkpoint("cp", mid("u2"), tid(2)).stored(),
    )
    const conv = evaluateRewindTarget(state, mid("a2"), "conversation")
    expect(conv.targetMessageId).toBe(mid("u2"))
    expect(conv.requestedMessageId).toBe(mid("a2"))
    for (const scope of ["workspace", "both"] as const) {
      const r = evaluateRewindTarget(state, mid("a2"), scope)
      expect(r.strategy).toBe("unavailable")
      expect(r.refusal?.kind).toBe("not_a_user_message")
    }
  })

  it("refuses a summary target and a system message", () => {
    const state = projectSession(compacted().message(mid("sys"), "system", tid(3)).stored())
    expect(evaluateRewindTarget(state, mid("s1"), "conversation").refusal?.kind).toBe("summary_target")
    expect(evaluateRewindTarget(state, mid("sys"), "conversation").refusal?.kind).toBe("not_a_user_message")
  })

  it("refuses a message on a cut branch", () => {
    const b = new StreamBuilder().turn(1).turn(2)
    b.rewind({
      keptMessageIds: [mid("u1"), mid("a1")],
      branchCutAfterMessageId: mid("a2"),
      branchGeneration: 1,
      targetMessageId: mid("u2"),
      scope: "conversation",
    }).turn(3)
    const r = evaluateRewindTarget(projectSession(b.stored()), mid("u2"), "conversation")
    expect(r.refusal?.kind).toBe("not_on_active_branch")
  })

  it("ignores checkpoints whose undo was already applied", () => {
    const b = new StreamBuilder().turn(1).checkpoint("cp1", mid("u1"), tid(1))
    const state = projectSession(b.stored())
    const spent = { ...state, spentCheckpointIds: new Set(["cp1"]) } as unknown as typeof state
    expect(evaluateRewindTarget(spent, mid("u1"), "workspace").refusal?.kind).toBe("no_checkpoint")
  })
})
