/**
 * The OperationJournal over any SQL database Kysely speaks (DESIGN §7), the one both SQL stores
 * run: one `operations` row per multi-file restore, its intent as JSON in `operation_intents`
 * (keyed by the operation's `seq`), one `operation_steps` row per step. The intent has a table of
 * its own because it holds the session's whole active branch (for redo): SQLite rewrites a whole row
 * on every UPDATE, so completing an operation or consuming its redo entry would rewrite it each time;
 * the status updates here touch only the small row (and never read the intent). The SQL is the same
 * in every dialect; what differs is passed in as an `OperationJournalBackend`: how a write
 * transaction runs (locks, retries), how a consistent read runs, and whether rows can be locked
 * (`SELECT … FOR UPDATE`) — a database whose write transactions already exclude each other
 * (SQLite's `BEGIN IMMEDIATE`) needs no row locks.
 *
 * Every call is one transaction, committed before it returns, so an intent is durable before the
 * restore writes its first file; `complete` finishes the operation and consumes the redo entry it
 * reverses in the same transaction. The operation's row is locked before its status is checked, so
 * two workers completing (or stepping and completing) one operation take turns, and two redos of
 * one entry cannot both consume it. Intents are decoded with their schema on the way out: a damaged
 * (or missing) intent row is an error, never a misread plan — except in `scan`, which names each
 * damaged row (from its columns, and what is wrong in one sentence: table, row, field) beside the
 * rows that decode.
 */
import {
  decodeOperationIntentJson,
  encodeOperationIntentJson,
  type OperationId,
  type OperationRecord,
  OperationStep,
  type SessionId,
  StoreError,
} from "@rewind/contracts"
import type { OperationJournalService } from "@rewind/core"
import { Effect, Option, Schema } from "effect"
import type { Generated, Kysely } from "kysely"
import { scanRows } from "./journalScan.js"

/** One row per journaled operation; `seq` is the journal's order. */
export interface OperationsTable {
  readonly seq: Generated<number>
  readonly operation_id: string
  readonly session_id: string
  readonly kind: string
  readonly status: "pending" | "committed" | "rolled_back"
  readonly started_at: number
  readonly finished_at: number | null
  readonly redoes: string | null
  /** 1 when the intent carries a redo entry (0/1 rather than a boolean: the same in every dialect). */
  readonly redo_available: number
  readonly redo_consumed: number
}

/** The intent of the operation whose `seq` this is (one row each, written with the operation). */
export interface OperationIntentsTable {
  readonly seq: number
  /** The OperationIntent as JSON text. */
  readonly intent: string
}

export interface OperationStepsTable {
  readonly id: Generated<number>
  readonly operation_id: string
  readonly step: number
  readonly path: string
  readonly state: string
  readonly at: number
}

export interface OperationJournalTables {
  readonly operations: OperationsTable
  readonly operation_intents: OperationIntentsTable
  readonly operation_steps: OperationStepsTable
}

type JournalDb = Kysely<OperationJournalTables>

export interface OperationJournalBackend {
  readonly kysely: JournalDb
  /**
   * Runs `body` in one write transaction that commits before the effect succeeds. A StoreError the
   * body throws is the call's failure as it is.
   */
  readonly writeTransaction: <A>(
    operation: string,
    body: (trx: JournalDb) => Promise<A>,
  ) => Effect.Effect<A, StoreError>
  /** Runs `body` on one consistent view of the database (an operation and its steps agree). */
  readonly read: <A>(operation: string, body: (db: JournalDb) => Promise<A>) => Effect.Effect<A, StoreError>
  /** Whether the dialect has `SELECT … FOR UPDATE`. */
  readonly rowLocks: boolean
}

/** A missing intent row (left join) is damage like an undecodable one. */
const decodeIntent = (intent: string | null) => {
  if (intent === null) throw new Error("the operation has no operation_intents row")
  return decodeOperationIntentJson(intent)
}
const encodeIntent = encodeOperationIntentJson
const decodeStep = Schema.decodeUnknownSync(OperationStep)

/** What a record is read from: the operation's row and its intent (null when the row is missing). */
const columns = [
  "operations.operation_id",
  "operation_intents.intent",
  "operations.status",
  "operations.finished_at",
  "operations.redo_consumed",
] as const
type OperationRow = Pick<OperationsTable, "operation_id" | "status" | "finished_at" | "redo_consumed"> & {
  readonly intent: string | null
}
const scanColumns = [...columns, "operations.session_id", "operations.kind", "operations.started_at"] as const
const STEP_QUERY_CHUNK = 500

const refuse = (operation: string, message: string) => new StoreError({ operation, message })

/** Records with their steps: two queries per chunk of operations, whatever their number. */
const toRecords = async (
  db: JournalDb,
  rows: ReadonlyArray<OperationRow>,
): Promise<Array<OperationRecord>> => {
  const decode = await recordDecoder(db, rows)
  return rows.map(decode)
}

/** Reads the steps of `rows` (one query per chunk) and returns a decoder of each row that throws. */
const recordDecoder = async (db: JournalDb, rows: ReadonlyArray<OperationRow>) => {
  const steps = new Map<string, Array<unknown>>()
  for (let start = 0; start < rows.length; start += STEP_QUERY_CHUNK) {
    const ids = rows.slice(start, start + STEP_QUERY_CHUNK).map((r) => r.operation_id)
    const stepRows = await db
      .selectFrom("operation_steps")
      .select(["operation_id", "step", "path", "state", "at"])
      .where("operation_id", "in", ids)
      .orderBy("id")
      .execute()
    for (const s of stepRows) {
      const list = steps.get(s.operation_id) ?? []
      list.push({ step: s.step, path: s.path, state: s.state, at: s.at })
      steps.set(s.operation_id, list)
    }
  }
  return (row: OperationRow): OperationRecord => ({
    intent: decodeIntent(row.intent),
    status: row.status,
    steps: (steps.get(row.operation_id) ?? []).map((step) => decodeStep(step)),
    ...(row.finished_at === null ? {} : { finishedAt: row.finished_at }),
    redoConsumed: row.redo_consumed === 1,
  })
}

