/**
 * The workspace watcher: core's `WorkspaceChanges` port over Linux inotify, through the native
 * module (`native/watch.c`). It keeps a log of the paths that changed, a batch per drain of the
 * inotify queue, and answers a capture with the batches after its cursor.
 *
 * Why inotify through our own module, not `@parcel/watcher` or `fs.watch`: the kernel queues an
 * inotify event inside the system call that made the change, so draining the queue is a complete
 * flush with no delay (a library that debounces waits 50 ms or more on every capture, when the
 * whole capture must take a few); overflow, the watch limit and an unwatchable filesystem are
 * reported to us rather than swallowed; and the module is already built at install time. Node's
 * `fs.watch({ recursive: true })` on Linux walks the tree in JavaScript, one watcher object per
 * directory, and reports no overflow. Linux only: elsewhere the port answers `Unknown` (full scans)
 * and status says why.
 *
 * The flush: before answering, the watcher creates and removes a cookie file in its cookie
 * directory (inside the store) and drains the queue until the cookie's event is in: proof that the
 * instance is alive and everything queued before it has been read. Any doubt makes the answer
 * `Unknown` and the watcher restarts: overflow (`IN_Q_OVERFLOW`), a watch that could not be
 * added, a root moved away, a root whose path now names another directory (its device and inode
 * are compared at every drain: inotify is silent when the old one is still held open), an error of
 * the module, a cookie that does not come back, a change log trimmed past the cursor. The queue is
 * also drained every `drainIntervalMs` between captures so a busy tree does not overflow the
 * kernel's queue while the agent thinks.
 */
import { existsSync, mkdirSync, realpathSync, statSync } from "node:fs"
import {
  type ChangeCursor,
  type WatcherStatus,
  Workspace,
  type WorkspaceChangeSet,
  WorkspaceChanges,
  type WorkspaceChangesService,
} from "@rewind/core"
import { Effect, Layer } from "effect"
import { makeChangeLog } from "./internal/changeLog.js"
import { nativeModule, nativeModuleStatus } from "./internal/nativeModule.js"
import { flushThrough, liveClock, messageOf } from "./internal/watchFlush.js"

/** What the native module answers (`native/watch.c`). */
export interface WatchDrain {
  readonly paths: ReadonlyArray<string>
  readonly cookies: ReadonlyArray<string>
  readonly overflow: boolean
  readonly lost?: string
  readonly watched: number
}

/** The inotify calls, as an interface so tests can inject overflow and errors. */
export interface WatchBackend {
  readonly name: string
  readonly open: (
    root: string,
    skipNames: ReadonlyArray<string>,
    skipRelatives: ReadonlyArray<string>,
    cookieDirectory: string,
  ) => { readonly handle: unknown; readonly watched: number } | { readonly reason: string }
  readonly drain: (handle: unknown) => WatchDrain
  readonly close: (handle: unknown) => void
}

interface NativeWatch {
  readonly watchOpen?: (
    root: string,
    skipNames: ReadonlyArray<string>,
    skipRelatives: ReadonlyArray<string>,
    cookieDirectory: string,
  ) => { readonly handle: unknown; readonly watched: number } | { readonly reason: string }
  readonly watchDrain?: (handle: unknown) => WatchDrain
  readonly watchClose?: (handle: unknown) => void
}

const native = nativeModule as NativeWatch | undefined

/** The native inotify backend, or why there is none on this machine. */
export const inotifyBackend: WatchBackend | { readonly unavailable: string } =
  native?.watchOpen !== undefined && native.watchDrain !== undefined && native.watchClose !== undefined
    ? { name: "inotify", open: native.watchOpen, drain: native.watchDrain, close: native.watchClose }
    : {
        unavailable: !nativeModuleStatus.loaded
          ? `the native module did not load (${nativeModuleStatus.reason})`
          : "no inotify watcher on this platform (Linux only)",
      }

/** Names never watched: never in scope either (protected by name at any depth). */
const UNWATCHED_NAMES: ReadonlySet<string> = new Set([".git", ".rewind"])

