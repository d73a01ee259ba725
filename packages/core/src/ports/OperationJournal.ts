/**
 * The OperationJournal port: the durable journal of multi-file restores. `begin` must be durable
 * before the first file of the operation is written; `step` records progress; `complete` finishes
 * the operation and, for a committed one, makes its redo entry available in the same durable write
 * (a redo consumes the entry it reverses in its own `complete`). After a crash, `incomplete` lists
 * what `recover()` must continue or roll back; `scan` lists the same with every row that does not
 * decode named beside the readable ones, so one damaged row hides nothing else. Kept general (any operation kind, files as
 * `FileVersion`s) so the snapshot engine's point restores can use it too.
 *
 * The port only: implementations live in adapters (`@rewind/adapter-memory`'s in-process
 * `MemoryOperationJournal`; the durable one of the SQL adapters, in the same database as the
 * sessions).
 */
import type {
  OperationId,
  OperationIntent,
  OperationRecord,
  OperationStep,
  SessionId,
  StoreError,
} from "@rewind/contracts"
import { Context, type Effect, type Option } from "effect"

export interface OperationCompletion {
  readonly status: "committed" | "rolled_back"
  readonly at: number
}

/**
 * A journal row that does not decode, named by the columns stored beside its intent (written from
 * the same intent at `begin`) and what is wrong with it. It is never read as a plan.
 */
export interface DamagedOperation {
  readonly operationId: string
  readonly sessionId: string
  readonly kind: string
  readonly status: string
  readonly startedAt: number
  /** What is wrong, in a sentence naming the table and field. */
  readonly problem: string
}

export interface JournalScan {
  readonly records: ReadonlyArray<OperationRecord>
  readonly damaged: ReadonlyArray<DamagedOperation>
}

export interface OperationJournalService {
  /** Records the intent durably; fails if the operation id is already journaled. */
  readonly begin: (intent: OperationIntent) => Effect.Effect<void, StoreError>
  readonly step: (operationId: OperationId, step: OperationStep) => Effect.Effect<void, StoreError>
  /**
   * Finishes a pending operation. When it commits an operation whose intent `redoes` another, the
   * other's redo entry is consumed in the same write. Fails on an operation that is not pending.
   */
  readonly complete: (
    operationId: OperationId,
    completion: OperationCompletion,
  ) => Effect.Effect<void, StoreError>
  readonly get: (operationId: OperationId) => Effect.Effect<Option.Option<OperationRecord>, StoreError>
  /** Operations begun and never completed, oldest first. */
  readonly incomplete: () => Effect.Effect<ReadonlyArray<OperationRecord>, StoreError>
  /** Committed operations of a session whose redo entry is still available, newest first. */
  readonly redoStack: (sessionId: SessionId) => Effect.Effect<ReadonlyArray<OperationRecord>, StoreError>
  /** Every operation, oldest first (for integrity checks and GC roots). */
  readonly all: () => Effect.Effect<ReadonlyArray<OperationRecord>, StoreError>
  /**
   * The pending (or all) operations that decode, oldest first, and the rows that do not, named;
   * `incomplete` and `all` fail on a damaged row instead.
   */
  readonly scan: (which: "incomplete" | "all") => Effect.Effect<JournalScan, StoreError>
}

export class OperationJournal extends Context.Tag("@rewind/core/OperationJournal")<
  OperationJournal,
  OperationJournalService
>() {}
