/**
 * The SessionStore over an opened database. Every operation holds the store's one permit: there
 * is a single connection, and a Kysely transaction yields between statements, so without the permit
 * another fiber's statement could run inside (and see) someone else's open transaction.
 *
 * Writes: events are encoded before the transaction starts; inside `BEGIN IMMEDIATE` the expected
 * versions are checked, then command facts, then everything is written. Any failure rolls the
 * whole transaction back. The schema backs up the version check: a (session, sequence) unique
 * constraint and a trigger that refuses gaps, so a stale `streams` projection cannot fork a stream.
 */
import {
  CommandAlreadyRecorded,
  EventDecodeError,
  type SessionId,
  type SessionKind,
  StoreError,
  VersionConflict,
} from "@rewind/contracts"
import type {
  AppendRequest,
  CommandFact,
  OperationJournalService,
  SessionStoreService,
  SessionSummary,
} from "@rewind/core"
import { Effect, Option } from "effect"
import type { Kysely } from "kysely"
import { decodeRow, decodeStored, type EncodedRow, encodeRows } from "./eventRows.js"
import type { OpenedDatabase } from "./openDatabase.js"
import { makeSqliteOperationJournal } from "./operationJournal.js"
import { type RebuildReport, rebuildProjectionTables, upsertSession } from "./projections.js"
import { Busy, isBusy, isUniqueViolation, retryBusy, sqliteCode, toStoreError } from "./sqliteErrors.js"
import { prepareHotStatements } from "./statements.js"
import type { StoreTables } from "./tables.js"

export interface IntegrityReport {
  readonly ok: boolean
  /** `integrity_check` and `foreign_key_check` findings; empty when ok. */
  readonly problems: ReadonlyArray<string>
}

export interface SqliteStoreInternals {
  readonly sessionStore: SessionStoreService
  readonly rebuildProjections: Effect.Effect<RebuildReport, StoreError | EventDecodeError>
  readonly integrityCheck: Effect.Effect<IntegrityReport, StoreError>
  readonly operationJournal: OperationJournalService
}

/** Which typed failures a transaction body may throw on purpose; anything else is a StoreError. */
type Expected<E> = (error: unknown) => error is E

const isVersionConflict = (error: unknown): error is VersionConflict => error instanceof VersionConflict
const isCommitFailure = (error: unknown): error is VersionConflict | CommandAlreadyRecorded =>
  error instanceof VersionConflict || error instanceof CommandAlreadyRecorded
const isDecodeError = (error: unknown): error is EventDecodeError => error instanceof EventDecodeError

interface PreparedAppend {
  readonly request: AppendRequest
  readonly rows: ReadonlyArray<EncodedRow>
}

