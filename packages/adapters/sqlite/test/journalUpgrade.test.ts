// A store journaled by the adapter's own operation journal (the one before the shared Kysely journal
// of @rewind/kysely-store took over, issue 22 item 5) opens with the shared one and shows the same
// operations: a pending operation with its intent and steps is listed whole, can be finished or
// rolled back, and its redo entry is consumed as before. The rows are written with the exact SQL
// the old journal ran (its prepared statements), on a store at the current schema: the schema is
// unchanged (the intent stays in `operation_intents`), so no migration runs.
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import {
  encodeOperationIntentJson,
  type MessageId,
  type OperationId,
  type OperationIntent,
  type SessionId,
  type WorkspacePath,
} from "@rewind/contracts"
import { OperationJournal } from "@rewind/core"
import { journalIntent } from "@rewind/testkit"
import { Context, Effect, Layer } from "effect"
import { SqliteSessionStore } from "../src/index.js"
import { tempDir, withRawDatabase } from "./tempStore.js"

const main = "ses_main" as SessionId

const intentOf = (operationId: string, extra: Partial<OperationIntent> = {}) =>
  journalIntent(operationId, main, { startedAt: 7, ...extra })

const done = intentOf("op-done", {
  redo: {
    activeBranch: Array.from({ length: 300 }, (_, i) => `msg-${i}` as MessageId),
    spentCheckpointIds: [],
  },
})
const redoing = intentOf("op-redo", { kind: "redo", redoes: "op-done" as OperationId, startedAt: 8 })
const undoing = intentOf("op-undo", { startedAt: 9 })

/** The old journal's writes, statement for statement (begin, step, complete). */
const writeAsTheOldJournal = (file: string) =>
  withRawDatabase(file, (db) => {
    const insert = db.prepare(
      `insert into operations (operation_id, session_id, kind, status, started_at, redoes, redo_available, redo_consumed)
       values (?, ?, ?, 'pending', ?, ?, ?, 0)`,
    )
    const insertIntent = db.prepare("insert into operation_intents (seq, intent) values (?, ?)")
    const insertStep = db.prepare(
      "insert into operation_steps (operation_id, step, path, state, at) values (?, ?, ?, ?, ?)",
    )
    const finish = db.prepare(
      "update operations set status = ?, finished_at = ? where operation_id = ? and status = 'pending'",
    )
    for (const intent of [done, redoing, undoing]) {
      db.transaction(() => {
        const { lastInsertRowid } = insert.run(
          intent.operationId,
          intent.sessionId,
          intent.kind,
          intent.startedAt,
          intent.redoes ?? null,
          intent.redo === undefined ? 0 : 1,
        )
        insertIntent.run(lastInsertRowid, encodeOperationIntentJson(intent))
      }).immediate()
    }
    finish.run("committed", 10, "op-done")
    insertStep.run("op-redo", 0, "src/a.ts", "writing", 11)
    insertStep.run("op-redo", 0, "src/a.ts", "written", 12)
  })

const journalOf = (file: string) =>
  Effect.map(Layer.build(SqliteSessionStore.layer({ path: file })), (context) =>
    Context.get(context, OperationJournal),
  )

describe("a store journaled by the previous SQLite journal", () => {
  it.scoped("shows its pending operations to recovery, which finishes and rolls them back", () =>
    Effect.gen(function* () {
      const file = path.join(yield* tempDir, "store.db")
      // A store at the current schema, closed again before the old journal's rows go in.
      yield* Effect.scoped(journalOf(file))
      writeAsTheOldJournal(file)

      const journal = yield* journalOf(file)
      const redoSteps = [
        { step: 0, path: "src/a.ts" as WorkspacePath, state: "writing" as const, at: 11 },
        { step: 0, path: "src/a.ts" as WorkspacePath, state: "written" as const, at: 12 },
      ]
      expect(yield* journal.incomplete()).toEqual([
        { intent: redoing, status: "pending", steps: redoSteps, redoConsumed: false },
        { intent: undoing, status: "pending", steps: [], redoConsumed: false },
      ])
      expect(yield* journal.scan("all")).toMatchObject({ damaged: [] })
      expect((yield* journal.redoStack(main)).map((r) => r.intent)).toEqual([done])
      expect(done.redo?.activeBranch).toHaveLength(300)

      // Recovery finishes the redo (consuming the entry it redoes) and rolls the other back.
      yield* journal.complete("op-redo" as OperationId, { status: "committed", at: 20 })
      yield* journal.complete("op-undo" as OperationId, { status: "rolled_back", at: 21 })
      expect(yield* journal.incomplete()).toEqual([])
      // The finished redo carries a redo entry of its own; the one it redid is consumed.
      expect((yield* journal.redoStack(main)).map((r) => r.intent.operationId)).toEqual(["op-redo"])
      expect((yield* journal.all()).map((r) => [r.intent.operationId, r.status, r.redoConsumed])).toEqual([
        ["op-done", "committed", true],
        ["op-redo", "committed", false],
        ["op-undo", "rolled_back", false],
      ])
      // A second redo of the consumed entry is refused, as before.
      yield* journal.begin(intentOf("op-redo-2", { kind: "redo", redoes: "op-done" as OperationId }))
      const again = yield* Effect.flip(
        journal.complete("op-redo-2" as OperationId, { status: "committed", at: 22 }),
      )
      expect(again.message).toMatch(/redo entry of op-done is not available/)
    }),
  )
})
