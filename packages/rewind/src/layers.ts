/**
 * The embedded default: which adapters `openRewind` wires when the host injects no Layer.
 * SQLite at `<dir>/rewind.db` (in a store directory Rewind made: `<dir>/rewind-data/rewind.db`,
 * guarded from `git clean -x`, with `rewind.db` a link to it; storeLayout.ts) holding the events,
 * the operation journal and the content-addressed blobs (one file, one WAL: a blob is committed
 * before the event that refers to it), a Node Workspace confined to the workspace root, random
 * ids, and the in-memory background task registry.
 * A store directory made before blobs moved into the database keeps its `<dir>/artifacts` blob
 * files: when that directory exists the filesystem blob store is used, so no content goes missing.
 * The store is opened only where it really lies: a default store directory (`<root>/.rewind`) that
 * is a symlink, or a database file (`rewind.db`, `-wal`, `-shm`, `-journal`) that is one, is refused
 * with `StoreRefused` before anything is created or opened (a `dir` the host names is used as
 * named, wherever it lies). A 0-byte `rewind.db` — what a crash can leave — is no store: without
 * `create` it is `StoreMissing`; with `create` it is refused (`empty_file`) rather than replaced,
 * since it may be the remains of a store someone needs to look at. A workspace root that does not
 * exist or is no directory is `WorkspaceUnusable`, and no store is made for one at the home
 * directory or the filesystem root unless asked (`StoreRefused`, `too_broad`), both before anything
 * is created. See docs/reliability.md.
 * On top of whichever services are used (these, or a host's injected Layer), `withEngineServices`
 * adds the engine's own programs-as-services: the fork workspace restore over the Workspace,
 * ArtifactStore and OperationJournal.
 */
import { existsSync, lstatSync, mkdirSync, realpathSync, type Stats, statSync } from "node:fs"
import { join, relative, resolve, sep } from "node:path"
import { FsArtifactStore, NodeWorkspace } from "@rewind/adapter-fs"
import { layerBackgroundTasks } from "@rewind/adapter-memory"
import { SqliteArtifactStore, SqliteSessionStore, type SqliteStoreOptions } from "@rewind/adapter-sqlite"
import type { ArtifactStoreError, StoreError, StoreIncompatible, WorkspaceIoError } from "@rewind/contracts"
import type { ForkWorkspaceRestore, RewindPorts, SessionStateCache, StoreIntegrity } from "@rewind/core"
import {
  IdGenerators,
  layerForkWorkspaceRestore,
  layerPointArtifactCache,
  layerSessionStateCache,
  StoreLocation,
  Workspaces,
} from "@rewind/core"
import { Effect, Layer } from "effect"
import { StoreMissing, StoreRefused, WorkspaceUnusable } from "./errors.js"
import { makeNodeWorkspaces } from "./nodeWorkspaces.js"
import { DATABASE_FILE, GUARDED_DIR, linkRefusal, makeLayout, mendLayout, readLayout } from "./storeLayout.js"
import { STORE_DIR_NAME, storeDirectory, tooBroadRefusal } from "./workspaceRoot.js"

/**
 * The services every facade operation may need: exactly core's ports (`RewindPorts`), so the facade
 * and the declared service can never ask a host for different things. An injected Layer must
 * provide all of them.
 */
export type RewindServices = RewindPorts

/** What the facade runs its programs over: the host's services plus the engine's own. */
export type EngineServices = RewindServices | ForkWorkspaceRestore

/**
 * Adds the engine's services to a Layer of `RewindServices`: the fork workspace restore (so a fork
 * from a checkpoint really writes its files back), built over that Layer's Workspace,
 * ArtifactStore and OperationJournal.
 */
export const withEngineServices = <R, E>(
  services: Layer.Layer<R | RewindServices, E>,
): Layer.Layer<R | EngineServices, E> =>
  // R includes every service the restore needs; TypeScript cannot see that through the generic.
  Layer.provideMerge(layerForkWorkspaceRestore, services) as Layer.Layer<R | EngineServices, E>

/** Where the embedded default keeps its files, relative to the store directory (storeLayout.ts). */
export { DATABASE_FILE, GUARDED_DIR }
/** Blob files of stores made before blobs moved into the database (still read when present). */
export const ARTIFACTS_DIR = "artifacts"
/** The store directory's name under the workspace root when `dir` is not given. */
export const DEFAULT_DIR_NAME = STORE_DIR_NAME

