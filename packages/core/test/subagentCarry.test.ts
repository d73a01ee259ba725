import { createHash } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { SessionForked, type SessionId, type StoredEvent, SubagentSpawned } from "@rewind/contracts"
import {
  carryIdFor,
  carryLineageOf,
  currentSubagents,
  cutStreamAt,
  isCarryId,
} from "../src/fork/carryLineage.js"
import { projectSession } from "../src/session/sessionState.js"
import { mid, StreamBuilder, sid, tid } from "./fixtures.js"

const sha = (s: string) => createHash("sha256").update(s).digest("hex")

describe("carry ids", () => {
  it("hash the lineage's original id, so clones of clones keep the lineage", () => {
    const first = carryIdFor("ses_orig" as SessionId, "clone_1")
    expect(first).toBe(`carry-v1.${sha("ses_orig")}.clone_1`)
    expect(isCarryId(first)).toBe(true)
    expect(isCarryId("ses_orig")).toBe(false)
    const second = carryIdFor(first, "clone_2")
    expect(second).toBe(`carry-v1.${sha("ses_orig")}.clone_2`)
    expect(carryLineageOf(second)).toBe(carryLineageOf("ses_orig"))
  })
})

describe("currentSubagents", () => {
  it("lets a carried clone take the place of its original", () => {
    const b = new StreamBuilder().turn(1)
    const link = (id: string, carriedFrom?: string) =>
      new SubagentSpawned({
        subagentSessionId: id as SessionId,
        turnId: tid(1),
        spawnedAt: 1,
        ...(carriedFrom === undefined ? {} : { carriedFrom: carriedFrom as SessionId }),
      })
    b.events.push(link("a"), link("b"), link("a2", "a"))
    expect(currentSubagents(projectSession(b.stored())).map((l) => l.subagentSessionId)).toEqual(["b", "a2"])
  })
})

describe("cutStreamAt", () => {
  const timed = (events: ReadonlyArray<StoredEvent>, times: ReadonlyArray<number>) =>
    events.map((e, i) => ({ ...e, at: times[i]! }))

  it("keeps the events appended by the cut and the branch messages born by then", () => {
    const b = new StreamBuilder().turn(1).turn(2)
    const events = timed(b.stored(), [0, 1, 1, 1, 5, 5, 5])
    const cut = cutStreamAt(events, 3)
    expect(cut.prefix).toEqual([mid("u1"), mid("a1")])
    expect(cut.cut).toBe(true)
    expect(cutStreamAt(events, 5).cut).toBe(false)
  })

  it("always keeps a copied history, whose append time is the copy's, not the history's", () => {
    const b = new StreamBuilder()
    b.events.push(
      new SessionForked({
        sourceSessionId: "ses_src" as SessionId,
        strategy: "fork_required",
        forkKind: "subagent_carry",
        copiedEventCount: 5,
      }),
    )
    b.turn(1).turn(2)
    // The copy happened at t=100, the copied messages were born at t=0; turn 2 was added later.
    const events = timed(b.stored(), [100, 100, 100, 100, 100, 200, 200, 200])
    const cut = cutStreamAt(events, 50)
    expect(cut.prefix).toEqual([mid("u1"), mid("a1")])
    expect(cut.state.session?.id).toBe(sid)
  })
})
