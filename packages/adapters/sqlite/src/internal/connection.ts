/**
 * One opened SQLite file and what every store over it shares (the session store, its journal, the
 * artifact store): the one permit every call holds (`exclusive`: a single connection, and a
 * Kysely transaction yields between statements, so without it another fiber's statement could run
 * inside someone else's open transaction), WAL checkpoints while the store is idle, the thread that
 * compresses large batches of blobs, and how a failure is worded. The scope closes the threads
 * (the database connection itself closes with `openDatabase`'s scope, after them).
 */
import type { StoreError } from "@rewind/contracts"
import { Effect, type Scope } from "effect"
import {
  BROTLI_QUALITY,
  COMPRESS_FROM_BYTES,
  ENCODING_BROTLI,
  THREAD_BROTLI_QUALITY,
  THREAD_LARGE_FROM_BYTES,
} from "./artifactStore.js"
import { type CheckpointThread, makeCheckpointThread } from "./checkpointThread.js"
import { type CompressionThread, makeCompressionThread } from "./compressionThread.js"
import { type OpenedDatabase, WAL_BACKSTOP_BYTES } from "./openDatabase.js"
import { readOnlyReason, toStoreError } from "./sqliteErrors.js"

/** Half of the WAL backstop (openDatabase.ts): a run of writes asks for a checkpoint well before it. */
const BUSY_CHECKPOINT_BYTES = WAL_BACKSTOP_BYTES / 2
/**
 * An idle period checkpoints only once this much was written since the last checkpoint. A
 * checkpoint that copies the whole WAL makes the next commit start the WAL over, and starting it
 * over writes and syncs its header (SQLite does that even under NORMAL): an fsync inside the next
 * call. Checkpointing after every pause put that fsync in every call a host makes after a pause,
 * a per-edit checkpoint's among them (2–10 ms, most of its wall time). Below this the WAL holds a
 * few MiB at most (SQLite's own threshold is 1,000 pages), so letting it grow costs nothing, and
 * the fsync is paid once per this many bytes instead of once per pause. Durability is untouched:
 * a commit is as durable in the WAL as after a checkpoint (the sync setting decides both).
 */
export const IDLE_CHECKPOINT_FROM_BYTES = 1024 * 1024

export interface SqliteConnection extends OpenedDatabase {
  /** Runs `effect` holding the connection's one permit, uninterruptibly. */
  readonly exclusive: <A, E>(effect: Effect.Effect<A, E>) => Effect.Effect<A, E>
  /** Told how many bytes a call wrote (checkpoints follow the WAL's growth). */
  readonly noteWritten: (bytes: number) => void
  readonly compression: CompressionThread
  readonly storeError: (operation: string) => (error: unknown) => StoreError
  /** Why the file cannot be written by this process now, or undefined. */
  readonly readOnly: Effect.Effect<string | undefined>
}

export const makeConnection = (opened: OpenedDatabase): Effect.Effect<SqliteConnection, never, Scope.Scope> =>
  Effect.gen(function* () {
    const { db, location } = opened
    const permit = yield* Effect.makeSemaphore(1)

    // WAL checkpoints while the store is idle: copying the WAL into the database file (and, under
    // NORMAL, flushing both) is the slowest thing a commit can do, and SQLite does it inside the
    // commit that crosses its threshold. Every call ends by (re)starting the idle timer; when it
    // fires with at least IDLE_CHECKPOINT_FROM_BYTES written since the last checkpoint (see there
    // why not less), a checkpoint is made. With the checkpoint thread, the timer only asks it for
    // one, and so does a run of calls that has written BUSY_CHECKPOINT_BYTES since the last request
    // (the thread works beside the calls, so a long run of writes need not reach SQLite's
    // threshold); without it, a PASSIVE checkpoint (never waits for other connections) runs here
    // when the timer fires with no call running.
    let running = 0
    let idleTimer: ReturnType<typeof setTimeout> | undefined
    const period = opened.idleCheckpointMillis
    let thread: CheckpointThread | undefined =
      period > 0 && opened.backgroundCheckpoints
        ? makeCheckpointThread({
            path: location,
            busyTimeoutMillis: opened.settings.busyTimeoutMillis,
            synchronous: opened.settings.synchronous,
            // Back to checkpoints on this connection while idle.
            onFailure: () => {
              thread = undefined
            },
          })
        : undefined
    // Bytes written (event payloads, stored blobs) since the last request: the WAL grows by about
    // as much, and a checkpoint while calls go on is worth it only once there is a lot to copy.
    let writtenSinceRequest = 0
    const noteWritten = (bytes: number) => {
      writtenSinceRequest += bytes
    }
    const requestCheckpoint = () => {
      writtenSinceRequest = 0
      thread?.request()
    }
    const checkpointIfIdle = () => {
      idleTimer = undefined
      if (writtenSinceRequest < IDLE_CHECKPOINT_FROM_BYTES) return
      if (thread !== undefined) return requestCheckpoint()
      if (running > 0 || !db.open || db.inTransaction) return
      try {
        writtenSinceRequest = 0
        db.pragma("wal_checkpoint(PASSIVE)")
      } catch {
        // Best effort: the next idle period tries again, and SQLite's backstop bounds the WAL.
      }
    }
    const afterCall = () => {
      if (period <= 0) return
      if (thread !== undefined && writtenSinceRequest >= BUSY_CHECKPOINT_BYTES) requestCheckpoint()
      if (idleTimer === undefined) {
        idleTimer = setTimeout(checkpointIfIdle, period)
        // Never what keeps a process alive.
        idleTimer.unref()
      } else idleTimer.refresh()
    }
    // Large batches of blobs are compressed on a thread of their own (see artifactStore.ts).
    const compression = makeCompressionThread({
      compressFromBytes: COMPRESS_FROM_BYTES,
      quality: THREAD_BROTLI_QUALITY,
      largeFromBytes: THREAD_LARGE_FROM_BYTES,
      largeQuality: BROTLI_QUALITY,
      encoding: ENCODING_BROTLI,
    })
    // The thread's connection closes first, so the store's own close is the last and removes the WAL.
    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        clearTimeout(idleTimer)
        await Promise.all([thread?.close(), compression.close()])
      }),
    )

    const exclusive = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
      permit.withPermits(1)(
        Effect.uninterruptible(
          Effect.suspend(() => {
            running++
            return Effect.ensuring(
              effect,
              Effect.sync(() => {
                running--
                afterCall()
              }),
            )
          }),
        ),
      )

    const storeError = (operation: string) => (error: unknown) => toStoreError(operation, error, location)

    return {
      ...opened,
      exclusive,
      noteWritten,
      compression,
      storeError,
      readOnly: Effect.sync(() => readOnlyReason(location)),
    }
  })
