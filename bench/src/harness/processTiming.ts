/**
 * Timing whole processes: from the spawn call to the child's exit, as a host that shells out to
 * git pays it (process start, index load and all). Optionally run under /usr/bin/time to read the
 * child's peak RSS; that wrapper costs an extra exec, so the harness only uses it on the first
 * (calibration) iteration of a process sampler.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { runProcess } from "./processRunner.js"
import type { ProcessResult } from "./types.js"

const TIME_BINARY = "/usr/bin/time"
export const canMeasureProcessMemory = existsSync(TIME_BINARY)

export interface TimedProcess {
  readonly ms: number
  readonly stdout: string
  /** Peak RSS of the child in bytes, when `measureMemory` was asked and /usr/bin/time exists. */
  readonly peakRssBytes?: number
}

export interface TimeProcessOptions {
  readonly cwd?: string
  readonly env?: NodeJS.ProcessEnv
  readonly measureMemory?: boolean
  /** Exit codes that are not failures (default: only 0). */
  readonly okCodes?: ReadonlyArray<number>
}

export class ProcessFailed extends Error {
  constructor(
    readonly command: string,
    readonly status: number | null,
    readonly stderr: string,
  ) {
    super(`${command} exited with ${status}: ${stderr.trim().slice(0, 500)}`)
  }
}

export const timeProcess = (
  command: string,
  args: ReadonlyArray<string>,
  options: TimeProcessOptions = {},
): TimedProcess => {
  const measureMemory = options.measureMemory === true && canMeasureProcessMemory
  let scratch: string | undefined
  let file = command
  let argv = [...args]
  if (measureMemory) {
    scratch = mkdtempSync(join(tmpdir(), "rewind-bench-time-"))
    file = TIME_BINARY
    argv = ["-f", "%M", "-o", join(scratch, "rss"), command, ...args]
  }
  try {
    // Spawned by the helper process (see processRunner.ts), timed there from spawn to exit.
    const result = runProcess({
      file,
      args: argv,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      env: options.env ?? process.env,
      maxBuffer: 64 * 1024 * 1024,
    })
    const ms = result.ms
    const label = [command, ...args.slice(0, 6)].join(" ")
    if (result.error !== undefined) throw new ProcessFailed(label, null, result.error)
    if (!(options.okCodes ?? [0]).includes(result.status ?? -1)) {
      throw new ProcessFailed(label, result.status, result.stderr)
    }
    if (scratch === undefined) return { ms, stdout: result.stdout }
    // GNU time writes maximum resident set size in KiB.
    const kib = Number.parseInt(readFileSync(join(scratch, "rss"), "utf8").trim().split("\n").at(-1)!, 10)
    return Number.isFinite(kib)
      ? { ms, stdout: result.stdout, peakRssBytes: kib * 1024 }
      : { ms, stdout: result.stdout }
  } finally {
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true })
  }
}

/** Processes timed as one: their wall times summed, the largest peak RSS measured among them. */
export const combine = (parts: ReadonlyArray<TimedProcess>): ProcessResult => {
  const ms = parts.reduce((sum, p) => sum + p.ms, 0)
  const peaks = parts.flatMap((p) => (p.peakRssBytes === undefined ? [] : [p.peakRssBytes]))
  return peaks.length === 0 ? { ms } : { ms, peakRssBytes: Math.max(...peaks) }
}
