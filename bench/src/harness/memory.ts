/**
 * Peak memory of one benchmark process. RSS peak comes from the kernel (`resourceUsage().maxRSS`,
 * exact, since every case runs in its own process); heap use is sampled between rounds and after
 * setup, before the collector runs, so it approximates the peak of live data plus garbage.
 */

export interface MemoryPeaks {
  readonly peakRssBytes: number
  readonly peakHeapUsedBytes: number
}

export interface MemoryTracker {
  readonly sample: () => void
  readonly peaks: () => MemoryPeaks
}

export const makeMemoryTracker = (): MemoryTracker => {
  let peakHeapUsed = 0
  const sample = () => {
    const heap = process.memoryUsage().heapUsed
    if (heap > peakHeapUsed) peakHeapUsed = heap
  }
  return {
    sample,
    peaks: () => {
      sample()
      return { peakRssBytes: process.resourceUsage().maxRSS * 1024, peakHeapUsedBytes: peakHeapUsed }
    },
  }
}

/** Collects garbage when the process was started with --expose-gc (the bench script does that). */
export const collectGarbage = (): void => {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc !== undefined) gc()
}
