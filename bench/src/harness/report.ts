/**
 * The results of a benchmark run: the JSON document (every figure with its statistics) and the
 * Markdown report made from it (tables per group, the physical limits, sizes on disk, scale curves
 * with their measured growth, targets, and the case runs with their peak memory).
 */
import type { CaseRunResult } from "./caseRun.js"
import type { MachineInfo } from "./machine.js"
import { growthExponent, type Stats } from "./stats.js"
import type { Budget, Figure, Growth, Mode, SizePreset } from "./types.js"

export const RESULTS_SCHEMA_VERSION = 1

export interface CurvePoint {
  readonly size: number
  readonly medianMs: number
}

export interface Curve {
  readonly case: string
  readonly group: string
  readonly series: string
  readonly sizeUnit: string
  readonly axis: "whole" | "change"
  readonly points: ReadonlyArray<CurvePoint>
  /** Slope of log(time) against log(size) from the smallest to the largest size. */
  readonly exponent: number | undefined
  /** The same between the two largest sizes, where fixed costs matter least. */
  readonly lastStepExponent: number | undefined
  readonly measuredGrowth: string
  readonly expectedGrowth?: Growth
}

export interface CaseRunSummary extends Omit<CaseRunResult, "figures"> {
  readonly figureCount: number
}

export interface BenchResults {
  readonly schemaVersion: typeof RESULTS_SCHEMA_VERSION
  readonly mode: Mode
  readonly seed: number
  readonly startedAt: string
  readonly durationMs: number
  readonly machine: MachineInfo
  readonly sizes: SizePreset
  readonly budget: Budget
  readonly runs: ReadonlyArray<CaseRunSummary>
  readonly figures: ReadonlyArray<Figure>
  readonly curves: ReadonlyArray<Curve>
  /** Cases re-run later and merged in (`--merge`), in order. */
  readonly reruns?: ReadonlyArray<{ readonly cases: ReadonlyArray<string>; readonly startedAt: string }>
}

/** Words for an exponent, read on the axis the size measures. */
export const describeGrowth = (exponent: number | undefined, axis: "whole" | "change"): string => {
  if (exponent === undefined) return "n/a"
  if (axis === "whole") {
    if (exponent < 0.25) return "flat: does not grow with the whole (only with the change)"
    if (exponent < 0.75) return "sub-linear in the whole (fixed costs still dominate)"
    if (exponent < 1.25) return "grows with the whole (linear)"
    return "grows faster than the whole (super-linear)"
  }
  if (exponent < 0.25) return "flat: does not grow with the change (a fixed cost, e.g. the whole tree)"
  if (exponent < 0.75) return "grows with the change, sub-linearly (fixed costs still dominate)"
  if (exponent < 1.25) return "grows with the change (linear)"
  return "grows faster than the change (super-linear)"
}

export const buildCurves = (figures: ReadonlyArray<Figure>): Array<Curve> => {
  const bySeries = new Map<string, Array<Figure>>()
  for (const f of figures) {
    if (f.kind === "size" || f.size === undefined) continue
    const key = `${f.case}\u0000${f.series}\u0000${f.size.unit}`
    const list = bySeries.get(key) ?? []
    list.push(f)
    bySeries.set(key, list)
  }
  const curves: Array<Curve> = []
  for (const list of bySeries.values()) {
    if (list.length < 2) continue
    const first = list[0]!
    const points = list
      .map((f) => ({ size: f.size!.value, medianMs: f.subject.stats.median }))
      .sort((a, b) => a.size - b.size)
    const axis = first.size!.axis ?? "whole"
    const lastStepExponent = growthExponent(
      points.slice(-2).map((p) => ({ size: p.size, value: p.medianMs })),
    )
    curves.push({
      case: first.case,
      group: first.group,
      series: first.series,
      sizeUnit: first.size!.unit,
      axis,
      points,
      exponent: growthExponent(points.map((p) => ({ size: p.size, value: p.medianMs }))),
      lastStepExponent,
      measuredGrowth: describeGrowth(lastStepExponent, axis),
      ...(first.expectedGrowth === undefined ? {} : { expectedGrowth: first.expectedGrowth }),
    })
  }
  return curves
}

/** The subject's and the baseline's largest spawned process, where they were measured. */
const processRss = (f: Figure): string => {
  const subject = f.subject.processPeakRssBytes
  const baseline = f.baseline?.processPeakRssBytes
  if (subject === undefined && baseline === undefined) return ""
  const text = (b: number | undefined) => (b === undefined ? "–" : formatBytes(b))
  return `${text(subject)} / ${text(baseline)}`
}

/** Three significant digits, never in exponent notation. */
export const sig3 = (x: number): string => {
  const a = Math.abs(x)
  if (a >= 100) return x.toFixed(0)
  if (a >= 10) return x.toFixed(1)
  if (a >= 1) return x.toFixed(2)
  return x.toPrecision(3)
}

