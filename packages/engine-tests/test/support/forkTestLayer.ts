// The layer fork tests run on: a fresh memory store per test, sequential ids, a stepping clock
// (so birth times are ordered, which subagent carry relies on) and a recording restore port.

import { layerBackgroundTasks, MemorySessionStore } from "@rewind/adapter-memory"
import { IdGenerators } from "@rewind/core"
import { layerRecordingRestore, layerSteppingClock } from "@rewind/testkit"
import { Effect, Layer } from "effect"

export const makeForkTestLayer = (idSeed = "x") =>
  Layer.mergeAll(
    MemorySessionStore.layer,
    layerBackgroundTasks,
    IdGenerators.layerSequential(idSeed),
    layerRecordingRestore,
    layerSteppingClock(),
  )

export type ForkTestServices = Layer.Layer.Success<ReturnType<typeof makeForkTestLayer>>

export const runFork = <A, E>(effect: Effect.Effect<A, E, ForkTestServices>) =>
  Effect.provide(effect, makeForkTestLayer())
