/**
 * `layerRewind`: the `Rewind` service over the ports a host supplies, with every engine service
 * built inside — the fork workspace restore, the session state cache, the point artifact
 * cache and the tree stat cache — so a host that provides only the ports gets the same safe engine the facade runs. GC
 * marks the operation journal's live content itself (`pointGc.ts`), so no host can forget it.
 *
 * Every operation goes through one door (`door.ts`); which program answers each is in
 * `programs.ts`. Optional host services (`StoreLocation`, `StoreDoctor`, `FileRewindSettings`) are
 * read from the context the layer is built in.
 */
import { Effect, Layer } from "effect"
import { layerForkWorkspaceRestore } from "../fork/forkWorkspaceRestore.js"
import { layerSessionStateCache } from "../session/SessionStateCache.js"
import { layerPointArtifactCache } from "../snapshot/pointArtifactCache.js"
import { layerTreeStatCache } from "../snapshot/treeStatCache.js"
import { Rewind, type RewindApi } from "./api.js"
import { type Engine, makeDoor, type RewindPorts } from "./door.js"
import {
  fileOperations,
  forkOperations,
  mergeOperations,
  pointAndStoreOperations,
  sessionOperations,
} from "./programs.js"

export type { RewindPorts } from "./door.js"

/** The engine's own services, over the ports. */
const layerEngine = Layer.mergeAll(
  layerForkWorkspaceRestore,
  layerSessionStateCache(),
  layerPointArtifactCache(),
  layerTreeStatCache(),
)

const makeRewind = Effect.gen(function* () {
  const answer = makeDoor(yield* Effect.context<Engine>())
  const api: RewindApi = {
    ...sessionOperations(answer),
    ...fileOperations(answer),
    ...forkOperations(answer),
    ...pointAndStoreOperations(answer),
    ...mergeOperations(answer),
  }
  return api
})

/**
 * The `Rewind` service over the ports (`RewindPorts`); the engine's own services are built inside.
 * Provide `StoreLocation`, `StoreDoctor` or `FileRewindSettings` beside the ports to use them.
 */
export const layerRewind: Layer.Layer<Rewind, never, RewindPorts> = Layer.effect(Rewind, makeRewind).pipe(
  Layer.provide(layerEngine),
)
