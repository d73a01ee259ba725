/**
 * Interleaved measurement. A figure's subject, baseline and limit are timed in the same rounds, in
 * rotating order, so load from other processes on a shared machine hits all of them alike; the
 * ratio is taken per round (subject median / baseline median of that round) and summarised over
 * rounds, which is why ratios are steadier than the absolute times they come from.
 *
 * Round 0 calibrates: one iteration of each sampler (process samplers under /usr/bin/time for their
 * peak RSS). Its time is kept as a sample when it took at least `budget.keepCalibrationMs` (warm-up
 * effects are then negligible and repeating a slow operation is expensive); otherwise it is a
 * warm-up. The calibrated time then fixes the number of rounds: `budget.rounds` for fast work,
 * fewer (but at least `budget.minRounds`) when one iteration is slow, and none beyond the calibration
 * when it took `budget.singleRunAboveMs` or more. Each round gives every sampler about
 * `budget.roundTimeMs` of timed work: in-process samplers through tinybench with an explicit
 * iteration count (work of a few microseconds timed in batches of calls, so timer resolution and
 * per-sample overhead stay small beside it), process samplers as repeated spawn-to-exit timings.
 */
import { performance } from "node:perf_hooks"
import { Bench } from "tinybench"
import { collectGarbage, type MemoryTracker } from "./memory.js"
import { median } from "./stats.js"
import type { Budget, InProcessSampler, ProcessSampler, Sampler } from "./types.js"

export interface Measured {
  readonly label: string
  readonly samples: ReadonlyArray<number>
  /** Median of each round's samples; undefined for a round this sampler did not count. */
  readonly roundMedians: ReadonlyArray<number | undefined>
  readonly processPeakRssBytes?: number
}

/** Work faster than this per call is timed in batches of calls. */
const BATCH_BELOW_MS = 0.01
/** A batch lasts about this long. */
const BATCH_TARGET_MS = 0.05
const MAX_BATCH = 100_000
/** At most this many timed samples per sampler per round. */
const MAX_ITERATIONS = 5_000

const isPromise = (value: unknown): value is Promise<unknown> =>
  typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function"

interface Calibration {
  /** Time of the first iteration. */
  readonly ms: number
  /** Estimated timed time of one sample (a batch of calls when batched). */
  readonly timedMs: number
  /** Estimated wall time of one iteration, hooks included. */
  readonly wallMs: number
  /** Calls per timed sample (1 unless the work is tiny and needs no per-call setup). */
  readonly batch: number
  readonly async: boolean
  readonly peakRssBytes?: number
}

const hasHooks = (s: Sampler) => s.beforeEach !== undefined || s.afterEach !== undefined

/** tinybench's convention: a task may report its own duration (e.g. scaled from a sample). */
const overridden = (result: unknown): number | undefined => {
  if (typeof result !== "object" || result === null) return undefined
  const d = (result as { overriddenDuration?: unknown }).overriddenDuration
  return typeof d === "number" && Number.isFinite(d) && d >= 0 ? d : undefined
}

const calibrate = async (sampler: Sampler, budget: Budget): Promise<Calibration> => {
  const wallStarted = performance.now()
  await sampler.beforeEach?.()
  let ms: number
  let async = false
  let reportsDuration = false
  let peakRssBytes: number | undefined
  try {
    if (sampler.kind === "process") {
      const r = await sampler.run({ measureMemory: true })
      ms = r.ms
      peakRssBytes = r.peakRssBytes
    } else {
      const started = performance.now()
      let out = sampler.fn()
      async = isPromise(out)
      if (async) out = await out
      ms = performance.now() - started
      const own = overridden(out)
      if (own !== undefined) {
        ms = own
        reportsDuration = true
      }
    }
  } finally {
    await sampler.afterEach?.()
  }
  const wallMs = performance.now() - wallStarted
  const first = {
    ms,
    timedMs: ms,
    wallMs,
    batch: 1,
    async,
    ...(peakRssBytes === undefined ? {} : { peakRssBytes }),
  }
  if (sampler.kind === "process" || async || reportsDuration || hasHooks(sampler) || ms >= 1) return first
  // One cold call says little about a microsecond operation: estimate from a short loop instead,
  // and time calls in batches when one is too short for the timer.
  const loopMs = Math.min(5, Math.max(1, budget.roundTimeMs / 10))
  const started = performance.now()
  let calls = 0
  while (performance.now() - started < loopMs) {
    sampler.fn()
    calls++
  }
  const perCall = (performance.now() - started) / calls
  const batch = perCall >= BATCH_BELOW_MS ? 1 : Math.min(MAX_BATCH, Math.ceil(BATCH_TARGET_MS / perCall))
  return { ...first, batch, timedMs: perCall * batch, wallMs: perCall * batch }
}

/** Timed iterations per round: about `roundTimeMs` of timed work, bounded in wall time when hooks are slow. */
export const iterationsPerRound = (budget: Budget, timedMs: number, wallMs: number): number =>
  Math.max(
    1,
    Math.min(
      MAX_ITERATIONS,
      Math.floor(budget.roundTimeMs / Math.max(timedMs, 1e-4)),
      Math.floor((3 * budget.roundTimeMs) / Math.max(wallMs, 1e-4)),
    ),
  )

