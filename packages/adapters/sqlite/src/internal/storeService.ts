/**
 * The SessionStore over an opened SQLite database: the shared SQL store of `@rewind/kysely-store`
 * with SQLite's backend. Every operation holds the store's one permit: there is a single
 * connection, and a Kysely transaction yields between statements, so without the permit another
 * fiber's statement could run inside (and see) someone else's open transaction.
 *
 * Writes run inside `BEGIN IMMEDIATE`, so reading a stream's version there already excludes every
 * other writer. The schema backs up the version check: a (session, sequence) unique constraint and
 * a trigger that refuses gaps, so a stale `streams` projection cannot fork a stream; SQLite keeps
 * the transaction open after such a constraint error, so its meaning is decided right there.
 */
import { type EventDecodeError, StoreError, VersionConflict } from "@rewind/contracts"
import type {
  ArtifactStoreService,
  OperationJournalService,
  SessionStoreService,
  StoreIntegrityReport,
} from "@rewind/core"
import {
  decodeRow,
  makeSqlSessionStore,
  type RebuildReport,
  rebuildProjections,
  type SqlStoreBackend,
  STREAM_CONSISTENCY_SQL,
  type StreamConsistencyRow,
  streamConsistencyProblems,
} from "@rewind/kysely-store"
import { Effect, type Scope } from "effect"
import {
  BROTLI_QUALITY,
  COMPRESS_FROM_BYTES,
  ENCODING_BROTLI,
  makeSqliteArtifactStore,
} from "./artifactStore.js"
import { type CheckpointThread, makeCheckpointThread } from "./checkpointThread.js"
import { makeCompressionThread } from "./compressionThread.js"
import { type OpenedDatabase, WAL_BACKSTOP_PAGES } from "./openDatabase.js"
import { makeSqliteOperationJournal } from "./operationJournal.js"
import { Busy, isBusy, isUniqueViolation, retryBusy, sqliteCode, toStoreError } from "./sqliteErrors.js"
import { EVENT_BATCH, prepareHotStatements } from "./statements.js"

/** Half of the WAL backstop (openDatabase.ts): a run of writes asks for a checkpoint well before it. */
const BUSY_CHECKPOINT_BYTES = (WAL_BACKSTOP_PAGES * 4096) / 2

/**
 * `integrity_check` and `foreign_key_check` findings, and streams that disagree with their events
 * (the StoreIntegrity port's report).
 */
export type IntegrityReport = StoreIntegrityReport

export interface SqliteStoreInternals {
  readonly sessionStore: SessionStoreService
  readonly rebuildProjections: Effect.Effect<RebuildReport, StoreError | EventDecodeError>
  readonly integrityCheck: Effect.Effect<IntegrityReport, StoreError>
  readonly operationJournal: OperationJournalService
  readonly artifactStore: ArtifactStoreService
}

