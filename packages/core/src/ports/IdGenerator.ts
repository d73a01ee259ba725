/**
 * The IdGenerator port: fresh ids and unguessable secrets. Core never calls a random source itself,
 * so tests get reproducible ids from `layerSequential` and hosts get `layerRandom`.
 */
import { Context, Effect, Layer } from "effect"

export interface IdGeneratorService {
  /** A fresh id with the given prefix (letters/digits), e.g. `msg_…`. */
  readonly next: (prefix: string) => Effect.Effect<string>
  /** At least 128 random bits, hex encoded; for tokens that must not be guessable. */
  readonly secret: () => Effect.Effect<string>
}

export class IdGenerator extends Context.Tag("@rewind/core/IdGenerator")<IdGenerator, IdGeneratorService>() {}

const toHex = (bytes: Uint8Array): string => {
  let out = ""
  for (const b of bytes) out += b.toString(16).padStart(2, "0")
  return out
}

const randomHex = (byteCount: number): string => {
  const bytes = new Uint8Array(byteCount)
  globalThis.crypto.getRandomValues(bytes)
  return toHex(bytes)
}

/** Production ids: 128 random bits each, from the platform's cryptographic random source. */
export const layerRandom: Layer.Layer<IdGenerator> = Layer.succeed(IdGenerator, {
  next: (prefix) => Effect.sync(() => `${prefix}_${randomHex(16)}`),
  secret: () => Effect.sync(() => randomHex(32)),
})

/**
 * Deterministic ids for tests: `<prefix>_<seed>_<n>`. Secrets are deterministic too (a counter
 * mixed with the seed), so they are only fit for tests.
 */
export const layerSequential = (seed = "t"): Layer.Layer<IdGenerator> =>
  Layer.sync(IdGenerator, () => {
    let n = 0
    return {
      next: (prefix) => Effect.sync(() => `${prefix}_${seed}_${++n}`),
      secret: () => Effect.sync(() => `${seed}-secret-${++n}`.padEnd(32, "0")),
    }
  })