export const formatMs = (ms: number): string => {
  if (ms < 0.001) return `${(ms * 1e6).toFixed(0)} ns`
  if (ms < 1) return `${sig3(ms * 1000)} µs`
  if (ms < 999.5) return `${sig3(ms)} ms`
  if (ms < 120_000) return `${sig3(ms / 1000)} s`
  return `${sig3(ms / 60_000)} min`
}

export const formatBytes = (bytes: number): string => {
  if (bytes < 1e3) return `${bytes.toFixed(0)} B`
  if (bytes < 1e6) return `${sig3(bytes / 1e3)} kB`
  if (bytes < 1e9) return `${sig3(bytes / 1e6)} MB`
  return `${sig3(bytes / 1e9)} GB`
}

const formatValue = (v: number, unit: Figure["unit"]) => (unit === "ms" ? formatMs(v) : formatBytes(v))
const spread = (s: Stats, unit: Figure["unit"]) =>
  s.n < 2
    ? `${formatValue(s.median, unit)} (n=1)`
    : `${formatValue(s.median, unit)} (${formatValue(s.p25, unit)}–${formatValue(s.p75, unit)})`
const ratioText = (s: Stats) =>
  s.n < 2 ? `${sig3(s.median)}× (n=1)` : `${sig3(s.median)}× (${sig3(s.p25)}–${sig3(s.p75)})`
const sizeText = (f: Figure) =>
  f.size === undefined ? "" : `${f.size.value.toLocaleString("en-US")} ${f.size.unit}`
const cell = (text: string) => text.replaceAll("|", "\\|")
const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) =>
  [
    `| ${header.join(" | ")} |`,
    `| ${header.map(() => "---").join(" | ")} |`,
    ...rows.map((r) => `| ${r.map(cell).join(" | ")} |`),
  ].join("\n")

/** Items per second at the median, for the subject and (when measured) the baseline. */
const throughputText = (f: Figure): string => {
  if (f.items === undefined) return ""
  const { count, unit } = f.items
  const rate = (medianMs: number) =>
    `${sig3((count * 1000) / medianMs).replace(/\B(?=(\d{3})+(?!\d))/g, ",")} ${unit}/s`
  const subject = rate(f.subject.stats.median)
  return f.baseline === undefined ? subject : `${subject} / ${rate(f.baseline.stats.median)}`
}

