/**
 * The `Rewind` service as a Layer over a workspace's store: the embedded default (or a host's
 * injected Layer of `RewindServices`), the live engine's watcher when `live` asks for it, the
 * StoreDoctor, and core's `layerRewind` on top. It is what the Promise facade (`openRewind`) runs
 * its runtime over and what the CLI provides to its commands' Effects, so both hosts serve the
 * same service from the same services; every service of the stack stays in the output (the
 * engine's programs a host runs beside the operations, e.g. the CLI's turn views, need them).
 */
import { join } from "node:path"
import { WorkspaceWatcher } from "@rewind/adapter-fs"
import { layerRewind, StoreDoctor, type Workspace, type WorkspaceChanges } from "@rewind/core"
import { Effect, Layer } from "effect"
import { runDoctor } from "./internal/doctor.js"
import {
  ARTIFACTS_DIR,
  type DefaultLayerOptions,
  type DefaultOpenError,
  type EngineServices,
  layerEmbedded,
  type RewindServices,
  storeDirectory,
  storeLocationOf,
  withEngineServices,
} from "./layers.js"
import { watchCookieDirectory } from "./storeLayout.js"

/** How to open Rewind: the embedded default (SQLite + files under `dir`) or an injected Layer. */
export interface OpenRewindOptions<E = never> extends DefaultLayerOptions {
  /**
   * Replaces the embedded default entirely: a Layer providing every service in `RewindServices`.
   * `dir`, `create`, `allowBroadWorkspace`, `sqlite` and `durability` are then ignored, and so are the
   * embedded default's checks of the workspace root (a missing root, one at the home directory).
   */
  readonly layer?: Layer.Layer<RewindServices, E>
  /**
   * The live engine: watch the workspace (`WorkspaceWatcher`, inotify on Linux) so a repeat
   * capture re-examines only what changed since the last one. Off by default: starting the watcher
   * walks the whole tree and holds a watch per directory for as long as the Rewind is open, which a
   * host that opens Rewind for one call (a CLI command, a hook) pays without ever gaining; a host
   * that keeps Rewind open across turns turns it on (`rewind serve` does). Where the watcher cannot
   * run, captures scan in full and `snapshotStatus().watcher` says why. With an injected `layer`,
   * give `live: { cookieDirectory }` (a directory of your store the watcher may write flush cookies
   * in, outside the workspace's tracked files).
   */
  readonly live?: boolean | { readonly cookieDirectory?: string }
}

/** The service and the doctor over the host's services and the engine's (all kept in the output). */
const withService = <R extends EngineServices, E>(
  services: Layer.Layer<R, E>,
  artifactsDirectory: string | undefined,
) => {
  const doctor = Layer.effect(
    StoreDoctor,
    Effect.map(Effect.context<EngineServices>(), (context) => ({
      check: (options) =>
        runDoctor({ ...options, ...(artifactsDirectory === undefined ? {} : { artifactsDirectory }) }).pipe(
          Effect.provide(context),
        ),
    })),
  )
  return Layer.provideMerge(layerRewind, Layer.provideMerge(doctor, services))
}

/** The watcher's layer when `live` asks for one (nothing otherwise). */
const liveLayer = (
  options: { readonly workspaceRoot: string; readonly live?: OpenRewindOptions["live"] },
  dir: string | undefined,
): Layer.Layer<never, never, Workspace> | Layer.Layer<WorkspaceChanges, never, Workspace> => {
  if (options.live === undefined || options.live === false) return Layer.empty
  const named = typeof options.live === "object" ? options.live.cookieDirectory : undefined
  // Decided when built, after the store's layer made its directory (storeLayout.ts).
  const cookieDirectory =
    named !== undefined ? () => named : dir !== undefined ? () => watchCookieDirectory(dir) : undefined
  if (cookieDirectory === undefined)
    throw new TypeError(
      "openRewind: live with an injected layer needs live.cookieDirectory (a directory of your store for the watcher's flush cookies)",
    )
  return Layer.suspend(() =>
    WorkspaceWatcher.layer({
      cookieDirectory: cookieDirectory(),
      storeDirectories: dir === undefined ? [] : storeLocationOf(options.workspaceRoot, dir),
    }),
  )
}

/**
 * The `Rewind` service over the store `options` name, with every service beneath it, and the
 * store directory (undefined when a Layer was injected). Building the layer opens the store: one
 * that cannot be opened fails the build with its typed error. Throws a TypeError when `live` is
 * asked of an injected layer without `live.cookieDirectory`.
 */
export const layerService = <E>(options: OpenRewindOptions<E>) => {
  const dir = options.layer === undefined ? storeDirectory(options) : undefined
  const engine: Layer.Layer<EngineServices, E | DefaultOpenError> =
    options.layer === undefined ? layerEmbedded(options) : withEngineServices(options.layer)
  const services = Layer.provideMerge(liveLayer(options, dir), engine)
  return { dir, layer: withService(services, dir === undefined ? undefined : join(dir, ARTIFACTS_DIR)) }
}

/** The embedded default's `Rewind` layer, typed with what it provides and the errors opening it can fail with. */
export const layerEmbeddedService = (options: Omit<OpenRewindOptions, "layer">) => {
  const dir = storeDirectory(options)
  const services = Layer.provideMerge(liveLayer(options, dir), layerEmbedded(options))
  return withService(services, join(dir, ARTIFACTS_DIR))
}
