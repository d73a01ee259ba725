/**
 * Merging a re-run of some cases into earlier full results (`npm run bench -- --case x --merge`):
 * what was re-run replaces what it measured before — a case at the sizes it ran (figures are matched
 * by their size), or the whole case when it runs without sizes — everything else is kept, the curves
 * are rebuilt from the merged figures, and the re-run is recorded so the report says which figures
 * were measured later. So a case can be re-run at its small sizes without losing its 100k figures.
 */
import { type BenchResults, buildCurves, type CaseRunSummary } from "./report.js"
import type { Figure } from "./types.js"

export const mergeResults = (
  previous: BenchResults,
  runs: ReadonlyArray<CaseRunSummary>,
  figures: ReadonlyArray<Figure>,
  rerun: { readonly startedAt: string; readonly durationMs: number },
): BenchResults => {
  const key = (name: string, size: number | undefined) => `${name}\u0000${size ?? ""}`
  const sized = new Set(runs.map((r) => key(r.case, r.size?.value)))
  const whole = new Set(runs.filter((r) => r.size === undefined).map((r) => r.case))
  const replaced = (name: string, size: number | undefined) => whole.has(name) || sized.has(key(name, size))
  const kept = previous.figures.filter((f) => !replaced(f.case, f.size?.value))
  const merged = [...kept, ...figures]
  return {
    ...previous,
    durationMs: previous.durationMs + rerun.durationMs,
    runs: [...previous.runs.filter((r) => !replaced(r.case, r.size?.value)), ...runs],
    figures: merged,
    curves: buildCurves(merged),
    reruns: [
      ...(previous.reruns ?? []),
      {
        cases: [...new Set(runs.map((r) => (r.size === undefined ? r.case : `${r.case}@${r.size.value}`)))],
        startedAt: rerun.startedAt,
      },
    ],
  }
}
