/**
 * Merging a re-run of some cases into earlier full results (`npm run bench -- --case x --merge`):
 * the re-run cases' runs and figures replace theirs, every other case keeps its own, the curves are
 * rebuilt from the merged figures, and the re-run is recorded so the report says which figures were
 * measured later.
 */
import { type BenchResults, buildCurves, type CaseRunSummary } from "./report.js"
import type { Figure } from "./types.js"

export const mergeResults = (
  previous: BenchResults,
  runs: ReadonlyArray<CaseRunSummary>,
  figures: ReadonlyArray<Figure>,
  rerun: { readonly startedAt: string; readonly durationMs: number },
): BenchResults => {
  const cases = new Set(runs.map((r) => r.case))
  const kept = previous.figures.filter((f) => !cases.has(f.case))
  const merged = [...kept, ...figures]
  return {
    ...previous,
    durationMs: previous.durationMs + rerun.durationMs,
    runs: [...previous.runs.filter((r) => !cases.has(r.case)), ...runs],
    figures: merged,
    curves: buildCurves(merged),
    reruns: [...(previous.reruns ?? []), { cases: [...cases], startedAt: rerun.startedAt }],
  }
}