export const renderMarkdown = (results: BenchResults): string => {
  const m = results.machine
  const out: Array<string> = []
  out.push(
    `Run of ${results.startedAt} (${results.mode} mode, seed ${results.seed}), ${formatMs(results.durationMs)} in all.`,
    "",
    ...(results.reruns ?? []).flatMap((r) => [
      `Re-run and merged in at ${r.startedAt}: ${r.cases.join(", ")} (these figures replace the earlier run's).`,
      "",
    ]),
    `Machine: ${m.cpuModel}, ${m.cores} cores, ${formatBytes(m.memoryBytes)} memory, ${m.platform} (kernel ${m.kernel}), Node ${m.node}, ${m.git}; load average at start ${m.loadAverage.join(" / ")}.`,
    "",
    "Times are medians with p25–p75 over all samples. A ratio is subject ÷ baseline per round (median, p25–p75 over rounds); " +
      "“% of limit” is the physical limit's median ÷ the subject's median (100% = as fast as this machine can do that much I/O and hashing). " +
      "Peak RSS is the whole benchmark process for that case and size; “process RSS” is the largest spawned process of the subject / of the baseline (git, or the rewind CLI), read on their first run.",
  )

  const comparisons = results.figures.filter((f) => f.kind === "comparison")
  for (const group of [...new Set(comparisons.map((f) => f.group))]) {
    const inGroup = comparisons.filter((f) => f.group === group)
    // Only groups with a figure that counts its items get the column.
    const withThroughput = inGroup.some((f) => f.items !== undefined)
    out.push("", `### ${group}`, "")
    out.push(
      table(
        [
          "figure",
          "size",
          "median (p25–p75)",
          "n",
          "baseline",
          "ratio",
          "limit",
          "% of limit",
          "peak RSS",
          "process RSS (subject / baseline)",
          ...(withThroughput ? ["throughput (subject / baseline)"] : []),
        ],
        inGroup.map((f) => [
          f.series,
          sizeText(f),
          spread(f.subject.stats, f.unit),
          String(f.subject.stats.n),
          f.baseline === undefined ? "" : `${f.baseline.label}: ${spread(f.baseline.stats, f.unit)}`,
          f.baseline === undefined ? "" : ratioText(f.baseline.ratio),
          f.limit === undefined ? "" : `${f.limit.label}: ${spread(f.limit.stats, f.unit)}`,
          f.limit === undefined ? "" : `${sig3(f.limit.percentOfLimit)}%`,
          f.runPeakRssBytes === undefined ? "" : formatBytes(f.runPeakRssBytes),
          processRss(f),
          ...(withThroughput ? [throughputText(f)] : []),
        ]),
      ),
    )
  }

  const limits = results.figures.filter((f) => f.kind === "limit")
  if (limits.length > 0) {
    out.push("", "### Physical limits (single thread, warm page cache)", "")
    out.push(
      table(
        ["limit", "size", "median (p25–p75)", "n", "throughput", "notes"],
        limits.map((f) => [
          f.series,
          sizeText(f),
          spread(f.subject.stats, "ms"),
          String(f.subject.stats.n),
          f.bytes === undefined ? "" : `${(f.bytes / 1e6 / (f.subject.stats.median / 1000)).toFixed(0)} MB/s`,
          f.notes.join("; "),
        ]),
      ),
    )
  }

  const sizes = results.figures.filter((f) => f.kind === "size")
  if (sizes.length > 0) {
    out.push("", "### Size on disk", "")
    out.push(
      table(
        ["figure", "size", "bytes", "baseline", "ratio", "notes"],
        sizes.map((f) => [
          f.series,
          sizeText(f),
          formatBytes(f.subject.stats.median),
          f.baseline === undefined ? "" : `${f.baseline.label}: ${formatBytes(f.baseline.stats.median)}`,
          f.baseline === undefined ? "" : `${sig3(f.baseline.ratio.median)}×`,
          f.notes.join("; "),
        ]),
      ),
    )
  }

  if (results.curves.length > 0) {
    out.push("", "### Scale curves", "")
    out.push(
      "The exponent is the slope of log(time) against log(size): 0 = does not grow, 1 = grows in proportion. " +
        "Workspace and session curves keep the change fixed (10 edited files, one rewind), so a flat curve means the cost follows the change, not the whole. " +
        "Each point is an absolute median measured in its own process at its own time, so a change of load on a shared machine between sizes bends the curve " +
        "(see the load column of the case runs); the ratios above, taken within rounds, are not affected.",
      "",
    )
    out.push(
      table(
        [
          "series",
          "medians by size",
          "exponent (all)",
          "exponent (last step)",
          "measured",
          "expected to grow with",
        ],
        results.curves.map((c) => [
          c.series,
          c.points
            .map((p) => `${p.size.toLocaleString("en-US")} ${c.sizeUnit}: ${formatMs(p.medianMs)}`)
            .join(" · "),
          c.exponent === undefined ? "" : c.exponent.toFixed(2),
          c.lastStepExponent === undefined ? "" : c.lastStepExponent.toFixed(2),
          c.measuredGrowth,
          c.expectedGrowth ?? "",
        ]),
      ),
    )
  }

  const ratioTargets = results.figures.filter((f) => f.ratioTarget !== undefined)
  if (ratioTargets.length > 0) {
    out.push("", "### Targets against the baseline", "")
    out.push(
      table(
        ["figure", "size", "target", "ratio (p25–p75)", "process RSS", "met"],
        ratioTargets.map((f) => [
          f.series,
          sizeText(f),
          `${f.ratioTarget!.description}: ≤ ${sig3(f.ratioTarget!.maxRatio)}×${f.ratioTarget!.maxProcessRssBytes === undefined ? "" : `, ≤ ${formatBytes(f.ratioTarget!.maxProcessRssBytes)}`}`,
          f.baseline === undefined ? "" : ratioText(f.baseline.ratio),
          f.subject.processPeakRssBytes === undefined ? "" : formatBytes(f.subject.processPeakRssBytes),
          f.ratioTarget!.met ? "yes" : "**no**",
        ]),
      ),
    )
  }

  const targets = results.figures.filter((f) => f.target !== undefined)
  if (targets.length > 0) {
    out.push("", "### Targets", "")
    out.push(
      table(
        ["target", "median (p25–p75)", "limit", "met"],
        targets.map((f) => [
          f.target!.description,
          spread(f.subject.stats, "ms"),
          `< ${formatMs(f.target!.maxMedianMs)}`,
          f.target!.met ? "yes" : "**no**",
        ]),
      ),
    )
  }

  out.push("", "### Case runs", "")
  // Results written before runs recorded their load have no such column.
  const withLoad = results.runs.some((r) => r.loadAverage !== undefined)
  out.push(
    table(
      [
        "case",
        "size",
        "time",
        ...(withLoad ? ["load (start → end)"] : []),
        "peak RSS",
        "peak heap (sampled)",
        "figures",
        "error",
      ],
      results.runs.map((r) => [
        r.case,
        r.size === undefined ? "" : `${r.size.value.toLocaleString("en-US")} ${r.size.unit}`,
        formatMs(r.durationMs),
        ...(withLoad
          ? [
              r.loadAverage === undefined
                ? ""
                : `${r.loadAverage.start.toFixed(1)} → ${r.loadAverage.end.toFixed(1)}`,
            ]
          : []),
        formatBytes(r.peakRssBytes),
        formatBytes(r.peakHeapUsedBytes),
        String(r.figureCount),
        r.error === undefined ? "" : (r.error.split("\n")[0] ?? ""),
      ]),
    ),
  )
  return `${out.join("\n")}\n`
}
