/**
 * A deterministic Clock for tests that run outside `it.effect` (model-based runs build their own
 * runtime): every read advances time by a fixed step, so timestamps are reproducible and ordered.
 */
import { Clock, Duration, Effect, Layer } from "effect"

export const makeSteppingClock = (startMillis = 1_700_000_000_000, stepMillis = 1): Clock.Clock => {
  let now = startMillis
  const read = () => {
    const t = now
    now += stepMillis
    return t
  }
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: read,
    currentTimeMillis: Effect.sync(read),
    unsafeCurrentTimeNanos: () => BigInt(read()) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(read()) * 1_000_000n),
    // Sleeping advances the clock instead of waiting, so timeouts stay deterministic and instant.
    sleep: (duration) =>
      Effect.sync(() => {
        now += Duration.toMillis(duration)
      }),
  }
}

export const layerSteppingClock = (startMillis?: number, stepMillis?: number): Layer.Layer<never> =>
  Layer.setClock(makeSteppingClock(startMillis, stepMillis))
