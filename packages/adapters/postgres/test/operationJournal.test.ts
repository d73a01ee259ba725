// The PostgreSQL OperationJournal: the shared contract (a reopen is a new pool on the same schema),
// and workers on different pools racing to complete one operation or to consume one redo entry:
// exactly one of them wins, and the loser is told so.
import { expect, it } from "@effect/vitest"
import type { ContentHash, OperationId, SessionId, WorkspacePath } from "@rewind/contracts"
import { OperationJournal, type OperationJournalService } from "@rewind/core"
import { operationJournalConformance } from "@rewind/testkit"
import { Context, Effect, Either, Layer } from "effect"
import { PostgresSessionStore } from "../src/index.js"
import { describePg, rawQueryEffect, storeOptions, tempSchema } from "./pgTest.js"

// The pool stays open for the rest of the test's scope.
const open = (schema: string) =>
  Effect.map(Layer.build(PostgresSessionStore.layer(storeOptions(schema, { poolSize: 4 }))), (context) =>
    Context.get(context, OperationJournal),
  )

const intent = (id: string, extra: { redoes?: string; withRedo?: boolean } = {}) => ({
  operationId: id as OperationId,
  sessionId: "s1" as SessionId,
  kind: extra.redoes === undefined ? ("cascade" as const) : ("redo" as const),
  files: [
    {
      path: "a.txt" as WorkspacePath,
      rescue: { _tag: "present" as const, hash: "a".repeat(64) as ContentHash, mode: 0o644 },
      planned: { _tag: "absent" as const },
    },
  ],
  startedAt: 1,
  ...(extra.withRedo === false ? {} : { redo: { activeBranch: [], spentCheckpointIds: [] } }),
  ...(extra.redoes === undefined ? {} : { redoes: extra.redoes as OperationId }),
})

const outcomes = <A, E>(effects: ReadonlyArray<Effect.Effect<A, E>>) =>
  Effect.all(effects.map(Effect.either), { concurrency: "unbounded" })

describePg("PostgreSQL operation journal", () => {
  operationJournalConformance("postgres", {
    make: Effect.gen(function* () {
      const schema = yield* tempSchema
      const journal = yield* open(schema)
      return { journal, reopen: open(schema) }
    }),
  })

  it.scoped("workers racing to complete one operation or to redo one entry: exactly one wins", () =>
    Effect.gen(function* () {
      const schema = yield* tempSchema
      const workers: Array<OperationJournalService> = []
      for (let i = 0; i < 4; i++) workers.push(yield* open(schema))
      const [first] = workers

      yield* first!.begin(intent("op_done"))
      const completions = yield* outcomes(
        workers.map((w, i) => w.complete("op_done" as OperationId, { status: "committed", at: 10 + i })),
      )
      expect(completions.filter(Either.isRight)).toHaveLength(1)
      for (const loss of completions.filter(Either.isLeft)) expect(loss.left.message).toMatch(/not pending/)

      // Four redos of the one entry, each begun by its own worker, all committing at once.
      yield* Effect.forEach(workers, (w, i) =>
        w.begin(intent(`redo_${i}`, { redoes: "op_done", withRedo: false })),
      )
      const redos = yield* outcomes(
        workers.map((w, i) => w.complete(`redo_${i}` as OperationId, { status: "committed", at: 20 })),
      )
      expect(redos.filter(Either.isRight)).toHaveLength(1)
      for (const loss of redos.filter(Either.isLeft)) expect(loss.left.message).toMatch(/not available/)
      expect(yield* first!.redoStack("s1" as SessionId)).toEqual([])
      // The losers' operations are still pending (for recover() to roll back), the winner's is not.
      expect((yield* first!.incomplete()).map((r) => r.intent.operationId).sort()).toHaveLength(3)

      // Concurrent begins of one id: one journals it, the others are refused.
      const begins = yield* outcomes(workers.map((w) => w.begin(intent("op_twice"))))
      expect(begins.filter(Either.isRight)).toHaveLength(1)
      for (const loss of begins.filter(Either.isLeft)) expect(loss.left.message).toMatch(/already journaled/)
      const rows = yield* rawQueryEffect<{ n: string }>(
        schema,
        "select count(*) as n from operations where operation_id = 'op_twice'",
      )
      expect(Number(rows.rows[0]!.n)).toBe(1)
    }),
  )

  it.scoped("a damaged intent row is an error, never a misread plan", () =>
    Effect.gen(function* () {
      const schema = yield* tempSchema
      const journal = yield* open(schema)
      yield* journal.begin(intent("op_bad"))
      yield* rawQueryEffect(
        schema,
        `update operation_intents set intent = '{"operationId": 5}'
         where seq = (select seq from operations where operation_id = 'op_bad')`,
      )
      const read = yield* Effect.flip(journal.get("op_bad" as OperationId))
      expect(read._tag).toBe("StoreError")
      const complete = yield* Effect.flip(
        journal.complete("op_bad" as OperationId, { status: "committed", at: 2 }),
      )
      expect(complete._tag).toBe("StoreError")
    }),
  )
})
