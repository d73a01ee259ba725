/**
 * How every SQL adapter's `layerConfig` reads its options: from an Effect `Config` (by default the
 * adapter's `REWIND_*` variables), a configuration that does not read or decode being a StoreError
 * naming the store, before anything is opened.
 */
import { StoreError } from "@rewind/contracts"
import { type Config, type ConfigError, Effect, Layer } from "effect"

export const layerFromConfig = <Options, ROut, E>(
  /** The store, for the message: "SQLite store", "PostgreSQL store". */
  store: string,
  config: Config.Config<Options>,
  layer: (options: Options) => Layer.Layer<ROut, E>,
): Layer.Layer<ROut, E | StoreError> =>
  Layer.unwrapEffect(
    Effect.map(
      Effect.mapError(
        config,
        (error: ConfigError.ConfigError) =>
          new StoreError({
            operation: "config",
            message: `invalid ${store} configuration: ${error}`,
            cause: error,
          }),
      ),
      layer,
    ),
  )
