import { describe, expect, it } from "@effect/vitest"
import { activeBranch, lastActiveMessage } from "../src/session/activeBranch.js"
import { branchView } from "../src/session/branchView.js"
import { evolve, projectSession } from "../src/session/sessionState.js"
import { transcript } from "../src/session/transcript.js"
import { mid, StreamBuilder, tid } from "./fixtures.js"

describe("activeBranch", () => {
  it("is every message in order when nothing was rewound", () => {
    const state = projectSession(new StreamBuilder().turn(1).turn(2).stored())
    expect(activeBranch(state)).toEqual([mid("u1"), mid("a1"), mid("u2"), mid("a2")])
  })

  it("is the kept prefix plus what was appended after the cut, and older branches never resurface", () => {
    const b = new StreamBuilder().turn(1).turn(2)
    b.rewind({
      keptMessageIds: [mid("u1"), mid("a1")],
      branchCutAfterMessageId: mid("a2"),
      branchGeneration: 1,
      targetMessageId: mid("u2"),
      scope: "conversation",
    })
    b.turn(3)
    // Second rewind to u3 keeps only turn 1 again; turn 2 (cut before) must not come back.
    b.rewind({
      keptMessageIds: [mid("u1"), mid("a1")],
      branchCutAfterMessageId: mid("a3"),
      branchGeneration: 2,
      targetMessageId: mid("u3"),
      scope: "conversation",
    })
    b.turn(4)
    const state = projectSession(b.stored())
    expect(activeBranch(state)).toEqual([mid("u1"), mid("a1"), mid("u4"), mid("a4")])
    expect(state.messageOrder).toHaveLength(8)
    expect(state.branchGeneration).toBe(2)
  })

  it("lastActiveMessage is the branch's last message: no rewind, right after a cut, and after new turns", () => {
    const b = new StreamBuilder().turn(1).turn(2)
    const last = () => {
      const state = projectSession(b.stored())
      return [lastActiveMessage(state), activeBranch(state).at(-1)]
    }
    expect(last()).toEqual([mid("a2"), mid("a2")])
    b.rewind({
      keptMessageIds: [mid("u1"), mid("a1")],
      branchCutAfterMessageId: mid("a2"),
      branchGeneration: 1,
      targetMessageId: mid("u2"),
      scope: "conversation",
    })
    // Nothing appended after the cut: the kept prefix ends the branch.
    expect(last()).toEqual([mid("a1"), mid("a1")])
    b.turn(3)
    expect(last()).toEqual([mid("a3"), mid("a3")])
    b.rewind({
      keptMessageIds: [],
      branchCutAfterMessageId: mid("a3"),
      branchGeneration: 2,
      targetMessageId: mid("u1"),
      scope: "conversation",
    })
    expect(last()).toEqual([undefined, undefined])
    expect(lastActiveMessage(projectSession(new StreamBuilder().stored()))).toBeUndefined()
  })

  it("the branch view hides compacted messages from the model and restores them once the summary is cut", () => {
    const b = new StreamBuilder().turn(1).turn(2).compaction(mid("s"), mid("u1"), mid("a1"), tid(2)).turn(3)
    const state = projectSession(b.stored())
    const view = branchView(state)
    expect(view.modelHistory).toEqual([mid("u2"), mid("a2"), mid("s"), mid("u3"), mid("a3")])
    expect(view.coveredBy.get(mid("u1"))).toBe(mid("s"))
    expect(view.turnIds).toEqual([tid(1), tid(2), tid(3)])

    b.rewind({
      keptMessageIds: [mid("u1"), mid("a1"), mid("u2"), mid("a2")],
      branchCutAfterMessageId: mid("a3"),
      branchGeneration: 1,
      targetMessageId: mid("s"),
      scope: "conversation",
    })
    const after = branchView(projectSession(b.stored()))
    expect(after.activeCompactions).toEqual([])
    expect(after.modelHistory).toEqual([mid("u1"), mid("a1"), mid("u2"), mid("a2")])
  })

  it("evolve does not mutate its input", () => {
    const state = projectSession(new StreamBuilder().turn(1).stored())
    const before = [...state.messageOrder]
    const next = evolve(state, new StreamBuilder().turn(9).events[1]!)
    expect(state.messageOrder).toEqual(before)
    expect(next.messageOrder).toHaveLength(before.length + 1)
    expect(next.version).toBe(state.version + 1)
  })
})

describe("transcript", () => {
  it("lists the active branch with parts and compaction flags", () => {
    const b = new StreamBuilder().turn(1).turn(2).compaction(mid("s"), mid("u1"), mid("a1"), tid(2))
    const entries = transcript(projectSession(b.stored()))
    expect(entries.map((e) => [e.message.id, e.compacted])).toEqual([
      [mid("u1"), true],
      [mid("a1"), true],
      [mid("u2"), false],
      [mid("a2"), false],
      [mid("s"), false],
    ])
  })
})
