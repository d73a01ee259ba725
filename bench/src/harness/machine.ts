/**
 * The machine a run happened on, printed into every result: figures mean little without it.
 */
import { readFileSync } from "node:fs"
import os from "node:os"
import { gitVersion } from "../baselines/shadowGit.js"

export interface MachineInfo {
  readonly cpuModel: string
  readonly cores: number
  readonly memoryBytes: number
  readonly node: string
  readonly git: string
  readonly platform: string
  readonly kernel: string
  /** 1, 5 and 15 minute load averages when the run started: how shared the machine was. */
  readonly loadAverage: ReadonlyArray<number>
}

const cpuModel = (): string => {
  try {
    const line = readFileSync("/proc/cpuinfo", "utf8")
      .split("\n")
      .find((l) => l.startsWith("model name"))
    if (line !== undefined) return line.slice(line.indexOf(":") + 1).trim()
  } catch {
    // not Linux: fall back to what Node reports
  }
  return os.cpus()[0]?.model ?? "unknown"
}

export const machineInfo = (): MachineInfo => ({
  cpuModel: cpuModel(),
  cores: os.availableParallelism(),
  memoryBytes: os.totalmem(),
  node: process.version,
  git: gitVersion(),
  platform: `${os.platform()} ${os.arch()}`,
  kernel: os.release(),
  loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
})
