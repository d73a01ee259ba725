/**
 * PostgreSQL's backend for the shared SQL session store: the concurrency model lives here.
 *
 * - Transactions run at READ COMMITTED on a pooled connection. A write first locks the `streams`
 *   row of every stream it names (`SELECT … FOR UPDATE`, in session-id order so two commits over
 *   the same streams take their locks in the same order), then checks the expected versions
 *   against what it locked: a writer on another machine that committed first is seen, one that is
 *   still writing makes this one wait (up to `lock_timeout`).
 * - A stream that does not exist yet has no row to lock. Two writers creating it both insert its
 *   `streams` row; the primary key makes the second wait for the first and then fail with a unique
 *   violation. The same goes for the `(session_id, sequence)` key of `events`, the contiguity
 *   trigger, and the `(session_id, command_id)` key of `command_facts`: such a failure aborts the
 *   transaction, so it is reported as a `WriteCollision` and the shared store answers it, after the
 *   rollback, with the VersionConflict or CommandAlreadyRecorded it means. No event is lost: the
 *   losing transaction wrote nothing.
 * - A deadlock (40P01) or serialization failure (40001) runs the whole transaction again, a few
 *   times, with jittered pauses.
 * - A transaction is uninterruptible once started: an interrupted caller still learns whether it
 *   committed, instead of walking away from a commit in flight.
 *
 * Events of one append go in one `INSERT … SELECT FROM unnest(…)` statement per thousand rows:
 * a round trip per chunk, not per event.
 */
import { type SessionId, StoreError } from "@rewind/contracts"
import { decodeRowObject, type SqlStoreBackend, type StoreTables, WriteCollision } from "@rewind/kysely-store"
import { Effect } from "effect"
import { type Kysely, sql } from "kysely"
import type { PostgresDatabaseService } from "../PostgresDatabase.js"
import { isCollision, isRetryable, Retryable, retryRetryable, toStoreError } from "./pgErrors.js"

const INSERT_CHUNK = 1_000

export const makeSessionBackend = (database: PostgresDatabaseService): SqlStoreBackend => {
  const { kysely, location, options } = database
  // The shared store only touches the session tables, a part of PostgresTables.
  const db = kysely as unknown as Kysely<StoreTables>

  const lockVersions = async (trx: Kysely<StoreTables>, ids: ReadonlyArray<SessionId>) => {
    if (ids.length === 0) return []
    const sorted = [...new Set(ids)].sort()
    const rows = await trx
      .selectFrom("streams")
      .select(["session_id", "version"])
      .where("session_id", sorted.length === 1 ? "=" : "in", sorted.length === 1 ? sorted[0]! : sorted)
      .orderBy("session_id")
      .forUpdate()
      .execute()
    const versions = new Map(rows.map((r) => [r.session_id, r.version]))
    return ids.map((id) => versions.get(id) ?? 0)
  }

  const backend: SqlStoreBackend = {
    kysely: db,
    statements: {
      lockVersions,

      writeRows: async (trx, { request, rows }, actual) => {
        const id = request.sessionId
        const version = actual + rows.length
        if (actual === 0) {
          await trx
            .insertInto("streams")
            .values({ session_id: id, version, updated_at: request.at })
            .execute()
        } else {
          const moved = await trx
            .updateTable("streams")
            .set({ version, updated_at: request.at })
            .where("session_id", "=", id)
            .where("version", "=", actual)
            .executeTakeFirst()
          if (moved.numUpdatedRows !== 1n) {
            throw new StoreError({
              operation: "append",
              message: `the streams row of ${id} changed while it was locked at ${location}`,
            })
          }
        }
        const positions: Array<number> = []
        for (let start = 0; start < rows.length; start += INSERT_CHUNK) {
          const chunk = rows.slice(start, start + INSERT_CHUNK)
          const inserted = await sql<{ sequence: number; position: number }>`
            insert into events (session_id, sequence, type, version, payload, at)
            select ${id}, ${actual + start}::integer + u.ord::integer, u.type, u.version, u.payload, ${request.at}::bigint
            from unnest(${chunk.map((r) => r.type)}::text[], ${chunk.map((r) => r.version)}::integer[],
                        ${chunk.map((r) => r.payload)}::text[]) with ordinality as u(type, version, payload, ord)
            order by u.ord
            returning sequence, position`.execute(trx)
          const bySequence = inserted.rows.sort((a, b) => a.sequence - b.sequence)
          for (const row of bySequence) positions.push(row.position)
        }
        return positions
      },

      readStream: async (sessionId, afterSequence) => {
        const rows = await db
          .selectFrom("events")
          .select(["sequence", "type", "version", "payload", "at"])
          .where("session_id", "=", sessionId)
          .where("sequence", ">", afterSequence)
          .orderBy("sequence")
          .execute()
        return rows.map((row) => decodeRowObject(sessionId, row))
      },

      version: async (sessionId) =>
        (
          await db
            .selectFrom("streams")
            .select("version")
            .where("session_id", "=", sessionId)
            .executeTakeFirst()
        )?.version ?? 0,

      settledVersion: async (sessionId) => {
        const result = await sql<{ version: number }>`
          select greatest(
            coalesce((select version from streams where session_id = ${sessionId}), 0),
            coalesce((select max(sequence) from events where session_id = ${sessionId}), 0)
          ) as version`.execute(db)
        return result.rows[0]?.version ?? 0
      },
    },

    writeTransaction: (operation, expected, body) =>
      retryRetryable(
        Effect.uninterruptible(
          Effect.tryPromise({
            try: () => db.transaction().execute(body),
            catch: (error) =>
              expected(error) || error instanceof StoreError
                ? error
                : isRetryable(error)
                  ? new Retryable({ operation, cause: error })
                  : isCollision(error)
                    ? new WriteCollision({ operation, cause: error })
                    : toStoreError(operation, error, location),
          }),
        ),
        options.maxTransactionAttempts,
        location,
      ),

    query: (operation, expected, run) =>
      Effect.tryPromise({
        try: async () => run(),
        catch: (error) => (expected(error) ? error : toStoreError(operation, error, location)),
      }),
  }
  return backend
}
