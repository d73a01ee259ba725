/**
 * Seeds and run counts for property tests: a fixed default seed so runs are reproducible, both
 * overridable from the environment, and printed so a failure can be replayed exactly.
 */

export interface PropertyParameters {
  readonly seed: number
  readonly numRuns: number
}

export const DEFAULT_PROPERTY_SEED = 20_260_921

export const propertyParameters = (name: string, defaultRuns: number): PropertyParameters => {
  const seedText = process.env.REWIND_PROPERTY_SEED
  const runsText = process.env.REWIND_PROPERTY_RUNS
  const seed =
    seedText === undefined || seedText === "" ? DEFAULT_PROPERTY_SEED : Number.parseInt(seedText, 10)
  const numRuns = runsText === undefined || runsText === "" ? defaultRuns : Number.parseInt(runsText, 10)
  if (!Number.isFinite(seed) || !Number.isFinite(numRuns) || numRuns < 1) {
    throw new Error("REWIND_PROPERTY_SEED and REWIND_PROPERTY_RUNS must be integers")
  }
  console.info(`[property] ${name}: seed=${seed} runs=${numRuns} (replay with REWIND_PROPERTY_SEED=${seed})`)
  return { seed, numRuns }
}