/** Operations with their intents, for reading (the intent row is left-joined: missing is damage). */
const withIntents = (db: JournalDb) =>
  db.selectFrom("operations").leftJoin("operation_intents", "operation_intents.seq", "operations.seq")

export const makeSqlOperationJournal = (backend: OperationJournalBackend): OperationJournalService => {
  /**
   * The operation's small row, locked for the rest of the transaction where the dialect can;
   * refused unless the operation is pending.
   */
  const pendingOrRefuse = async (trx: JournalDb, operation: string, operationId: string) => {
    const query = trx
      .selectFrom("operations")
      .select(["seq", "status"])
      .where("operation_id", "=", operationId)
    const row = await (backend.rowLocks ? query.forUpdate() : query).executeTakeFirst()
    if (row === undefined || row.status !== "pending") {
      throw refuse(operation, `operation ${operationId} is not pending`)
    }
    return row
  }

  const readRecords = (operation: string, select: (db: JournalDb) => Promise<ReadonlyArray<OperationRow>>) =>
    backend.read(operation, async (db) => toRecords(db, await select(db)))

  return {
    begin: (intent) =>
      Effect.suspend(() => {
        const encoded = encodeIntent(intent)
        return backend.writeTransaction("operationJournal.begin", async (trx) => {
          // A clash on the unique id (also with a concurrent begin) inserts nothing.
          const inserted = await trx
            .insertInto("operations")
            .values({
              operation_id: intent.operationId,
              session_id: intent.sessionId,
              kind: intent.kind,
              status: "pending",
              started_at: intent.startedAt,
              finished_at: null,
              redoes: intent.redoes ?? null,
              redo_available: intent.redo === undefined ? 0 : 1,
              redo_consumed: 0,
            })
            .onConflict((oc) => oc.column("operation_id").doNothing())
            .returning("seq")
            .executeTakeFirst()
          if (inserted === undefined) {
            throw refuse("operationJournal.begin", `operation ${intent.operationId} is already journaled`)
          }
          await trx.insertInto("operation_intents").values({ seq: inserted.seq, intent: encoded }).execute()
        })
      }),

    step: (operationId, step) =>
      backend.writeTransaction("operationJournal.step", async (trx) => {
        await pendingOrRefuse(trx, "operationJournal.step", operationId)
        await trx
          .insertInto("operation_steps")
          .values({
            operation_id: operationId,
            step: step.step,
            path: step.path,
            state: step.state,
            at: step.at,
          })
          .execute()
      }),

    complete: (operationId, completion) =>
      backend.writeTransaction("operationJournal.complete", async (trx) => {
        const { seq } = await pendingOrRefuse(trx, "operationJournal.complete", operationId)
        // A damaged intent refuses the completion too: the plan it finishes cannot be read.
        const stored = await trx
          .selectFrom("operation_intents")
          .select("intent")
          .where("seq", "=", seq)
          .executeTakeFirst()
        const { redoes } = decodeIntent(stored?.intent ?? null)
        if (completion.status === "committed" && redoes !== undefined) {
          // The row lock (or the database-wide write lock) makes one redo of an entry the only one.
          const consumed = await trx
            .updateTable("operations")
            .set({ redo_consumed: 1 })
            .where("operation_id", "=", redoes)
            .where("status", "=", "committed")
            .where("redo_available", "=", 1)
            .where("redo_consumed", "=", 0)
            .executeTakeFirst()
          if (consumed.numUpdatedRows !== 1n) {
            throw refuse("operationJournal.complete", `the redo entry of ${redoes} is not available`)
          }
        }
        await trx
          .updateTable("operations")
          .set({ status: completion.status, finished_at: completion.at })
          .where("operation_id", "=", operationId)
          .where("status", "=", "pending")
          .execute()
      }),

    get: (operationId: OperationId) =>
      Effect.map(
        readRecords("operationJournal.get", (db) =>
          withIntents(db).select(columns).where("operations.operation_id", "=", operationId).execute(),
        ),
        (records) => Option.fromNullable(records[0]),
      ),

    incomplete: () =>
      readRecords("operationJournal.incomplete", (db) =>
        withIntents(db)
          .select(columns)
          .where("operations.status", "=", "pending")
          .orderBy("operations.seq")
          .execute(),
      ),

    redoStack: (sessionId: SessionId) =>
      readRecords("operationJournal.redoStack", (db) =>
        withIntents(db)
          .select(columns)
          .where("operations.session_id", "=", sessionId)
          .where("operations.status", "=", "committed")
          .where("operations.redo_available", "=", 1)
          .where("operations.redo_consumed", "=", 0)
          .orderBy("operations.seq", "desc")
          .execute(),
      ),

    all: () =>
      readRecords("operationJournal.all", (db) =>
        withIntents(db).select(columns).orderBy("operations.seq").execute(),
      ),

    scan: (which) =>
      backend.read("operationJournal.scan", async (db) => {
        const query = withIntents(db).select(scanColumns).orderBy("operations.seq")
        const rows = await (which === "incomplete"
          ? query.where("operations.status", "=", "pending")
          : query
        ).execute()
        return scanRows("operation_intents", rows, await recordDecoder(db, rows))
      }),
  }
}