export const makeStoreService = (
  opened: OpenedDatabase,
): Effect.Effect<SqliteStoreInternals, never, Scope.Scope> =>
  Effect.gen(function* () {
    const { db, kysely, location } = opened
    const permit = yield* Effect.makeSemaphore(1)
    const hot = prepareHotStatements(db)

    // WAL checkpoints while the store is idle: copying the WAL into the database file (and, under
    // NORMAL, flushing both) is the slowest thing a commit can do, and SQLite does it inside the
    // commit that crosses its threshold. Every call ends by (re)starting the idle timer. With the
    // checkpoint thread, the timer only asks it for a checkpoint, and so does a run of calls that
    // has written BUSY_CHECKPOINT_BYTES since the last request (the thread works beside the calls,
    // so a long run of writes need not reach SQLite's threshold); without it, a PASSIVE checkpoint
    // (never waits for other connections) runs here when the timer fires with no call running.
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
      if (thread !== undefined) return requestCheckpoint()
      if (running > 0 || !db.open || db.inTransaction) return
      try {
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
      quality: BROTLI_QUALITY,
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

    const backend: SqlStoreBackend = {
      kysely,
      statements: {
        // Inside `BEGIN IMMEDIATE` every other writer is already locked out.
        lockVersions: async (_trx, sessionIds) => sessionIds.map((id) => hot.streamVersion.get(id) ?? 0),

        writeRows: async (_trx, { request, rows }, actual) => {
          const id = request.sessionId
          const version = actual + rows.length
          if (actual === 0) hot.insertStream.run(id, version, request.at)
          else hot.advanceStream.run(version, request.at, id, actual)
          // Whole batches go through the multi-row statement, the rest row by row; the insert
          // trigger checks each row's sequence in both cases.
          // A commit writes whole pages: the stream's row, the last events page and its index page
          // at least, however small the events.
          let bytes = 3 * 4096
          for (const row of rows) bytes += row.payload.length
          noteWritten(bytes)
          const batchParams: Array<string | number> = new Array(EVENT_BATCH * 6)
          let i = 0
          try {
            for (; i + EVENT_BATCH <= rows.length; i += EVENT_BATCH) {
              for (let j = 0; j < EVENT_BATCH; j++) {
                const row = rows[i + j]!
                const k = j * 6
                batchParams[k] = id
                batchParams[k + 1] = actual + i + j + 1
                batchParams[k + 2] = row.type
                batchParams[k + 3] = row.version
                batchParams[k + 4] = row.payload
                batchParams[k + 5] = request.at
              }
              hot.insertEvents.run(...batchParams)
            }
            for (; i < rows.length; i++) {
              const row = rows[i]!
              hot.insertEvent.run(id, actual + i + 1, row.type, row.version, row.payload, request.at)
            }
          } catch (error) {
            const code = sqliteCode(error)
            if (!isUniqueViolation(error) && code !== "SQLITE_CONSTRAINT_TRIGGER") throw error
            // The projection said `actual`; the events say the stream is longer: it moved on.
            const last = hot.lastSequence.get(id) ?? 0
            if (last > actual) {
              throw new VersionConflict({
                sessionId: id,
                expectedVersion: request.expectedVersion,
                actualVersion: last,
              })
            }
            throw new StoreError({
              operation: "append",
              message: `the streams projection of ${location} is out of step with its events (${String(error)}); run rebuildProjections`,
              cause: error,
            })
          }
          // Read back rather than derived from rowids: exact whatever rowids SQLite picked.
          return hot.positions.all(id, actual + 1, actual + rows.length)
        },

        readStream: (sessionId, afterSequence) =>
          hot.readEvents.all(sessionId, afterSequence).map((row) => decodeRow(sessionId, row)),
        version: (sessionId) => hot.streamVersion.get(sessionId) ?? 0,
        settledVersion: (sessionId) =>
          Math.max(hot.streamVersion.get(sessionId) ?? 0, hot.lastSequence.get(sessionId) ?? 0),
      },

      // A `BEGIN IMMEDIATE` transaction through Kysely; retried while another process holds the lock.
      writeTransaction: (operation, expected, body) =>
        retryBusy(
          exclusive(
            Effect.tryPromise({
              try: () => kysely.transaction().execute(body),
              catch: (error) =>
                expected(error) || error instanceof StoreError
                  ? error
                  : isBusy(error)
                    ? new Busy({ operation, cause: error })
                    : storeError(operation)(error),
            }),
          ),
          opened.settings.busyTimeoutMillis,
        ),

      // A read rarely finds the database locked (WAL), but SQLite's own wait is short: retried.
      query: (operation, expected, run) => {
        // The same answer whether the query throws or its promise rejects.
        const classify = (error: unknown) =>
          expected(error)
            ? error
            : isBusy(error)
              ? new Busy({ operation, cause: error })
              : storeError(operation)(error)
        return retryBusy(
          exclusive(
            Effect.try({ try: run, catch: classify }).pipe(
              Effect.flatMap((value) =>
                value instanceof Promise
                  ? Effect.tryPromise({ try: () => value, catch: classify })
                  : Effect.succeed(value),
              ),
            ),
          ),
          opened.settings.busyTimeoutMillis,
        )
      },
    }

    return {
      sessionStore: makeSqlSessionStore(backend),
      rebuildProjections: rebuildProjections(backend),
      operationJournal: makeSqliteOperationJournal(db, exclusive, storeError),
      artifactStore: makeSqliteArtifactStore({
        db,
        exclusive,
        compression,
        noteWritten,
        busyTimeoutMillis: opened.settings.busyTimeoutMillis,
      }),
      integrityCheck: exclusive(
        Effect.try({
          try: () => {
            const integrity = (db.pragma("integrity_check") as Array<{ integrity_check: string }>).map(
              (r) => r.integrity_check,
            )
            const foreignKeys = (db.pragma("foreign_key_check") as Array<Record<string, unknown>>).map(
              (r) => `foreign key: ${JSON.stringify(r)}`,
            )
            // The streams against their events, as every SQL store checks them.
            const streams = streamConsistencyProblems(
              db.prepare(STREAM_CONSISTENCY_SQL).all() as Array<StreamConsistencyRow>,
            )
            const problems = [...integrity.filter((p) => p !== "ok"), ...foreignKeys, ...streams]
            return { ok: problems.length === 0, problems }
          },
          catch: storeError("integrityCheck"),
        }),
      ),
    }
  })
