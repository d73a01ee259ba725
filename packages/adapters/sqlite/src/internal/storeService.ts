/**
 * The stores over an opened SQLite database (`connection.ts`: the connection and its one permit):
 * the SessionStore and the OperationJournal are the shared SQL ones of `@rewind/kysely-store` with
 * SQLite's backends, beside the artifact store and the integrity check. Every operation holds the
 * connection's one permit (`exclusive`).
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
  makeSqlOperationJournal,
  makeSqlSessionStore,
  type RebuildReport,
  rebuildProjections,
  type SqlStoreBackend,
  STREAM_CONSISTENCY_SQL,
  type StreamConsistencyRow,
  streamConsistencyProblems,
} from "@rewind/kysely-store"
import { Effect } from "effect"
import { makeSqliteArtifactStore } from "./artifactStore.js"
import type { SqliteConnection } from "./connection.js"
import { makeJournalBackend } from "./journalBackend.js"
import { Busy, isBusy, isUniqueViolation, retryBusy, sqliteCode } from "./sqliteErrors.js"
import { EVENT_BATCH, prepareHotStatements } from "./statements.js"
import { makeWriteTransaction } from "./writeTransaction.js"

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

export const makeStoreService = (connection: SqliteConnection): SqliteStoreInternals => {
  const { db, kysely, location, exclusive, noteWritten, storeError } = connection
  const pageSize = Number(db.pragma("page_size", { simple: true }))
  const opened = connection
  const hot = prepareHotStatements(db)
  const inWriteTransaction = makeWriteTransaction(db, kysely)
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
        let bytes = 3 * pageSize
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

    // A `BEGIN IMMEDIATE` transaction on the connection (writeTransaction.ts), under the permit;
    // retried while another process holds the lock.
    writeTransaction: (operation, expected, body) =>
      retryBusy(
        exclusive(
          Effect.tryPromise({
            try: () => inWriteTransaction(body),
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
    operationJournal: makeSqlOperationJournal(makeJournalBackend(connection)),
    artifactStore: artifactStoreOf(connection),
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
}

/** The ArtifactStore over the connection (blobs in the same file, the same permit). */
export const artifactStoreOf = (connection: SqliteConnection) =>
  makeSqliteArtifactStore({
    db: connection.db,
    exclusive: connection.exclusive,
    compression: connection.compression,
    noteWritten: connection.noteWritten,
    busyTimeoutMillis: connection.settings.busyTimeoutMillis,
  })
