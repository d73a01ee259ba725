/**
 * The loop the scenario properties share: run a seeded number of random scenarios (the property's
 * parameters, propertyParameters.ts), failing on the first that fails; `countScenarioOutcomes`
 * also counts the outcomes each reached, so a property can prove it covered its cases.
 */
import { Effect, FastCheck as fc } from "effect"
import { type PropertyParameters, propertyParameters } from "./propertyParameters.js"

export const runScenarios = <S>(
  label: string,
  defaultRuns: number,
  scenarios: fc.Arbitrary<S>,
  run: (scenario: S) => Effect.Effect<unknown, unknown>,
): Effect.Effect<PropertyParameters> =>
  Effect.gen(function* () {
    const parameters = propertyParameters(label, defaultRuns)
    yield* Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(scenarios, async (scenario) => {
          await Effect.runPromise(run(scenario))
        }),
        { seed: parameters.seed, numRuns: parameters.numRuns, endOnFailure: true },
      ),
    )
    return parameters
  })

export const countScenarioOutcomes = <S, O extends string>(
  label: string,
  defaultRuns: number,
  scenarios: fc.Arbitrary<S>,
  run: (scenario: S) => Effect.Effect<ReadonlyArray<O>, unknown>,
): Effect.Effect<{ readonly parameters: PropertyParameters; readonly seen: ReadonlyMap<O, number> }> =>
  Effect.gen(function* () {
    const seen = new Map<O, number>()
    const parameters = yield* runScenarios(label, defaultRuns, scenarios, (scenario) =>
      Effect.map(run(scenario), (outcomes) => {
        for (const o of outcomes) seen.set(o, (seen.get(o) ?? 0) + 1)
      }),
    )
    console.info(`[property] ${label} outcomes: ${JSON.stringify(Object.fromEntries(seen))}`)
    return { parameters, seen }
  })