const runInProcess = async (
  sampler: InProcessSampler,
  calibration: Calibration,
  budget: Budget,
  warmup: boolean,
): Promise<Array<number>> => {
  const iterations = iterationsPerRound(budget, calibration.timedMs, calibration.wallMs)
  // `time: 0` makes tinybench run exactly `iterations` times: its time budget counts only the timed
  // function, which would let slow untimed hooks stretch a round without bound.
  const bench = new Bench({
    time: 0,
    iterations,
    warmup: warmup && calibration.ms < 50,
    warmupTime: 0,
    warmupIterations: Math.max(1, Math.min(50, Math.floor(iterations / 4))),
    throws: true,
  })
  // tinybench calls a task function once when it is added, to find out whether it is async. That
  // call must not do the work (it would run without its beforeEach), so the task stays disarmed
  // until tinybench's own beforeAll; an async task is declared `async` and is never probed.
  let armed = false
  const hooks = {
    beforeAll: () => {
      armed = true
    },
    ...(sampler.beforeEach === undefined ? {} : { beforeEach: sampler.beforeEach }),
    ...(sampler.afterEach === undefined ? {} : { afterEach: sampler.afterEach }),
  }
  const { fn } = sampler
  const batch = calibration.batch
  if (calibration.async) bench.add(sampler.label, async () => await fn(), hooks)
  else if (batch === 1) bench.add(sampler.label, () => (armed ? fn() : undefined), hooks)
  else
    bench.add(
      sampler.label,
      () => {
        if (armed) for (let i = 0; i < batch; i++) fn()
      },
      hooks,
    )
  const [task] = await bench.run()
  const result = task?.result
  if (result === undefined) throw new Error(`tinybench produced no result for ${sampler.label}`)
  if (result.error !== undefined) throw result.error
  return result.latency.samples.map((ms) => ms / batch)
}

const runProcess = async (
  sampler: ProcessSampler,
  calibration: Calibration,
  budget: Budget,
): Promise<Array<number>> => {
  const iterations = Math.min(50, iterationsPerRound(budget, calibration.timedMs, calibration.wallMs))
  const samples: Array<number> = []
  for (let i = 0; i < iterations; i++) {
    await sampler.beforeEach?.()
    try {
      samples.push((await sampler.run({ measureMemory: false })).ms)
    } finally {
      await sampler.afterEach?.()
    }
  }
  return samples
}

/** Rounds to run after calibration, given the slowest calibrated iteration. */
export const plannedRounds = (budget: Budget, slowestMs: number, calibrationCounted: boolean): number => {
  // Work this slow is measured once: the calibration round is its only sample.
  if (calibrationCounted && slowestMs >= budget.singleRunAboveMs) return 0
  const total =
    slowestMs <= budget.roundTimeMs
      ? budget.rounds
      : Math.max(budget.minRounds, Math.min(budget.rounds, Math.floor(budget.sampleBudgetMs / slowestMs)))
  return calibrationCounted ? Math.max(1, total - 1) : total
}

export const measureInterleaved = async (
  samplers: ReadonlyArray<Sampler>,
  budget: Budget,
  memory: MemoryTracker,
): Promise<Array<Measured>> => {
  const calibrations: Array<Calibration> = []
  for (const s of samplers) {
    collectGarbage()
    calibrations.push(await calibrate(s, budget))
    memory.sample()
  }
  const kept = calibrations.map((c) => c.ms >= budget.keepCalibrationMs)
  const samples: Array<Array<number>> = samplers.map((_, i) => (kept[i] ? [calibrations[i]!.ms] : []))
  const roundMedians: Array<Array<number | undefined>> = samplers.map((_, i) => [
    kept[i] ? calibrations[i]!.ms : undefined,
  ])
  const rounds = plannedRounds(
    budget,
    Math.max(...calibrations.map((c) => c.ms)),
    kept.every((k) => k),
  )

  for (let r = 1; r <= rounds; r++) {
    for (let k = 0; k < samplers.length; k++) {
      const i = (k + r) % samplers.length
      const sampler = samplers[i]!
      collectGarbage()
      const batch =
        sampler.kind === "in-process"
          ? await runInProcess(sampler, calibrations[i]!, budget, r === 1)
          : await runProcess(sampler, calibrations[i]!, budget)
      memory.sample()
      const into = samples[i]!
      for (const s of batch) into.push(s)
      roundMedians[i]![r] = median(batch)
    }
  }

  return samplers.map((s, i) => {
    const peak = calibrations[i]!.peakRssBytes
    const base = { label: s.label, samples: samples[i]!, roundMedians: roundMedians[i]! }
    return peak === undefined ? base : { ...base, processPeakRssBytes: peak }
  })
}

/** Per-round ratios a/b over the rounds both counted. */
export const roundRatios = (a: Measured, b: Measured): Array<number> => {
  const out: Array<number> = []
  for (let r = 0; r < Math.max(a.roundMedians.length, b.roundMedians.length); r++) {
    const x = a.roundMedians[r]
    const y = b.roundMedians[r]
    if (x !== undefined && y !== undefined && y > 0) out.push(x / y)
  }
  return out
}