export interface WorkspaceWatcherOptions {
  /** The workspace root (resolved through symlinks, as the Node Workspace resolves it). */
  readonly root: string
  /** Where flush cookies are made: a directory of the store (created if missing, its parent must exist). */
  readonly cookieDirectory: string
  /** Store directories inside the root, relative to it: not watched. */
  readonly storeDirectories?: ReadonlyArray<string>
  /** How often the queue is drained between captures. Default 200 ms. */
  readonly drainIntervalMs?: number
  /** How long a flush waits for its cookie. Default 500 ms. */
  readonly flushTimeoutMs?: number
  /** After a failed start, how long before the next attempt. Default 30 s. */
  readonly retryAfterMs?: number
  /** Paths kept in the change log before its oldest batches are dropped. Default 200,000. */
  readonly maxLoggedPaths?: number
  /** The backend (tests inject failures); default the native inotify one. */
  readonly backend?: WatchBackend
}

type State =
  | { readonly kind: "active"; readonly handle: unknown; watched: number; readonly rootId: string }
  | { readonly kind: "inactive"; readonly reason: string; readonly retryAtMs: number }

/**
 * The root directory's identity (device and inode), or undefined when it cannot be stat'ed. The
 * kernel says nothing when a watched root is removed while anything still holds it (a shell's or
 * an agent's working directory, an open descriptor: no IN_DELETE_SELF until the last reference
 * goes), so a root removed and made again at the same path (a fresh clone) would leave the watch
 * on the dead directory, blind to the new one. Every drain compares this.
 */
const rootIdentity = (root: string): string | undefined => {
  try {
    const stats = statSync(root, { bigint: true })
    return stats.isDirectory() ? `${stats.dev}:${stats.ino}` : undefined
  } catch {
    return undefined
  }
}

const ROOT_REPLACED =
  "the workspace root was removed or replaced (its path now names another directory, or none): the watch saw only the old one"

const unknown = (reason: string, cursor: ChangeCursor | undefined): WorkspaceChangeSet => ({
  _tag: "Unknown",
  cursor,
  reason,
})

type LastCapture = { mode: "watched" | "full"; reason?: string }

const statusOf = (
  state: State,
  backend: WatchBackend | { readonly unavailable: string },
  lastCapture: LastCapture | undefined,
): WatcherStatus =>
  state.kind === "active"
    ? {
        active: true,
        backend: (backend as WatchBackend).name,
        watchedDirectories: state.watched,
        ...(lastCapture === undefined ? {} : { lastCapture }),
      }
    : { active: false, reason: state.reason, ...(lastCapture === undefined ? {} : { lastCapture }) }

