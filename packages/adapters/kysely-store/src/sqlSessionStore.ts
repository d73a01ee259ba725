/**
 * The SessionStore over any SQL database Kysely speaks. What every SQL adapter does the same way
 * lives here: encode before the transaction, check every expected version, then every command
 * fact, then write the events, the `streams` and `sessions` projections and the facts, all in one
 * transaction; list sessions; look up facts. What differs per database is passed in as a
 * `SqlStoreBackend`: how a write transaction runs (locks, retries, connections), how a query runs,
 * and the statements of the hot paths (stream versions, event rows, stream reads).
 *
 * A backend whose database reports a uniqueness clash only at commit time, or aborts the whole
 * transaction on a constraint error (PostgreSQL), fails the transaction with `WriteCollision`; the
 * store then re-reads the streams and facts the request named, outside any transaction, and answers
 * with the VersionConflict or CommandAlreadyRecorded that the other writer's success means.
 */
import {
  CommandAlreadyRecorded,
  EventDecodeError,
  type SessionId,
  type SessionKind,
  type StoredEvent,
  StoreError,
  VersionConflict,
} from "@rewind/contracts"
import type { SessionStoreService, SessionSummary } from "@rewind/core"
import { Data, Effect, Option } from "effect"
import type { Kysely } from "kysely"
import {
  checkExpectedVersion,
  type PreparedAppend,
  prepareAppend,
  requireDistinctStreams,
} from "./appendRequests.js"
import { encodeFacts, type FactRow, insertFacts, selectFact, toCommandFact } from "./commandFacts.js"
import { decodeStored } from "./eventRows.js"
import { type RebuildReport, rebuildProjectionTables, upsertSession } from "./projections.js"
import type { StoreTables } from "./tables.js"

/** Which typed failures a body may throw on purpose; anything else becomes a StoreError. */
export type Expected<E> = (error: unknown) => error is E

/**
 * Another writer's committed rows clashed with this transaction's (a unique key, a stream's
 * contiguity); the transaction was rolled back and nothing of it is visible.
 */
export class WriteCollision extends Data.TaggedError("WriteCollision")<{
  readonly operation: string
  readonly cause: unknown
}> {}

export interface StreamStatements {
  /**
   * Inside a write transaction: each stream's version (0 when it has no events), in the order
   * asked. When it returns, no other writer can move these streams until the transaction ends.
   */
  readonly lockVersions: (
    trx: Kysely<StoreTables>,
    sessionIds: ReadonlyArray<SessionId>,
  ) => Promise<ReadonlyArray<number>>
  /**
   * Inside a write transaction: writes the rows at sequences `actual + 1…` and moves the stream's
   * `streams` row to its new version; returns each row's `events.position`, in order.
   */
  readonly writeRows: (
    trx: Kysely<StoreTables>,
    append: PreparedAppend,
    actual: number,
  ) => Promise<ReadonlyArray<number>>
  /** A stream's events after `afterSequence`, decoded (throws EventDecodeError). */
  readonly readStream: (
    sessionId: SessionId,
    afterSequence: number,
  ) => Promise<ReadonlyArray<StoredEvent>> | ReadonlyArray<StoredEvent>
  /** A stream's version from the `streams` projection (0 when absent). */
  readonly version: (sessionId: SessionId) => Promise<number> | number
  /** After a WriteCollision, outside any transaction: the stream's version as its events say. */
  readonly settledVersion: (sessionId: SessionId) => Promise<number> | number
}

export interface SqlStoreBackend {
  readonly kysely: Kysely<StoreTables>
  readonly statements: StreamStatements
  /** Runs `body` in one write transaction: it commits, or nothing of it is visible. */
  readonly writeTransaction: <A, E>(
    operation: string,
    expected: Expected<E>,
    body: (trx: Kysely<StoreTables>) => Promise<A>,
  ) => Effect.Effect<A, E | StoreError | WriteCollision>
  /** Runs a query outside any write transaction. */
  readonly query: <A, E>(
    operation: string,
    expected: Expected<E>,
    run: () => Promise<A> | A,
  ) => Effect.Effect<A, E | StoreError>
}

const isCommitFailure = (error: unknown): error is VersionConflict | CommandAlreadyRecorded =>
  error instanceof VersionConflict || error instanceof CommandAlreadyRecorded
export const isDecodeError = (error: unknown): error is EventDecodeError => error instanceof EventDecodeError
const isNothing = (_: unknown): _ is never => false

const encodeCommitFacts = (facts: Parameters<typeof encodeFacts>[0]) =>
  Effect.try({
    try: () => encodeFacts(facts),
    catch: (error) =>
      error instanceof StoreError
        ? error
        : new StoreError({
            operation: "commit",
            message: `command fact result is not JSON: ${String(error)}`,
            cause: error,
          }),
  })

