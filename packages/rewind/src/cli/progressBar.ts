/**
 * The capture progress bar: driven by the snapshot engine's `onProgress` callback, drawn on one
 * stderr line rewritten in place. It stays hidden for the first `delayMs` so a quick capture
 * prints nothing, redraws at most every `intervalMs`, and erases itself when done. The caller
 * decides whether to draw at all (only on a terminal, never with `--json`).
 */
import type { CaptureProgress } from "@rewind/core"

export interface ProgressBar {
  readonly update: (progress: CaptureProgress) => void
  /** Erases the bar (if it was drawn). */
  readonly done: () => void
}

export const inertProgressBar: ProgressBar = { update: () => {}, done: () => {} }

export interface ProgressBarOptions {
  readonly stream: { write: (text: string) => unknown; readonly columns?: number }
  /** Wall-clock milliseconds (the CLI passes `Date.now`; tests a counter). */
  readonly now: () => number
  /** Nothing is drawn until the capture has run this long. Default 300 ms. */
  readonly delayMs?: number
  /** Minimum time between redraws. Default 80 ms. */
  readonly intervalMs?: number
  readonly style?: (text: string) => string
}

const WIDTH = 30

/** The text of one frame (exported for tests). */
export const renderProgress = (p: CaptureProgress): string => {
  if (p.phase === "hash" && p.toHash > 0) {
    const ratio = Math.min(1, p.hashed / p.toHash)
    const filled = Math.round(ratio * WIDTH)
    const percent = String(Math.floor(ratio * 100)).padStart(3)
    return `capturing [${"#".repeat(filled)}${"-".repeat(WIDTH - filled)}] ${percent}%  ${p.hashed}/${p.toHash} files hashed`
  }
  return `capturing: scanning… ${p.entries} entries in ${p.directories} directories`
}

export const makeProgressBar = (options: ProgressBarOptions): ProgressBar => {
  const start = options.now()
  const delay = options.delayMs ?? 300
  const interval = options.intervalMs ?? 80
  const style = options.style ?? ((s: string) => s)
  let drawn = false
  let lastDraw = Number.NEGATIVE_INFINITY
  return {
    update: (progress) => {
      if (progress.phase === "done") return
      const now = options.now()
      if (now - start < delay || now - lastDraw < interval) return
      lastDraw = now
      drawn = true
      const columns = options.stream.columns ?? 80
      options.stream.write(`\r\x1b[2K${style(renderProgress(progress).slice(0, Math.max(10, columns - 1)))}`)
    },
    done: () => {
      if (drawn) options.stream.write("\r\x1b[2K")
      drawn = false
    },
  }
}
