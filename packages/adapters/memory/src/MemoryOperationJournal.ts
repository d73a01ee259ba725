/**
 * An in-memory OperationJournal: the port's contract (core's `ports/OperationJournal.ts`) kept in
 * a process's memory, for tests and for hosts whose restores need no durability (it is lost with
 * the process, so `recover()` after a crash finds nothing). The SQL adapters provide the durable
 * one (`@rewind/kysely-store`'s journal, in the same database as the sessions).
 *
 * Invariants, as every journal keeps them: an operation id is journaled once; only a pending
 * operation takes steps or completes; committing a redo consumes the entry it reverses, once.
 * Nothing in memory is ever damaged, so `scan` names no damaged row.
 */
import type { OperationRecord } from "@rewind/contracts"
import { StoreError } from "@rewind/contracts"
import { OperationJournal, type OperationJournalService } from "@rewind/core"
import { Effect, Layer, Option } from "effect"

const journalError = (message: string) =>
  Effect.fail(new StoreError({ operation: "operationJournal", message }))

/** An in-process journal: the same contract, kept in memory (lost with the process). */
export const make = (): Effect.Effect<OperationJournalService> =>
  Effect.sync(() => {
    const records = new Map<string, OperationRecord>()
    const order: Array<string> = []
    const put = (record: OperationRecord) => records.set(record.intent.operationId, record)
    return {
      begin: (intent) =>
        Effect.suspend(() => {
          if (records.has(intent.operationId)) {
            return journalError(`operation ${intent.operationId} is already journaled`)
          }
          order.push(intent.operationId)
          put({ intent, status: "pending", steps: [], redoConsumed: false })
          return Effect.void
        }),
      step: (operationId, step) =>
        Effect.suspend(() => {
          const record = records.get(operationId)
          if (record === undefined || record.status !== "pending") {
            return journalError(`operation ${operationId} is not pending`)
          }
          put({ ...record, steps: [...record.steps, step] })
          return Effect.void
        }),
      complete: (operationId, completion) =>
        Effect.suspend(() => {
          const record = records.get(operationId)
          if (record === undefined || record.status !== "pending") {
            return journalError(`operation ${operationId} is not pending`)
          }
          const redoes = record.intent.redoes
          if (completion.status === "committed" && redoes !== undefined) {
            const target = records.get(redoes)
            if (target === undefined || target.redoConsumed) {
              return journalError(`the redo entry of ${redoes} is not available`)
            }
            put({ ...target, redoConsumed: true })
          }
          put({ ...record, status: completion.status, finishedAt: completion.at })
          return Effect.void
        }),
      get: (operationId) => Effect.sync(() => Option.fromNullable(records.get(operationId))),
      incomplete: () =>
        Effect.sync(() => order.map((id) => records.get(id)!).filter((r) => r.status === "pending")),
      redoStack: (sessionId) =>
        Effect.sync(() =>
          order
            .map((id) => records.get(id)!)
            .filter(
              (r) =>
                r.intent.sessionId === sessionId &&
                r.status === "committed" &&
                r.intent.redo !== undefined &&
                !r.redoConsumed,
            )
            .reverse(),
        ),
      all: () => Effect.sync(() => order.map((id) => records.get(id)!)),
      // Nothing in memory is ever damaged.
      scan: (which) =>
        Effect.sync(() => ({
          records: order
            .map((id) => records.get(id)!)
            .filter((r) => which === "all" || r.status === "pending"),
          damaged: [],
        })),
    }
  })

/** A fresh, empty journal per build of the layer. */
export const layer: Layer.Layer<OperationJournal> = Layer.effect(OperationJournal, make())
