/**
 * A small seeded pseudo-random generator (SplitMix32) so every generated workspace, session and
 * mutation is the same on every run and every machine. `Math.random` is never used by the suite.
 */

export interface Rng {
  /** A float in [0, 1). */
  readonly next: () => number
  /** An integer in [min, max] (both inclusive). */
  readonly int: (min: number, max: number) => number
  readonly pick: <A>(items: ReadonlyArray<A>) => A
}

/** Mixes two 32-bit integers into one seed; used to derive an independent stream per file. */
export const mixSeed = (a: number, b: number): number => {
  let h = (Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x7f4a7c15, 0xc2b2ae35)) >>> 0
  h = Math.imul(h ^ (h >>> 16), 0x45d9f3b) >>> 0
  return (h ^ (h >>> 16)) >>> 0
}

export const makeRng = (seed: number): Rng => {
  let state = seed >>> 0
  const next = (): number => {
    state = (state + 0x9e3779b9) >>> 0
    let z = state
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0
    return ((z ^ (z >>> 16)) >>> 0) / 4294967296
  }
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1))
  const pick = <A>(items: ReadonlyArray<A>): A => items[Math.floor(next() * items.length)]!
  return { next, int, pick }
}
