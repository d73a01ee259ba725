/**
 * The loop the scenario properties share: run a seeded number of random scenarios, each reporting
 * the outcomes it reached, and count those outcomes so a property can prove it covered its cases.
 */
import { Effect, FastCheck as fc } from "effect"
import { type PropertyParameters, propertyParameters } from "./propertyParameters.js"

export const countScenarioOutcomes = <S, O extends string>(
  label: string,
  defaultRuns: number,
  scenarios: fc.Arbitrary<S>,
  run: (scenario: S) => Effect.Effect<ReadonlyArray<O>, unknown>,
): Effect.Effect<{ readonly parameters: PropertyParameters; readonly seen: ReadonlyMap<O, number> }> =>
  Effect.gen(function* () {
    const parameters = propertyParameters(label, defaultRuns)
    const seen = new Map<O, number>()
    yield* Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(scenarios, async (scenario) => {
          for (const o of await Effect.runPromise(run(scenario))) seen.set(o, (seen.get(o) ?? 0) + 1)
        }),
        { seed: parameters.seed, numRuns: parameters.numRuns, endOnFailure: true },
      ),
    )
    console.info(`[property] ${label} outcomes: ${JSON.stringify(Object.fromEntries(seen))}`)
    return { parameters, seen }
  })
