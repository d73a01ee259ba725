/**
 * The OperationJournal over any SQL database Kysely speaks (DESIGN §7): one `operations` row per
 * multi-file restore with its intent as JSON, one `operation_steps` row per step. The SQL is the
 * same in every dialect; what differs is passed in as an `OperationJournalBackend`: how a write
 * transaction runs (locks, retries), how a consistent read runs, and whether rows can be locked
 * (`SELECT … FOR UPDATE`) — a database whose write transactions already exclude each other
 * (SQLite's `BEGIN IMMEDIATE`) needs no row locks.
 *
 * Every call is one transaction, committed before it returns, so an intent is durable before the
 * restore writes its first file; `complete` finishes the operation and consumes the redo entry it
 * reverses in the same transaction. The operation's row is locked before its status is checked, so
 * two workers completing (or stepping and completing) one operation take turns, and two redos of
 * one entry cannot both consume it. Intents are decoded with their schema on the way out: a damaged
 * row is an error, never a misread plan — except in `scan`, which names each damaged row (from its
 * columns, and what is wrong in one sentence: table, row, field) beside the rows that decode.
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
import type { DamagedOperation, JournalScan, OperationJournalService } from "@rewind/core"
import { Effect, Option, ParseResult, Schema } from "effect"
import type { Generated, Kysely } from "kysely"

/** One row per journaled operation; `seq` is the journal's order. */
export interface OperationsTable {
  readonly seq: Generated<number>
  readonly operation_id: string
  readonly session_id: string
  readonly kind: string
  /** The OperationIntent as JSON text. */
  readonly intent: string
  readonly status: "pending" | "committed" | "rolled_back"
  readonly started_at: number
  readonly finished_at: number | null
  readonly redoes: string | null
  /** 1 when the intent carries a redo entry (0/1 rather than a boolean: the same in every dialect). */
  readonly redo_available: number
  readonly redo_consumed: number
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

const decodeIntent = decodeOperationIntentJson
const encodeIntent = encodeOperationIntentJson
const decodeStep = Schema.decodeUnknownSync(OperationStep)

const columns = ["operation_id", "intent", "status", "finished_at", "redo_consumed"] as const
type OperationRow = Pick<OperationsTable, (typeof columns)[number]>
const scanColumns = [...columns, "session_id", "kind", "started_at"] as const
type ScannedRow = Pick<OperationsTable, (typeof scanColumns)[number]>

const MAX_DETAIL = 160
const cut = (text: string) => (text.length > MAX_DETAIL ? `${text.slice(0, MAX_DETAIL)}…` : text)

/**
 * A decode failure in one sentence: the first field the schema refused and why, cut short (a
 * schema's own report of a large value runs to kilobytes).
 */
export const describeDecodeFailure = (error: unknown): string => {
  if (ParseResult.isParseError(error)) {
    const [first, ...rest] = ParseResult.ArrayFormatter.formatErrorSync(error)
    if (first !== undefined) {
      const field = first.path.length === 0 ? "the value" : `field ${first.path.join(".")}`
      const more = rest.length === 0 ? "" : ` (and ${rest.length} more problem(s))`
      return `${field}: ${cut(first.message.replace(/\s+/g, " "))}${more}`
    }
  }
  return cut(error instanceof Error ? error.message : String(error))
}

/** Splits scanned rows into records and named damaged rows; `decode` throws on a damaged one. */
export const scanRows = <Row extends ScannedRow>(
  table: string,
  rows: ReadonlyArray<Row>,
  decode: (row: Row) => OperationRecord,
): JournalScan => {
  const records: Array<OperationRecord> = []
  const damaged: Array<DamagedOperation> = []
  for (const row of rows) {
    try {
      records.push(decode(row))
    } catch (error) {
      damaged.push({
        operationId: row.operation_id,
        sessionId: row.session_id,
        kind: row.kind,
        status: row.status,
        startedAt: row.started_at,
        problem: `the ${table} row of operation ${row.operation_id} does not decode, so it is not read as a plan: ${describeDecodeFailure(error)}`,
      })
    }
  }
  return { records, damaged }
}

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

export const makeSqlOperationJournal = (backend: OperationJournalBackend): OperationJournalService => {
  /** The operation's row, locked for the rest of the transaction where the dialect can. */
  const lockOperation = async (trx: JournalDb, operationId: string) => {
    const query = trx.selectFrom("operations").select(columns).where("operation_id", "=", operationId)
    return await (backend.rowLocks ? query.forUpdate() : query).executeTakeFirst()
  }

  const pendingOrRefuse = async (trx: JournalDb, operation: string, operationId: string) => {
    const row = await lockOperation(trx, operationId)
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
              intent: encoded,
              status: "pending",
              started_at: intent.startedAt,
              finished_at: null,
              redoes: intent.redoes ?? null,
              redo_available: intent.redo === undefined ? 0 : 1,
              redo_consumed: 0,
            })
            .onConflict((oc) => oc.column("operation_id").doNothing())
            .returning("operation_id")
            .executeTakeFirst()
          if (inserted === undefined) {
            throw refuse("operationJournal.begin", `operation ${intent.operationId} is already journaled`)
          }
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
        const row = await pendingOrRefuse(trx, "operationJournal.complete", operationId)
        const intent = decodeIntent(row.intent)
        if (completion.status === "committed" && intent.redoes !== undefined) {
          // The row lock (or the database-wide write lock) makes one redo of an entry the only one.
          const consumed = await trx
            .updateTable("operations")
            .set({ redo_consumed: 1 })
            .where("operation_id", "=", intent.redoes)
            .where("status", "=", "committed")
            .where("redo_available", "=", 1)
            .where("redo_consumed", "=", 0)
            .executeTakeFirst()
          if (consumed.numUpdatedRows !== 1n) {
            throw refuse("operationJournal.complete", `the redo entry of ${intent.redoes} is not available`)
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
          db.selectFrom("operations").select(columns).where("operation_id", "=", operationId).execute(),
        ),
        (records) => Option.fromNullable(records[0]),
      ),

    incomplete: () =>
      readRecords("operationJournal.incomplete", (db) =>
        db.selectFrom("operations").select(columns).where("status", "=", "pending").orderBy("seq").execute(),
      ),

    redoStack: (sessionId: SessionId) =>
      readRecords("operationJournal.redoStack", (db) =>
        db
          .selectFrom("operations")
          .select(columns)
          .where("session_id", "=", sessionId)
          .where("status", "=", "committed")
          .where("redo_available", "=", 1)
          .where("redo_consumed", "=", 0)
          .orderBy("seq", "desc")
          .execute(),
      ),

    all: () =>
      readRecords("operationJournal.all", (db) =>
        db.selectFrom("operations").select(columns).orderBy("seq").execute(),
      ),

    scan: (which) =>
      backend.read("operationJournal.scan", async (db) => {
        const query = db.selectFrom("operations").select(scanColumns).orderBy("seq")
        const rows = await (which === "incomplete" ? query.where("status", "=", "pending") : query).execute()
        return scanRows("operations", rows, await recordDecoder(db, rows))
      }),
  }
}