/** The watcher service; `close` stops it (the layer calls it when its scope closes). */
export const makeWorkspaceWatcher = (
  options: WorkspaceWatcherOptions,
): WorkspaceChangesService & { readonly close: () => void } => {
  const backend: WatchBackend | { readonly unavailable: string } = options.backend ?? inotifyBackend
  const drainEvery = options.drainIntervalMs ?? 200
  const flushTimeout = options.flushTimeoutMs ?? 500
  const retryAfter = options.retryAfterMs ?? 30_000
  const maxLogged = options.maxLoggedPaths ?? 200_000
  let root = options.root
  try {
    root = realpathSync(options.root)
  } catch {
    // Left as given: the open below reports what is wrong with it.
  }
  let state: State = { kind: "inactive", reason: "not started", retryAtMs: 0 }
  const log = makeChangeLog(maxLogged)
  let cookies = 0
  let lastCapture: LastCapture | undefined

  const stop = (reason: string, retryAtMs: number) => {
    if (state.kind === "active") {
      try {
        ;(backend as WatchBackend).close(state.handle)
      } catch {
        // Closing is best effort: the handle is dropped either way.
      }
    }
    state = { kind: "inactive", reason, retryAtMs }
    log.clear()
  }

  const start = (nowMs: number) => {
    if ("unavailable" in backend) {
      state = { kind: "inactive", reason: backend.unavailable, retryAtMs: Number.POSITIVE_INFINITY }
      return
    }
    try {
      // Only the last component: the store directory itself is the store's to create.
      if (!existsSync(options.cookieDirectory)) mkdirSync(options.cookieDirectory)
      const opened = backend.open(
        root,
        [...UNWATCHED_NAMES],
        options.storeDirectories ?? [],
        options.cookieDirectory,
      )
      if ("reason" in opened) {
        state = { kind: "inactive", reason: opened.reason, retryAtMs: nowMs + retryAfter }
        return
      }
      // Taken after the watch is on: a root replaced in between fails the first drain's check.
      const rootId = rootIdentity(root)
      state = { kind: "active", handle: opened.handle, watched: opened.watched, rootId: rootId ?? "" }
      if (rootId === undefined) {
        stop(ROOT_REPLACED, nowMs + retryAfter)
        return
      }
      // Nothing before this moment is in the log: earlier cursors are unknown.
      log.restart()
    } catch (e) {
      state = {
        kind: "inactive",
        reason: `the watcher failed to start: ${messageOf(e)}`,
        retryAtMs: nowMs + retryAfter,
      }
    }
  }

  /** Drains the queue into the log; the names of cookies seen. */
  const drain = (): ReadonlyArray<string> => {
    if (state.kind !== "active") return []
    let answer: WatchDrain
    try {
      answer = (backend as WatchBackend).drain(state.handle)
    } catch (e) {
      stop(`the watcher failed: ${messageOf(e)}`, 0)
      return []
    }
    if (answer.overflow) {
      stop("the inotify queue overflowed (fs.inotify.max_queued_events): events were lost", 0)
      return []
    }
    if (answer.lost !== undefined) {
      stop(answer.lost, 0)
      return []
    }
    if (rootIdentity(root) !== state.rootId) {
      stop(ROOT_REPLACED, 0)
      return []
    }
    state.watched = answer.watched
    log.append(answer.paths)
    return answer.cookies
  }

  const timer = setInterval(drain, drainEvery)
  timer.unref()

  const flush = Effect.suspend(() =>
    flushThrough(`cookie-${process.pid}-${++cookies}`, {
      cookieDirectory: options.cookieDirectory,
      flushTimeout,
      drain,
      active: () => state.kind === "active",
      stop,
    }),
  )

  const changesSince = (since: ChangeCursor | undefined) =>
    Effect.gen(function* () {
      const now = yield* liveClock.currentTimeMillis
      let restarted: string | undefined
      if (state.kind === "inactive") {
        if (now < state.retryAtMs) return unknown(`the watcher is not running: ${state.reason}`, undefined)
        const why = state.reason
        start(now)
        const started = state as State
        if (started.kind === "inactive")
          return unknown(`the watcher is not running: ${started.reason}`, undefined)
        restarted = why
      }
      if (!(yield* flush)) {
        return unknown(
          state.kind === "inactive" ? state.reason : "the watcher could not be flushed",
          undefined,
        )
      }
      const seq = log.cursor()
      if (restarted !== undefined) return unknown(`the watcher (re)started (${restarted})`, seq)
      if (since === undefined) return unknown("no earlier sync to compare with", seq)
      if (!log.reaches(since))
        return unknown("the change log no longer reaches back to the last capture", seq)
      return { _tag: "Changed", cursor: seq, paths: log.pathsAfter(since) } satisfies WorkspaceChangeSet
    })

  const status = Effect.sync(() => statusOf(state, backend, lastCapture))

  start(0)
  return {
    changesSince,
    status,
    unwatchedNames: UNWATCHED_NAMES,
    noteCapture: (mode, reason) =>
      Effect.sync(() => {
        lastCapture = reason === undefined ? { mode } : { mode, reason }
      }),
    close: () => {
      clearInterval(timer)
      stop("stopped", Number.POSITIVE_INFINITY)
    },
  }
}

/**
 * The watcher as the `WorkspaceChanges` layer of the Workspace it is given (its root), stopped when
 * the layer's scope closes. Built after the Workspace and store layers, so the store directory
 * exists when the cookie directory is made in it.
 */
export const layer = (
  options: Omit<WorkspaceWatcherOptions, "root">,
): Layer.Layer<WorkspaceChanges, never, Workspace> =>
  Layer.scoped(
    WorkspaceChanges,
    Effect.flatMap(Workspace, (workspace) =>
      Effect.acquireRelease(
        Effect.sync(() => makeWorkspaceWatcher({ ...options, root: workspace.root })),
        (watcher) => Effect.sync(watcher.close),
      ),
    ),
  )
