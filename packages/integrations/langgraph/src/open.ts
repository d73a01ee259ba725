/**
 * Ways to get a saver: over the embedded SQLite store (one file, the same format as Rewind's own
 * store), over PostgreSQL (many workers sharing one database), over any Layer providing the two
 * ports, or inside an Effect program that already has them. Each `open*` owns the store it opens:
 * `saver.close()` releases it.
 */
import { layerPostgres, type PostgresStoreOptions } from "@rewind/adapter-postgres"
import { SqliteArtifactStore, SqliteSessionStore, type SqliteStoreOptions } from "@rewind/adapter-sqlite"
import type { StoreError, StoreIncompatible } from "@rewind/contracts"
import type { OperationJournal } from "@rewind/core"
import { Cause, Effect, Exit, Layer, ManagedRuntime, Runtime } from "effect"
import { RewindCheckpointSaver, type SaverOptions, type SaverServices } from "./RewindCheckpointSaver.js"

/** A Promise of the effect's value, rejected with its typed error itself (not wrapped). */
const settle = <A, E>(exit: Exit.Exit<A, E>): Promise<A> =>
  Exit.isSuccess(exit) ? Promise.resolve(exit.value) : Promise.reject(Cause.squash(exit.cause))

/** A saver running on a ManagedRuntime of the ports; `close` disposes the runtime. */
export const saverOnRuntime = <E>(
  runtime: ManagedRuntime.ManagedRuntime<SaverServices, E>,
  options: SaverOptions = {},
): RewindCheckpointSaver =>
  new RewindCheckpointSaver(
    { run: (effect) => runtime.runPromiseExit(effect).then(settle), dispose: () => runtime.dispose() },
    options,
  )

/** A saver over a Layer of the ports; the layer is built on first use and released by `close`. */
export const saverFromLayer = <E>(
  layer: Layer.Layer<SaverServices, E>,
  options: SaverOptions = {},
): RewindCheckpointSaver => saverOnRuntime(ManagedRuntime.make(layer), options)

/**
 * The ports over a SQLite file (`:memory:` for a private in-memory store), with the store's
 * operation journal so Rewind's own GC can run on the same layer.
 */
export const layerSqlite = (
  options: SqliteStoreOptions,
): Layer.Layer<SaverServices | OperationJournal, StoreIncompatible | StoreError> =>
  Layer.provideMerge(SqliteArtifactStore.layer, SqliteSessionStore.layer(options))

/** A saver over a SQLite file; compression is the store's own (it compresses its blobs). */
export const openSqliteSaver = async (
  options: SqliteStoreOptions & SaverOptions,
): Promise<RewindCheckpointSaver> => {
  const { scope, serde, compress, ...sqlite } = options
  const saver = saverFromLayer(layerSqlite(sqlite), { scope, serde, compress: compress ?? false })
  await saver.ready()
  return saver
}

/** A saver over PostgreSQL (the schema is created or migrated on open). */
export const openPostgresSaver = async (
  options: PostgresStoreOptions & SaverOptions,
): Promise<RewindCheckpointSaver> => {
  const { scope, serde, compress, ...postgres } = options
  const saver = saverFromLayer(layerPostgres(postgres), { scope, serde, compress })
  await saver.ready()
  return saver
}

/**
 * For an Effect host: a saver running on the ports of the current context. Its `close` does not
 * release them (the host's scope does).
 */
export const makeSaver = (
  options: SaverOptions = {},
): Effect.Effect<RewindCheckpointSaver, never, SaverServices> =>
  Effect.map(
    Effect.runtime<SaverServices>(),
    (runtime) =>
      new RewindCheckpointSaver(
        {
          run: (effect) => Runtime.runPromiseExit(runtime)(effect).then(settle),
          dispose: () => Promise.resolve(),
        },
        options,
      ),
  )
