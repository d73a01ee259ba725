import { describe, expect, it } from "@effect/vitest"
import { iterationsPerRound, plannedRounds } from "../src/harness/measure.js"
import { BUDGETS } from "../src/harness/options.js"
import { describeGrowth } from "../src/harness/report.js"
import { growthExponent, summarize } from "../src/harness/stats.js"

describe("summary statistics", () => {
  it("gives median, quartiles and MAD by linear interpolation", () => {
    const s = summarize([5, 1, 4, 2, 3])
    expect(s).toEqual({ n: 5, median: 3, p25: 2, p75: 4, mad: 1, min: 1, max: 5 })
    expect(summarize([1, 2, 3, 4]).median).toBe(2.5)
  })

  it("refuses empty and non-finite samples instead of reporting NaN", () => {
    expect(() => summarize([])).toThrow()
    expect(() => summarize([1, Number.NaN])).toThrow()
  })

  it("reads growth as a log-log slope", () => {
    expect(
      growthExponent([
        { size: 1_000, value: 2 },
        { size: 100_000, value: 200 },
      ]),
    ).toBeCloseTo(1)
    expect(
      growthExponent([
        { size: 1_000, value: 5 },
        { size: 100_000, value: 5 },
      ]),
    ).toBeCloseTo(0)
    expect(growthExponent([{ size: 1_000, value: 5 }])).toBeUndefined()
    expect(describeGrowth(0.05, "whole")).toMatch(/does not grow with the whole/)
    expect(describeGrowth(1.0, "whole")).toMatch(/grows with the whole/)
    expect(describeGrowth(1.0, "change")).toMatch(/grows with the change/)
  })
})

describe("round planning", () => {
  const budget = BUDGETS.full
  it("runs every round for fast work and fewer, never under the minimum, for slow work", () => {
    expect(plannedRounds(budget, 0.01, false)).toBe(budget.rounds)
    expect(plannedRounds(budget, 2_000, true)).toBe(2)
    expect(plannedRounds(budget, 5_000, true)).toBe(budget.minRounds - 1)
    expect(plannedRounds(budget, 5_000, false)).toBe(budget.minRounds)
  })

  it("measures work slower than singleRunAboveMs once", () => {
    expect(plannedRounds(budget, budget.singleRunAboveMs, true)).toBe(0)
  })

  it("bounds iterations per round by timed work and by wall time", () => {
    expect(iterationsPerRound(budget, 1, 1)).toBe(300)
    // Slow untimed setup: a round still ends after about three round-times of wall clock.
    expect(iterationsPerRound(budget, 0.005, 1)).toBe(900)
    expect(iterationsPerRound(budget, 10_000, 10_000)).toBe(1)
  })
})