/** Errors opening the embedded default can fail with. */
export type DefaultOpenError =
  | StoreMissing
  | StoreRefused
  | WorkspaceUnusable
  | StoreIncompatible
  | StoreError
  | ArtifactStoreError
  | WorkspaceIoError

export interface DefaultLayerOptions {
  readonly workspaceRoot: string
  /** The store directory; defaults to `<workspaceRoot>/.rewind`. */
  readonly dir?: string
  /** When false, a missing database fails with `StoreMissing` instead of being created (default true). */
  readonly create?: boolean
  /**
   * Create a store even for a workspace at the home directory or the filesystem root, which is
   * otherwise refused (`StoreRefused`, reason `too_broad`): such a workspace captures every project
   * and secret below it at every turn. A store that exists there is opened either way.
   */
  readonly allowBroadWorkspace?: boolean
  /** SQLite options other than the path. */
  readonly sqlite?: Omit<SqliteStoreOptions, "path">
  /**
   * How restored files are flushed (and blob files, for a store that still has `<dir>/artifacts`):
   * `fsync` flushes each file and its directory, `atomic` writes a temp file and renames it
   * without flushing. The default follows `sqlite.synchronous`, so files and the journal that
   * protects them promise the same: `atomic` under `NORMAL` (the default; survives a crash of the
   * process), `fsync` under `FULL` (survives a power cut). Flushing a file under `NORMAL` would
   * buy nothing: its rescue copy and journal entry are themselves not flushed.
   */
  readonly durability?: "fsync" | "atomic"
}

/** Resolves the store directory the embedded default uses for these options (workspaceRoot.ts). */
export { storeDirectory }

const lstat = (path: string): Stats | undefined => lstatSync(path, { throwIfNoEntry: false })

/** Why `root` is no workspace to open (followed through links: a root reached by a link is fine). */
const unusableRoot = (root: string): WorkspaceUnusable | undefined => {
  let stats: Stats | undefined
  try {
    stats = statSync(root, { throwIfNoEntry: false })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code !== "ENOTDIR") {
      return new WorkspaceUnusable({
        reason: "unreadable",
        path: root,
        message: `the workspace root ${root} could not be read (${code ?? String(error)}); nothing was created`,
      })
    }
  }
  if (stats === undefined) {
    return new WorkspaceUnusable({
      reason: "missing",
      path: root,
      message: `the workspace root ${root} does not exist; nothing was created there. Give the directory of an existing project`,
    })
  }
  if (!stats.isDirectory()) {
    return new WorkspaceUnusable({
      reason: "not_a_directory",
      path: root,
      message: `the workspace root ${root} is not a directory; nothing was created. Give the project's directory`,
    })
  }
  return undefined
}

/**
 * Checks the workspace root and where the store lies before anything is opened or created, makes
 * the store's directory and files when `create` asks for it and the workspace is not too broad for
 * one, and answers the database's path (storeLayout.ts: guarded or flat).
 */
