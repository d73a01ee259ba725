/**
 * Robust summary statistics for benchmark samples: median, quartiles and the median absolute
 * deviation. Means and standard deviations are left out on purpose: on a shared, noisy machine a
 * single descheduled sample would move them, while the median and quartiles hold.
 */

export interface Stats {
  readonly n: number
  readonly median: number
  readonly p25: number
  readonly p75: number
  /** Median absolute deviation from the median. */
  readonly mad: number
  readonly min: number
  readonly max: number
}

/** Linear interpolation between closest ranks (the same rule as most spreadsheet tools). */
export const quantileSorted = (sorted: ReadonlyArray<number>, q: number): number => {
  if (sorted.length === 0) throw new Error("quantile of no samples")
  const pos = (sorted.length - 1) * q
  const lo = Math.floor(pos)
  const hi = Math.ceil(pos)
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo)
}

export const median = (samples: ReadonlyArray<number>): number =>
  quantileSorted(
    [...samples].sort((a, b) => a - b),
    0.5,
  )

export const summarize = (samples: ReadonlyArray<number>): Stats => {
  if (samples.length === 0) throw new Error("cannot summarise an empty sample")
  for (const s of samples) if (!Number.isFinite(s)) throw new Error(`sample is not a finite number: ${s}`)
  const sorted = [...samples].sort((a, b) => a - b)
  const med = quantileSorted(sorted, 0.5)
  const deviations = sorted.map((s) => Math.abs(s - med)).sort((a, b) => a - b)
  return {
    n: sorted.length,
    median: med,
    p25: quantileSorted(sorted, 0.25),
    p75: quantileSorted(sorted, 0.75),
    mad: quantileSorted(deviations, 0.5),
    min: sorted[0]!,
    max: sorted.at(-1)!,
  }
}

/** A single value as statistics (a size measured once, say). */
export const single = (value: number): Stats => summarize([value])

/**
 * The slope of log(value) against log(size): 0 means the cost does not grow with the size, 1 that it
 * grows in proportion. Undefined when it cannot be computed (fewer than two positive points).
 */
export const growthExponent = (
  points: ReadonlyArray<{ readonly size: number; readonly value: number }>,
): number | undefined => {
  const usable = points.filter((p) => p.size > 0 && p.value > 0)
  if (usable.length < 2) return undefined
  const first = usable[0]!
  const last = usable.at(-1)!
  if (first.size === last.size) return undefined
  return Math.log(last.value / first.value) / Math.log(last.size / first.size)
}
