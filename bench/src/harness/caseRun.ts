/**
 * One case at one size, as run inside its own child process: build the context, run the case,
 * put back what it changed, and return its figures with the process's peak memory.
 */
import os from "node:os"
import { performance } from "node:perf_hooks"
import { type CaseRunConfig, makeCaseContext } from "./context.js"
import { collectGarbage, makeMemoryTracker } from "./memory.js"
import { startProcessRunner, stopProcessRunner } from "./processRunner.js"
import type { BenchCase, Figure, FigureSize } from "./types.js"

export interface CaseRunResult {
  readonly case: string
  readonly group: string
  readonly description: string
  readonly size?: FigureSize
  readonly durationMs: number
  readonly peakRssBytes: number
  readonly peakHeapUsedBytes: number
  /** One-minute load average when the run started and ended: how busy the shared machine was. */
  readonly loadAverage?: { readonly start: number; readonly end: number }
  readonly figures: ReadonlyArray<Figure>
  readonly error?: string
}

export const runCase = async (
  benchCase: BenchCase,
  config: CaseRunConfig,
  log: (message: string) => void,
): Promise<CaseRunResult> => {
  const loadAtStart = os.loadavg()[0]!
  // The one fork of this process, before anything is timed (see processRunner.ts).
  startProcessRunner()
  const memory = makeMemoryTracker()
  collectGarbage()
  const started = performance.now()
  const { ctx, figures, close } = makeCaseContext(benchCase, config, memory, log)
  let error: string | undefined
  try {
    await benchCase.run(ctx)
  } catch (cause) {
    error = cause instanceof Error ? (cause.stack ?? cause.message) : String(cause)
  } finally {
    try {
      close()
    } catch (cause) {
      error = `${error ?? ""}\ncleanup failed: ${String(cause)}`.trim()
    }
    stopProcessRunner()
  }
  const peaks = memory.peaks()
  return {
    case: benchCase.name,
    group: benchCase.group,
    description: benchCase.description,
    ...(config.size === undefined
      ? {}
      : { size: { value: config.size, unit: benchCase.sizeUnit ?? "items" } }),
    durationMs: performance.now() - started,
    ...peaks,
    loadAverage: { start: loadAtStart, end: os.loadavg()[0]! },
    figures,
    ...(error === undefined ? {} : { error }),
  }
}