const ensureStoreDirectory = (dir: string, options: DefaultLayerOptions) =>
  Effect.suspend((): Effect.Effect<string, StoreMissing | StoreRefused | WorkspaceUnusable> => {
    const unusable = unusableRoot(options.workspaceRoot)
    if (unusable !== undefined) return Effect.fail(unusable)
    const create = options.create ?? true
    // A `dir` the host named is used as named, even through a link.
    const named = options.dir !== undefined
    if (!named && lstat(dir)?.isSymbolicLink() === true) {
      return Effect.fail(linkRefusal(dir, "its store directory"))
    }
    const layout = readLayout(dir)
    if (layout instanceof StoreRefused) return Effect.fail(layout)
    const db = layout.database
    const file = db === undefined ? undefined : lstat(db)
    if (db !== undefined && file?.isFile() === true && file.size === 0) {
      return Effect.fail(
        create
          ? new StoreRefused({
              reason: "empty_file",
              path: db,
              message: `${db} is empty (0 bytes), as an interrupted write can leave it; it was left as it is rather than replaced by a new store. If nothing was meant to be in it, delete it (and any ${DATABASE_FILE}-wal beside it) and run \`rewind init\` again; otherwise restore it from a backup first`,
            })
          : new StoreMissing({
              path: db,
              message: `no Rewind store at ${db}: the file is empty (0 bytes), as an interrupted write can leave it, and was left as it is; delete it and run \`rewind init\`, or restore it from a backup`,
            }),
      )
    }
    if (db !== undefined && file !== undefined) {
      if (layout.kind === "guarded") mendLayout(dir)
      return Effect.succeed(db)
    }
    const missingAt = db ?? join(dir, DATABASE_FILE)
    if (!create) {
      return Effect.fail(
        new StoreMissing({
          path: missingAt,
          message: `no Rewind store at ${missingAt}; run \`rewind init\` in the workspace first`,
        }),
      )
    }
    const tooBroad = options.allowBroadWorkspace === true ? undefined : tooBroadRefusal(options.workspaceRoot)
    if (tooBroad !== undefined)
      return Effect.fail(new StoreRefused({ reason: "too_broad", path: missingAt, message: tooBroad }))
    const made = lstat(dir) === undefined
    mkdirSync(dir, { recursive: true })
    return Effect.succeed(makeLayout(dir, made || layout.kind === "guarded"))
  })

/**
 * Where the store directory lies inside the workspace root, as the protection policy needs it
 * (`StoreLocation`): both resolved through symlinks, so a store reached by another spelling of the
 * same place is still recognised. Empty when the store lies outside the root.
 */
export const storeLocationOf = (workspaceRoot: string, dir: string): ReadonlyArray<string> => {
  const real = (p: string) => {
    try {
      return realpathSync(p)
    } catch {
      return resolve(p)
    }
  }
  const rel = relative(real(workspaceRoot), real(dir))
  // The store is the root itself: its files are protected by name.
  if (rel === "") return [DATABASE_FILE, `${DATABASE_FILE}-wal`, `${DATABASE_FILE}-shm`, ARTIFACTS_DIR]
  if (rel === ".." || rel.startsWith(`..${sep}`) || resolve(rel) === rel) return []
  return [rel.split(sep).join("/")]
}

/** The StoreLocation layer for a store directory (see `storeLocationOf`). */
export const layerStoreLocation = (workspaceRoot: string, dir: string) =>
  Layer.sync(StoreLocation, () => ({ directories: storeLocationOf(workspaceRoot, dir) }))

/**
 * The embedded default layer. It also provides the SQLite store's StoreIntegrity port (what
 * `doctor` checks the database with) and the adapter's own `SqliteStore` service.
 */
export const layerEmbedded = (
  options: DefaultLayerOptions,
): Layer.Layer<
  | EngineServices
  | SessionStateCache
  | StoreLocation
  | Workspaces
  | StoreIntegrity
  | SqliteSessionStore.SqliteStore,
  DefaultOpenError
> => {
  const dir = storeDirectory(options)
  const durability = options.durability ?? (options.sqlite?.synchronous === "FULL" ? "fsync" : "atomic")
  const legacyBlobs = join(dir, ARTIFACTS_DIR)
  const artifacts = Layer.suspend(() =>
    existsSync(legacyBlobs)
      ? FsArtifactStore.layer({ directory: legacyBlobs, durability })
      : SqliteArtifactStore.layer,
  )
  const stores = (database: string) =>
    Layer.mergeAll(
      artifacts,
      NodeWorkspace.layer(options.workspaceRoot, { durability }),
      IdGenerators.layerRandom,
      layerBackgroundTasks,
      layerSessionStateCache(),
      layerPointArtifactCache(),
      layerStoreLocation(options.workspaceRoot, dir),
      // Isolated forks' own trees: opened, prepared and cloned into over Node's filesystem.
      Layer.sync(Workspaces, () =>
        makeNodeWorkspaces({
          hostRoot: options.workspaceRoot,
          durability,
          storeDirectoriesOf: (root) => storeLocationOf(root, dir),
        }),
      ),
    ).pipe(Layer.provideMerge(SqliteSessionStore.layer({ ...options.sqlite, path: database })))
  return Layer.unwrapEffect(
    Effect.map(ensureStoreDirectory(dir, options), (database) => withEngineServices(stores(database))),
  )
}
