/**
 * The OperationJournal on the store's database (tables from migrations 0002 and 0004). Each call is one
 * `BEGIN IMMEDIATE` transaction, committed before the call returns, so an intent is on disk before
 * the restore writes its first file; `complete` updates the operation and consumes the redo entry
 * it reverses in the same transaction. Intents are stored as JSON and decoded with their schema on
 * the way out, so a damaged row is an error, never a misread plan; `scan` names each damaged row
 * (see the shared journal's `scanRows`) beside those that decode.
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
import { scanRows } from "@rewind/kysely-store"
import type Database from "better-sqlite3"
import { Effect, Option, Schema } from "effect"
import { Busy, isBusy, retryBusy } from "./sqliteErrors.js"

interface OperationRow {
  readonly operation_id: string
  readonly intent: string
  readonly status: "pending" | "committed" | "rolled_back"
  readonly finished_at: number | null
  readonly redo_consumed: number
  readonly redoes?: string | null
}

interface ScannedRow extends OperationRow {
  readonly session_id: string
  readonly kind: string
  readonly started_at: number
}

interface StepRow {
  readonly step: number
  readonly path: string
  readonly state: string
  readonly at: number
}

const decodeIntent = decodeOperationIntentJson
const encodeIntent = encodeOperationIntentJson
const decodeStep = Schema.decodeUnknownSync(OperationStep)

class Refusal extends Error {}

export const makeSqliteOperationJournal = (
  db: Database.Database,
  exclusive: <A, E>(effect: Effect.Effect<A, E>) => Effect.Effect<A, E>,
  storeError: (operation: string) => (error: unknown) => StoreError,
): OperationJournalService => {
  // The intent lives in its own table (migration 0004), so status updates never rewrite it.
  const withIntent = `select o.operation_id, i.intent, o.status, o.finished_at, o.redo_consumed
    from operations o join operation_intents i on i.seq = o.seq`
  // The columns that name an operation whatever its intent holds; a missing intent row is damage too.
  const scanned = `select o.operation_id, o.session_id, o.kind, o.started_at, i.intent, o.status, o.finished_at,
    o.redo_consumed from operations o left join operation_intents i on i.seq = o.seq`
  const statements = {
    insert: db.prepare(
      `insert into operations (operation_id, session_id, kind, status, started_at, redoes, redo_available, redo_consumed)
       values (?, ?, ?, 'pending', ?, ?, ?, 0)`,
    ),
    insertIntent: db.prepare("insert into operation_intents (seq, intent) values (?, ?)"),
    exists: db.prepare("select 1 from operations where operation_id = ?").pluck(),
    get: db.prepare(`${withIntent} where o.operation_id = ?`),
    // What completing (or logging a step) needs, without reading the intent.
    completing: db.prepare("select status, redoes from operations where operation_id = ?"),
    steps: db.prepare("select step, path, state, at from operation_steps where operation_id = ? order by id"),
    insertStep: db.prepare(
      "insert into operation_steps (operation_id, step, path, state, at) values (?, ?, ?, ?, ?)",
    ),
    finish: db.prepare(
      "update operations set status = ?, finished_at = ? where operation_id = ? and status = 'pending'",
    ),
    consume: db.prepare(
      `update operations set redo_consumed = 1
       where operation_id = ? and status = 'committed' and redo_available = 1 and redo_consumed = 0`,
    ),
    pending: db.prepare(`${withIntent} where o.status = 'pending' order by o.seq`),
    redoStack: db.prepare(
      `${withIntent} where o.session_id = ? and o.status = 'committed' and o.redo_available = 1
       and o.redo_consumed = 0 order by o.seq desc`,
    ),
    all: db.prepare(`${withIntent} order by o.seq`),
    scanPending: db.prepare(`${scanned} where o.status = 'pending' order by o.seq`),
    scanAll: db.prepare(`${scanned} order by o.seq`),
  }

  const toRecord = (row: OperationRow): OperationRecord => ({
    intent: decodeIntent(row.intent),
    status: row.status,
    steps: (statements.steps.all(row.operation_id) as Array<StepRow>).map((s) => decodeStep(s)),
    ...(row.finished_at === null ? {} : { finishedAt: row.finished_at }),
    redoConsumed: row.redo_consumed === 1,
  })

  const run = <A>(operation: string, body: () => A): Effect.Effect<A, StoreError> =>
    retryBusy(
      exclusive(
        Effect.try({
          try: body,
          catch: (error): StoreError | Busy =>
            error instanceof Refusal
              ? new StoreError({ operation, message: error.message })
              : isBusy(error)
                ? new Busy({ operation, cause: error })
                : storeError(operation)(error),
        }),
      ),
    )

  const write = <A>(operation: string, body: () => A) =>
    run(operation, () => db.transaction(body).immediate())

  return {
    begin: (intent) =>
      write("operationJournal.begin", () => {
        if (statements.exists.get(intent.operationId) !== undefined) {
          throw new Refusal(`operation ${intent.operationId} is already journaled`)
        }
        const { lastInsertRowid } = statements.insert.run(
          intent.operationId,
          intent.sessionId,
          intent.kind,
          intent.startedAt,
          intent.redoes ?? null,
          intent.redo === undefined ? 0 : 1,
        )
        statements.insertIntent.run(lastInsertRowid, encodeIntent(intent))
      }),
    step: (operationId, step) =>
      write("operationJournal.step", () => {
        const row = statements.completing.get(operationId) as { readonly status: string } | undefined
        if (row === undefined || row.status !== "pending") {
          throw new Refusal(`operation ${operationId} is not pending`)
        }
        statements.insertStep.run(operationId, step.step, step.path, step.state, step.at)
      }),
    complete: (operationId, completion) =>
      write("operationJournal.complete", () => {
        const row = statements.completing.get(operationId) as
          | { readonly status: OperationRow["status"]; readonly redoes: string | null }
          | undefined
        if (row === undefined || row.status !== "pending") {
          throw new Refusal(`operation ${operationId} is not pending`)
        }
        if (completion.status === "committed" && row.redoes !== null) {
          if (statements.consume.run(row.redoes).changes !== 1) {
            throw new Refusal(`the redo entry of ${row.redoes} is not available`)
          }
        }
        statements.finish.run(completion.status, completion.at, operationId)
      }),
    get: (operationId: OperationId) =>
      run("operationJournal.get", () => {
        const row = statements.get.get(operationId) as OperationRow | undefined
        return row === undefined ? Option.none() : Option.some(toRecord(row))
      }),
    incomplete: () =>
      run("operationJournal.incomplete", () =>
        (statements.pending.all() as Array<OperationRow>).map(toRecord),
      ),
    redoStack: (sessionId: SessionId) =>
      run("operationJournal.redoStack", () =>
        (statements.redoStack.all(sessionId) as Array<OperationRow>).map(toRecord),
      ),
    all: () => run("operationJournal.all", () => (statements.all.all() as Array<OperationRow>).map(toRecord)),
    scan: (which) =>
      run("operationJournal.scan", () =>
        scanRows(
          "operation_intents",
          (which === "incomplete" ? statements.scanPending : statements.scanAll).all() as Array<ScannedRow>,
          toRecord,
        ),
      ),
  }
}
