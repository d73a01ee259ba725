/**
 * Turning interleaved measurements into report rows: statistics of each side, the per-round ratio
 * against the baseline, the share of the physical limit reached, and whether a target (in
 * milliseconds, or as a ratio against the baseline) was met.
 */
import { type Measured, roundRatios } from "./measure.js"
import { summarize } from "./stats.js"
import type { CompareSpec, Figure, FigureSize, LimitSpec, MeasuredSide, RatioTarget } from "./types.js"

const side = (m: Measured): MeasuredSide =>
  m.processPeakRssBytes === undefined
    ? { label: m.label, stats: summarize(m.samples) }
    : { label: m.label, stats: summarize(m.samples), processPeakRssBytes: m.processPeakRssBytes }

export const comparisonFigure = (
  owner: { readonly case: string; readonly group: string },
  spec: CompareSpec,
  size: FigureSize | undefined,
  subject: Measured,
  baseline: Measured | undefined,
  limit: Measured | undefined,
): Figure => {
  const subjectSide = side(subject)
  const notes = [...(spec.notes ?? [])]
  let baselineSide: Figure["baseline"]
  if (baseline !== undefined) {
    const ratios = roundRatios(subject, baseline)
    if (ratios.length === 0) throw new Error(`${spec.series}: no round measured both subject and baseline`)
    baselineSide = { ...side(baseline), ratio: summarize(ratios) }
  }
  let limitSide: Figure["limit"]
  if (limit !== undefined) {
    const ratios = roundRatios(subject, limit)
    if (ratios.length === 0) throw new Error(`${spec.series}: no round measured both subject and limit`)
    const limitStats = summarize(limit.samples)
    limitSide = {
      ...side(limit),
      ratio: summarize(ratios),
      percentOfLimit: (100 * limitStats.median) / subjectSide.stats.median,
    }
  }
  let ratioTarget: Figure["ratioTarget"]
  if (spec.ratioTarget !== undefined) {
    if (baselineSide === undefined) throw new Error(`${spec.series}: a ratio target needs a baseline`)
    ratioTarget = {
      ...spec.ratioTarget,
      met: ratioTargetMet(spec.ratioTarget, baselineSide.ratio.median, subjectSide),
    }
  }
  return {
    kind: "comparison",
    ...owner,
    series: spec.series,
    ...(size === undefined ? {} : { size }),
    unit: "ms",
    subject: subjectSide,
    ...(baselineSide === undefined ? {} : { baseline: baselineSide }),
    ...(limitSide === undefined ? {} : { limit: limitSide }),
    ...(spec.bytes === undefined ? {} : { bytes: spec.bytes }),
    ...(spec.items === undefined ? {} : { items: spec.items }),
    ...(spec.target === undefined
      ? {}
      : { target: { ...spec.target, met: subjectSide.stats.median <= spec.target.maxMedianMs } }),
    ...(ratioTarget === undefined ? {} : { ratioTarget }),
    ...(spec.expectedGrowth === undefined ? {} : { expectedGrowth: spec.expectedGrowth }),
    notes,
  }
}

/** A memory ceiling nobody measured (no /usr/bin/time, or an in-process subject) is not met. */
export const ratioTargetMet = (target: RatioTarget, medianRatio: number, subject: MeasuredSide): boolean =>
  medianRatio <= target.maxRatio &&
  (target.maxProcessRssBytes === undefined ||
    (subject.processPeakRssBytes !== undefined && subject.processPeakRssBytes <= target.maxProcessRssBytes))

export const limitFigure = (
  owner: { readonly case: string; readonly group: string },
  spec: LimitSpec,
  size: FigureSize | undefined,
  measured: Measured,
): Figure => ({
  kind: "limit",
  ...owner,
  series: spec.series,
  ...(size === undefined ? {} : { size }),
  unit: "ms",
  subject: side(measured),
  ...(spec.bytes === undefined ? {} : { bytes: spec.bytes }),
  expectedGrowth: "whole",
  notes: [...(spec.notes ?? [])],
})
