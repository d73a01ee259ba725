/** A BackgroundTasks port with nothing running: for tests of programs that rewind a conversation. */
import { BackgroundTasks } from "@rewind/core"
import { Effect, Layer } from "effect"

export const layerNoBackgroundTasks: Layer.Layer<BackgroundTasks> = Layer.succeed(BackgroundTasks, {
  stop: () => Effect.void,
  setGeneration: () => Effect.void,
})
