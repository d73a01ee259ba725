import { describe, expect, it } from "@effect/vitest"
import { comparisonFigure } from "../src/harness/figures.js"
import type { Measured } from "../src/harness/measure.js"

const owner = { case: "c", group: "g" }
const measured = (
  label: string,
  perRound: ReadonlyArray<number>,
  processPeakRssBytes?: number,
): Measured => ({
  label,
  samples: perRound,
  roundMedians: perRound,
  ...(processPeakRssBytes === undefined ? {} : { processPeakRssBytes }),
})

describe("ratio targets", () => {
  it("are met by the median per-round ratio against the baseline, not by absolute times", () => {
    const git = measured("git", [100, 200, 400])
    // Ratios 0.5, 0.25 and 0.125: median 0.25.
    const rewind = measured("rewind", [50, 50, 50])
    const figure = (maxRatio: number) =>
      comparisonFigure(
        owner,
        {
          series: "s",
          subject: { kind: "in-process", label: "rewind", fn: () => {} },
          ratioTarget: { description: "d", maxRatio },
        },
        undefined,
        rewind,
        git,
        undefined,
      )
    expect(figure(0.25).ratioTarget).toEqual({ description: "d", maxRatio: 0.25, met: true })
    expect(figure(0.2).ratioTarget?.met).toBe(false)
    expect(figure(0.25).baseline?.ratio.median).toBe(0.25)
  })

  it("with a peak RSS ceiling, are met only when the subject's process was measured under it", () => {
    const spec = (maxProcessRssBytes: number) => ({
      series: "s",
      subject: { kind: "in-process" as const, label: "cli", fn: () => {} },
      ratioTarget: { description: "d", maxRatio: 1, maxProcessRssBytes },
    })
    const git = measured("git", [100])
    const met = (subject: Measured, ceiling: number) =>
      comparisonFigure(owner, spec(ceiling), undefined, subject, git, undefined).ratioTarget?.met
    expect(met(measured("cli", [50], 90e6), 100e6)).toBe(true)
    expect(met(measured("cli", [50], 120e6), 100e6)).toBe(false)
    // Not measured (no /usr/bin/time): not met, rather than assumed.
    expect(met(measured("cli", [50]), 100e6)).toBe(false)
  })

  it("refuse a figure without a baseline to be a ratio of", () => {
    expect(() =>
      comparisonFigure(
        owner,
        {
          series: "alone",
          subject: { kind: "in-process", label: "x", fn: () => {} },
          ratioTarget: { description: "d", maxRatio: 1 },
        },
        undefined,
        measured("x", [1]),
        undefined,
        undefined,
      ),
    ).toThrow(/needs a baseline/)
  })
})
