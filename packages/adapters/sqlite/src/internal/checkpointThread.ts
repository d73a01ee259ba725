/**
 * WAL checkpoints on a worker thread with its own connection to the store file. A checkpoint copies
 * the WAL's pages into the database file and syncs it; run by the store's connection it blocks
 * every call behind it (SQLite's own runs inside the commit that crosses its threshold, which is
 * how a fork's commit came to take ten times its usual time). On a second connection it runs
 * beside the store's calls: WAL lets one checkpointer work while the writer appends, and a PASSIVE
 * checkpoint never waits for anyone.
 *
 * The thread starts on the first request (a store that closes sooner never pays for it), is
 * unref'd (never what keeps a process alive), and closes its connection before the store's
 * connection closes, so the store's close stays the last one and removes the WAL as before.
 * Requests are few (the store asks at most once per idle period) and coalesce in the thread.
 */
import { createRequire } from "node:module"
import type { Worker } from "node:worker_threads"
import { endWorker, startEvalWorker } from "./evalWorker.js"

export interface CheckpointThread {
  /** Asks for a PASSIVE checkpoint soon; returns at once. */
  readonly request: () => void
  /** Checkpoints requested and completed so far, and whether any failed (tests, diagnostics). */
  readonly stats: () => { readonly requested: number; readonly completed: number; readonly failed: boolean }
  /** Closes the thread's connection and waits for the thread to end (bounded). */
  readonly close: () => Promise<void>
}

export interface CheckpointThreadOptions {
  readonly path: string
  readonly busyTimeoutMillis: number
  readonly synchronous: string
  /** Called once if the thread cannot start or dies, so the store can checkpoint itself again. */
  readonly onFailure: (error: unknown) => void
}

// CommonJS, evaluated in the worker: `require` resolves the same driver the store uses. The shared
// counters ([requested, completed, failed]) coalesce requests: a message that arrives while the
// checkpoint it asks for has already been run covers nothing new and is skipped.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads")
const counters = new Int32Array(workerData.counters)
const Database = require(workerData.driver)
const db = new Database(workerData.path, { fileMustExist: true })
db.pragma("busy_timeout = " + workerData.busyTimeoutMillis)
db.pragma("synchronous = " + workerData.synchronous)
let done = 0
parentPort.on("message", (message) => {
  if (message === "close") {
    db.close()
    parentPort.close()
    return
  }
  const asked = Atomics.load(counters, 0)
  if (asked <= done) return
  done = asked
  try {
    db.pragma("wal_checkpoint(PASSIVE)")
    Atomics.add(counters, 1, 1)
  } catch {
    // Best effort: the next request tries again, and SQLite's own threshold bounds the WAL.
    Atomics.add(counters, 2, 1)
  }
})
`

export const makeCheckpointThread = (options: CheckpointThreadOptions): CheckpointThread => {
  // Shared rather than messaged back: a host running a long synchronous stretch of calls may not
  // return to its event loop for a while, and requests must not wait on replies.
  const counters = new Int32Array(new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT))
  let worker: Worker | undefined
  let failed = false
  let closing = false

  const fail = (error: unknown) => {
    if (failed) return
    failed = true
    worker = undefined
    if (!closing) options.onFailure(error)
  }

  const start = () => {
    const started = startEvalWorker(WORKER_SOURCE, {
      driver: createRequire(import.meta.url).resolve("better-sqlite3"),
      counters: counters.buffer,
      path: options.path,
      busyTimeoutMillis: options.busyTimeoutMillis,
      synchronous: options.synchronous,
    })
    started.on("error", fail)
    started.on("exit", (code) => {
      if (!closing) fail(new Error(`the checkpoint thread exited with code ${code}`))
    })
    return started
  }

  return {
    request: () => {
      if (failed || closing) return
      if (worker === undefined) {
        try {
          worker = start()
        } catch (error) {
          fail(error)
          return
        }
      }
      Atomics.add(counters, 0, 1)
      worker.postMessage("checkpoint")
    },
    stats: () => ({
      requested: Atomics.load(counters, 0),
      completed: Atomics.load(counters, 1),
      failed: failed || Atomics.load(counters, 2) > 0,
    }),
    close: async () => {
      closing = true
      const running = worker
      worker = undefined
      // Asked to close, so its connection closes before the store's (which then removes the WAL).
      if (running !== undefined) await endWorker(running, "close")
    },
  }
}