export const makeSqlSessionStore = (backend: SqlStoreBackend): SessionStoreService => {
  const { kysely, statements } = backend

  /** Writes one stream's rows and its projections; returns the stream's new version. */
  const writeAppend = async (trx: Kysely<StoreTables>, prepared: PreparedAppend, actual: number) => {
    const { request, rows } = prepared
    if (rows.length === 0) return actual
    const positions = await statements.writeRows(trx, prepared, actual)
    for (let i = 0; i < rows.length; i++) {
      const event = rows[i]!.event
      if (event._tag === "SessionCreated") {
        await upsertSession(trx, request.sessionId, event.session, positions[i]!)
      }
    }
    return actual + rows.length
  }

  /** What a collision means: the first stream that moved, the first fact now recorded. */
  const settle =
    (operation: string, prepared: ReadonlyArray<PreparedAppend>, facts: ReadonlyArray<FactRow>) =>
    (collision: WriteCollision) =>
      Effect.gen(function* () {
        for (const { request } of prepared) {
          const actual = yield* backend.query(operation, isNothing, () =>
            statements.settledVersion(request.sessionId),
          )
          if (actual !== request.expectedVersion) {
            return yield* new VersionConflict({
              sessionId: request.sessionId,
              expectedVersion: request.expectedVersion,
              actualVersion: actual,
            })
          }
        }
        for (const f of facts) {
          const row = yield* backend.query(operation, isNothing, () =>
            selectFact(kysely, f.session_id, f.command_id),
          )
          if (row !== undefined) {
            return yield* new CommandAlreadyRecorded({
              sessionId: f.session_id as SessionId,
              commandId: f.command_id,
              result: toCommandFact(f.session_id as SessionId, f.command_id, row).result,
            })
          }
        }
        return yield* new StoreError({
          operation,
          message: `the ${operation} collided with rows already in the store although every stream is at its expected version: the streams projection is out of step with its events; run rebuildProjections`,
          cause: collision.cause,
        })
      })

  const commitPrepared = (
    operation: string,
    prepared: ReadonlyArray<PreparedAppend>,
    facts: ReadonlyArray<FactRow>,
  ) =>
    backend
      .writeTransaction(operation, isCommitFailure, async (trx) => {
        const actuals = await statements.lockVersions(
          trx,
          prepared.map((p) => p.request.sessionId),
        )
        for (let i = 0; i < prepared.length; i++) checkExpectedVersion(prepared[i]!.request, actuals[i]!)
        for (const f of facts) {
          const existing = await selectFact(trx, f.session_id, f.command_id)
          if (existing !== undefined) {
            throw new CommandAlreadyRecorded({
              sessionId: f.session_id as SessionId,
              commandId: f.command_id,
              result: toCommandFact(f.session_id as SessionId, f.command_id, existing).result,
            })
          }
        }
        const versions: Array<number> = []
        for (let i = 0; i < prepared.length; i++)
          versions.push(await writeAppend(trx, prepared[i]!, actuals[i]!))
        await insertFacts(trx, facts)
        return versions
      })
      .pipe(Effect.catchTag("WriteCollision", settle(operation, prepared, facts)))

  return {
    append: (request) =>
      Effect.flatMap(prepareAppend("append", request), (prepared) =>
        commitPrepared("append", [prepared], []).pipe(
          Effect.map((versions) => ({ version: versions[0]! })),
          // Only a version conflict can stop a single append; the narrower type says so.
          Effect.catchIf(
            (e): e is CommandAlreadyRecorded => e instanceof CommandAlreadyRecorded,
            (e) => Effect.die(e),
          ),
        ),
      ),

    commit: (request) =>
      Effect.gen(function* () {
        yield* requireDistinctStreams(request.appends)
        const prepared: Array<PreparedAppend> = []
        for (const a of request.appends) prepared.push(yield* prepareAppend("commit", a))
        const facts = yield* encodeCommitFacts(request.facts ?? [])
        yield* commitPrepared("commit", prepared, facts)
      }),

    read: (sessionId, options) =>
      backend.query("read", isDecodeError, () =>
        statements.readStream(sessionId, options?.afterSequence ?? 0),
      ),

    version: (sessionId) => backend.query("version", isNothing, () => statements.version(sessionId)),

    listSessions: () =>
      backend.query("listSessions", isNothing, async () => {
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
          const event = decodeStored(row.type, row.event_version, row.payload, `at position ${row.position}`)
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
      }),

    getCommandFact: (sessionId, commandId) =>
      backend.query("getCommandFact", isNothing, async () => {
        const row = await selectFact(kysely, sessionId, commandId)
        return row === undefined ? Option.none() : Option.some(toCommandFact(sessionId, commandId, row))
      }),
  }
}

/**
 * Recomputes the projections from the events in one write transaction of the backend. `before`
 * runs first in that transaction: where the transaction alone does not keep writers out (a
 * database with row locks), it takes the table locks that do.
 */
export const rebuildProjections = (
  backend: SqlStoreBackend,
  before: (trx: Kysely<StoreTables>) => Promise<void> = async () => {},
): Effect.Effect<RebuildReport, StoreError | EventDecodeError> =>
  backend
    .writeTransaction("rebuildProjections", isDecodeError, async (trx) => {
      await before(trx)
      return rebuildProjectionTables(trx)
    })
    .pipe(
      Effect.catchTag("WriteCollision", (collision) =>
        Effect.fail(
          new StoreError({
            operation: "rebuildProjections",
            message: "another writer changed the projections during the rebuild; run it again",
            cause: collision.cause,
          }),
        ),
      ),
    )