export const makeStoreService = (opened: OpenedDatabase): Effect.Effect<SqliteStoreInternals> =>
  Effect.gen(function* () {
    const { db, kysely, location } = opened
    const permit = yield* Effect.makeSemaphore(1)
    const hot = prepareHotStatements(db)

    const exclusive = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
      permit.withPermits(1)(Effect.uninterruptible(effect))

    const storeError = (operation: string) => (error: unknown) => toStoreError(operation, error, location)

    /** A `BEGIN IMMEDIATE` transaction through Kysely; retried while another process holds the lock. */
    const writeTransaction = <A, E>(
      operation: string,
      expected: Expected<E>,
      body: (trx: Kysely<StoreTables>) => Promise<A>,
    ): Effect.Effect<A, E | StoreError> =>
      retryBusy(
        exclusive(
          Effect.tryPromise({
            try: () => kysely.transaction().execute(body),
            catch: (error): E | StoreError | Busy =>
              expected(error) || error instanceof StoreError
                ? error
                : isBusy(error)
                  ? new Busy({ operation, cause: error })
                  : storeError(operation)(error),
          }),
        ),
      )

    /** Encoding happens before the transaction: a bad event never holds the write lock. */
    const prepare = (operation: string, request: AppendRequest): Effect.Effect<PreparedAppend, StoreError> =>
      Effect.try({
        try: () => {
          if (!Number.isSafeInteger(request.at) || request.at < 0) {
            throw new StoreError({
              operation,
              message: `append time must be a non-negative integer, got ${request.at}`,
            })
          }
          return { request, rows: encodeRows(request.events) }
        },
        catch: (error) =>
          error instanceof StoreError
            ? error
            : new StoreError({
                operation,
                message: `could not encode event: ${String(error)}`,
                cause: error,
              }),
      })

    const checkVersion = ({ request }: PreparedAppend): number => {
      const actual = hot.streamVersion.get(request.sessionId) ?? 0
      if (actual !== request.expectedVersion) {
        throw new VersionConflict({
          sessionId: request.sessionId,
          expectedVersion: request.expectedVersion,
          actualVersion: actual,
        })
      }
      return actual
    }

    const writeEvents = async (
      trx: Kysely<StoreTables>,
      { request, rows }: PreparedAppend,
      actual: number,
    ) => {
      if (rows.length === 0) return actual
      const id = request.sessionId
      const version = actual + rows.length
      if (actual === 0) hot.insertStream.run(id, version, request.at)
      else hot.advanceStream.run(version, request.at, id, actual)
      const created: Array<{ position: number; row: EncodedRow }> = []
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i]!
        let position: number
        try {
          position = Number(
            hot.insertEvent.run(id, actual + i + 1, row.type, row.version, row.payload, request.at)
              .lastInsertRowid,
          )
        } catch (error) {
          const code = sqliteCode(error)
          if (!isUniqueViolation(error) && code !== "SQLITE_CONSTRAINT_TRIGGER") throw error
          // The projection said `actual`; the events say the stream is longer: it moved on.
          const last = hot.lastSequence.get(id) ?? 0
          if (last > actual + i) {
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
        if (row.event._tag === "SessionCreated") created.push({ position, row })
      }
      for (const { position, row } of created) {
        if (row.event._tag === "SessionCreated") await upsertSession(trx, id, row.event.session, position)
      }
      return version
    }

    const factResult = (json: string): unknown => JSON.parse(json)

    const sessionStore: SessionStoreService = {
      append: (request) =>
        Effect.flatMap(prepare("append", request), (prepared) =>
          writeTransaction("append", isVersionConflict, async (trx) => ({
            version: await writeEvents(trx, prepared, checkVersion(prepared)),
          })),
        ),

      commit: (request) =>
        Effect.gen(function* () {
          const seen = new Set<SessionId>()
          for (const a of request.appends) {
            if (seen.has(a.sessionId)) {
              return yield* new StoreError({
                operation: "commit",
                message: `session ${a.sessionId} appears twice in one commit`,
              })
            }
            seen.add(a.sessionId)
          }
          const prepared: Array<PreparedAppend> = []
          for (const a of request.appends) prepared.push(yield* prepare("commit", a))
          const facts = yield* Effect.try({
            try: () => encodeFacts(request.facts ?? []),
            catch: (error) =>
              error instanceof StoreError
                ? error
                : new StoreError({
                    operation: "commit",
                    message: `command fact result is not JSON: ${String(error)}`,
                    cause: error,
                  }),
          })
          yield* writeTransaction("commit", isCommitFailure, async (trx) => {
            const actuals = prepared.map(checkVersion)
            for (const f of facts) {
              const existing = await trx
                .selectFrom("command_facts")
                .select("result")
                .where("session_id", "=", f.session_id)
                .where("command_id", "=", f.command_id)
                .executeTakeFirst()
              if (existing !== undefined) {
                throw new CommandAlreadyRecorded({
                  sessionId: f.session_id as SessionId,
                  commandId: f.command_id,
                  result: factResult(existing.result),
                })
              }
            }
            for (let i = 0; i < prepared.length; i++) await writeEvents(trx, prepared[i]!, actuals[i]!)
            if (facts.length > 0) await trx.insertInto("command_facts").values(facts).execute()
          })
        }),

      read: (sessionId, options) =>
        exclusive(
          Effect.try({
            try: () =>
              hot.readEvents
                .all(sessionId, options?.afterSequence ?? 0)
                .map((row) => decodeRow(sessionId, row)),
            catch: (error) => (error instanceof EventDecodeError ? error : storeError("read")(error)),
          }),
        ),

      version: (sessionId) =>
        exclusive(
          Effect.try({
            try: () => hot.streamVersion.get(sessionId) ?? 0,
            catch: storeError("version"),
          }),
        ),

      listSessions: () =>
        exclusive(
          Effect.tryPromise({
            try: async () => {
              const rows = await kysely
                .selectFrom("sessions as s")
                .innerJoin("streams as st", "st.session_id", "s.session_id")
                .innerJoin("events as e", "e.position", "s.created_position")
                .select([
                  "s.session_id",
                  "s.kind",
                  "s.parent_id",
                  "s.created_at",
                  "st.version",
                  "st.updated_at",
                  "e.type",
                  "e.version as event_version",
                  "e.payload",
                  "e.position",
                ])
                .orderBy("s.created_position")
                .execute()
              return rows.map((row): SessionSummary => {
                // The exact title (lone surrogates included) lives in the event, not the copy.
                const event = decodeStored(
                  row.type,
                  row.event_version,
                  row.payload,
                  `at position ${row.position}`,
                )
                return {
                  sessionId: row.session_id as SessionId,
                  kind: row.kind as SessionKind,
                  parentId: (row.parent_id ?? undefined) as SessionId | undefined,
                  title: event._tag === "SessionCreated" ? event.session.title : "",
                  createdAt: row.created_at,
                  version: row.version,
                  updatedAt: row.updated_at,
                }
              })
            },
            catch: storeError("listSessions"),
          }),
        ),

      getCommandFact: (sessionId, commandId) =>
        exclusive(
          Effect.tryPromise({
            try: async () => {
              const row = await kysely
                .selectFrom("command_facts")
                .select(["result", "at"])
                .where("session_id", "=", sessionId)
                .where("command_id", "=", commandId)
                .executeTakeFirst()
              return row === undefined
                ? Option.none<CommandFact>()
                : Option.some<CommandFact>({
                    sessionId,
                    commandId,
                    result: factResult(row.result),
                    at: row.at,
                  })
            },
            catch: storeError("getCommandFact"),
          }),
        ),
    }

    return {
      sessionStore,
      rebuildProjections: writeTransaction("rebuildProjections", isDecodeError, rebuildProjectionTables),
      operationJournal: makeSqliteOperationJournal(db, exclusive, storeError),
      integrityCheck: exclusive(
        Effect.try({
          try: () => {
            const integrity = (db.pragma("integrity_check") as Array<{ integrity_check: string }>).map(
              (r) => r.integrity_check,
            )
            const foreignKeys = (db.pragma("foreign_key_check") as Array<Record<string, unknown>>).map(
              (r) => `foreign key: ${JSON.stringify(r)}`,
            )
            const problems = [...integrity.filter((p) => p !== "ok"), ...foreignKeys]
            return { ok: problems.length === 0, problems }
          },
          catch: storeError("integrityCheck"),
        }),
      ),
    }
  })

interface FactRow {
  readonly session_id: string
  readonly command_id: string
  readonly result: string
  readonly at: number
}

const encodeFacts = (facts: ReadonlyArray<CommandFact>): Array<FactRow> => {
  const keys = new Set<string>()
  return facts.map((f) => {
    // SQLite text is UTF-8: an ill-formed id would be stored altered and could collide with another.
    if (!f.commandId.isWellFormed()) {
      throw new StoreError({ operation: "commit", message: "a command id must be well-formed Unicode text" })
    }
    const key = `${f.sessionId}\u0000${f.commandId}`
    if (keys.has(key)) {
      throw new StoreError({
        operation: "commit",
        message: `command ${f.commandId} of session ${f.sessionId} appears twice in one commit`,
      })
    }
    keys.add(key)
    if (!Number.isSafeInteger(f.at) || f.at < 0) {
      throw new StoreError({
        operation: "commit",
        message: `fact time must be a non-negative integer, got ${f.at}`,
      })
    }
    const result = JSON.stringify(f.result ?? null)
    if (result === undefined) throw new Error("the result has no JSON form")
    return { session_id: f.sessionId, command_id: f.commandId, result, at: f.at }
  })
}
