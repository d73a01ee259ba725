// One damaged journal row hides nothing else (issue 21 item 9): in the store (the shared Kysely
// journal on this adapter's backend), and in the shared journal on a bare Kysely SQLite dialect.
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import {
  type OperationId,
  type OperationIntent,
  type SessionId,
  StoreError,
  type WorkspacePath,
} from "@rewind/contracts"
import { OperationJournal, type OperationJournalService } from "@rewind/core"
import { makeSqlOperationJournal, type OperationJournalTables } from "@rewind/kysely-store"
import Database from "better-sqlite3"
import { Context, Effect, Layer } from "effect"
import { Kysely, SqliteDialect, sql } from "kysely"
import { SqliteSessionStore } from "../src/index.js"
import { tempDir, withRawDatabase } from "./tempStore.js"

const intent = (id: string, startedAt: number): OperationIntent => ({
  operationId: id as OperationId,
  sessionId: "ses_1" as SessionId,
  kind: "direct_restore",
  files: [{ path: "a.txt" as WorkspacePath, rescue: { _tag: "absent" }, planned: { _tag: "absent" } }],
  startedAt,
})

const DAMAGED = JSON.stringify({ ...intent("op_2", 2), files: [{ path: 42 }] })

/** Three pending operations, the middle one's intent damaged by `damage`; then what each listing says. */
const exercise = (journal: OperationJournalService, damage: () => Effect.Effect<void>) =>
  Effect.gen(function* () {
    for (const [id, at] of [
      ["op_1", 1],
      ["op_2", 2],
      ["op_3", 3],
    ] as const)
      yield* journal.begin(intent(id, at))
    yield* damage()
    const pending = yield* journal.scan("incomplete")
    expect(pending.records.map((r) => r.intent.operationId)).toEqual(["op_1", "op_3"])
    expect(pending.damaged.map((d) => [d.operationId, d.sessionId, d.kind, d.status, d.startedAt])).toEqual([
      ["op_2", "ses_1", "direct_restore", "pending", 2],
    ])
    const problem = pending.damaged[0]!.problem
    expect(problem).toMatch(/row of operation op_2 does not decode.*field files\.0\.path/)
    expect(problem.length).toBeLessThan(400)
    const all = yield* journal.scan("all")
    expect([all.records.length, all.damaged.length]).toEqual([2, 1])
    // The strict listings still refuse to read a damaged row as a plan.
    expect((yield* Effect.flip(journal.incomplete()))._tag).toBe("StoreError")
  })

describe("a damaged operation journal row", () => {
  it.scoped("the SQLite journal lists the others and names it", () =>
    Effect.gen(function* () {
      const file = path.join(yield* tempDir, "store.db")
      const context = yield* Layer.build(SqliteSessionStore.layer({ path: file }))
      const journal = Context.get(context, OperationJournal)
      yield* exercise(journal, () =>
        Effect.sync(() =>
          withRawDatabase(file, (db) =>
            db
              .prepare(
                "update operation_intents set intent = ? where seq = (select seq from operations where operation_id = 'op_2')",
              )
              .run(DAMAGED),
          ),
        ),
      )
    }),
  )

  it.scoped("the shared Kysely journal lists the others and names it", () =>
    Effect.gen(function* () {
      const file = path.join(yield* tempDir, "kysely.db")
      const kysely = yield* Effect.acquireRelease(
        Effect.sync(
          () =>
            new Kysely<OperationJournalTables>({
              dialect: new SqliteDialect({ database: new Database(file) }),
            }),
        ),
        (db) => Effect.promise(() => db.destroy()),
      )
      yield* Effect.promise(() =>
        sql`create table operations (seq integer primary key, operation_id text not null unique, session_id text not null,
          kind text not null, status text not null, started_at integer not null,
          finished_at integer, redoes text, redo_available integer not null, redo_consumed integer not null)`.execute(
          kysely,
        ),
      )
      yield* Effect.promise(() =>
        sql`create table operation_intents (seq integer primary key, intent text not null)`.execute(kysely),
      )
      yield* Effect.promise(() =>
        sql`create table operation_steps (id integer primary key, operation_id text not null, step integer not null,
          path text not null, state text not null, at integer not null)`.execute(kysely),
      )
      const attempt = <A>(operation: string, run: () => Promise<A>) =>
        Effect.tryPromise({
          try: run,
          catch: (error) =>
            error instanceof StoreError ? error : new StoreError({ operation, message: String(error) }),
        })
      const journal = makeSqlOperationJournal({
        kysely,
        writeTransaction: (operation, body) => attempt(operation, () => kysely.transaction().execute(body)),
        read: (operation, body) => attempt(operation, () => body(kysely)),
        rowLocks: false,
      })
      yield* exercise(journal, () =>
        Effect.promise(() =>
          kysely
            .updateTable("operation_intents")
            .set({ intent: DAMAGED })
            .where("seq", "=", (eb) =>
              eb.selectFrom("operations").select("seq").where("operation_id", "=", "op_2"),
            )
            .execute(),
        ).pipe(Effect.asVoid),
      )
    }),
  )
})
