/**
 * The OperationJournal contract every implementation must keep: an intent is readable back as
 * written, steps accumulate in order, completion happens once, a redo consumes the entry it
 * reverses in the same completion, and (for a durable journal) all of it survives a reopen.
 */
import { describe, expect, it } from "@effect/vitest"
import type { ContentHash, OperationId, OperationIntent, SessionId, WorkspacePath } from "@rewind/contracts"
import type { OperationJournalService } from "@rewind/core"
import { Effect, Option, type Scope } from "effect"

export interface OperationJournalHarness {
  /**
   * A fresh journal, and a way to open it again over the same storage (what a process restart
   * would see). A journal without durable storage returns the same service from `reopen`.
   */
  readonly make: Effect.Effect<
    {
      readonly journal: OperationJournalService
      readonly reopen: Effect.Effect<OperationJournalService, unknown, Scope.Scope>
    },
    unknown,
    Scope.Scope
  >
}

const hash = (c: string) => c.repeat(64).slice(0, 64) as ContentHash

/** A two-file cascade intent with an (empty) redo entry, `extra` laid over it: the suite's and the adapters' fixture. */
export const journalIntent = (
  id: string,
  session: string,
  extra: Partial<OperationIntent> = {},
): OperationIntent => ({
  operationId: id as OperationId,
  sessionId: session as SessionId,
  kind: "cascade",
  files: [
    {
      path: "a.txt" as WorkspacePath,
      rescue: { _tag: "present", hash: hash("a"), mode: 0o644 },
      planned: { _tag: "absent" },
    },
    {
      path: "src/b.ts" as WorkspacePath,
      rescue: { _tag: "absent" },
      planned: { _tag: "present", hash: hash("b") },
    },
  ],
  startedAt: 10,
  redo: { activeBranch: [], spentCheckpointIds: [] },
  ...extra,
})

const intent = journalIntent

export const operationJournalConformance = (name: string, harness: OperationJournalHarness): void => {
  describe(`OperationJournal conformance: ${name}`, () => {
    it.scoped("keeps an intent and its steps as written, and completes it once", () =>
      Effect.gen(function* () {
        const { journal } = yield* harness.make
        const written = intent("op_1", "s1")
        yield* journal.begin(written)
        yield* journal.step("op_1" as OperationId, {
          step: 0,
          path: "a.txt" as WorkspacePath,
          state: "writing",
          at: 11,
        })
        yield* journal.step("op_1" as OperationId, {
          step: 1,
          path: "src/b.ts" as WorkspacePath,
          state: "writing",
          at: 12,
        })
        const pending = Option.getOrThrow(yield* journal.get("op_1" as OperationId))
        expect(pending.intent).toEqual(written)
        expect(pending.status).toBe("pending")
        expect(pending.steps.map((s) => s.path)).toEqual(["a.txt", "src/b.ts"])
        expect((yield* journal.incomplete()).map((r) => r.intent.operationId)).toEqual(["op_1"])

        yield* journal.complete("op_1" as OperationId, { status: "committed", at: 20 })
        const done = Option.getOrThrow(yield* journal.get("op_1" as OperationId))
        expect(done.status).toBe("committed")
        expect(done.finishedAt).toBe(20)
        expect(yield* journal.incomplete()).toEqual([])
        // Once complete, an operation takes no more steps and no second completion.
        expect(
          (yield* Effect.flip(journal.complete("op_1" as OperationId, { status: "rolled_back", at: 21 })))
            ._tag,
        ).toBe("StoreError")
        expect(
          (yield* Effect.flip(
            journal.step("op_1" as OperationId, {
              step: 2,
              path: "a.txt" as WorkspacePath,
              state: "writing",
              at: 22,
            }),
          ))._tag,
        ).toBe("StoreError")
        // The same operation id cannot be journaled twice.
        expect((yield* Effect.flip(journal.begin(written)))._tag).toBe("StoreError")
        expect(Option.isNone(yield* journal.get("op_unknown" as OperationId))).toBe(true)
      }),
    )

    it.scoped("a redo stack per session, newest first; a committed redo consumes its entry", () =>
      Effect.gen(function* () {
        const { journal } = yield* harness.make
        yield* journal.begin(intent("op_1", "s1"))
        yield* journal.complete("op_1" as OperationId, { status: "committed", at: 1 })
        yield* journal.begin(intent("op_2", "s2"))
        yield* journal.complete("op_2" as OperationId, { status: "committed", at: 2 })
        yield* journal.begin(intent("op_3", "s1"))
        yield* journal.complete("op_3" as OperationId, { status: "committed", at: 3 })
        yield* journal.begin(intent("op_4", "s1"))
        yield* journal.complete("op_4" as OperationId, { status: "rolled_back", at: 4 })
        const ids = (s: string) =>
          Effect.map(journal.redoStack(s as SessionId), (rs) => rs.map((r) => r.intent.operationId))
        expect(yield* ids("s1")).toEqual(["op_3", "op_1"])
        expect(yield* ids("s2")).toEqual(["op_2"])

        // A redo that is rolled back consumes nothing; one that commits consumes its entry.
        const { redo: _, ...bare } = intent("op_5", "s1", { kind: "redo", redoes: "op_3" as OperationId })
        yield* journal.begin(bare)
        yield* journal.complete("op_5" as OperationId, { status: "rolled_back", at: 5 })
        expect(yield* ids("s1")).toEqual(["op_3", "op_1"])
        const { redo: __, ...again } = intent("op_6", "s1", { kind: "redo", redoes: "op_3" as OperationId })
        yield* journal.begin(again)
        yield* journal.complete("op_6" as OperationId, { status: "committed", at: 6 })
        expect(yield* ids("s1")).toEqual(["op_1"])
        expect(Option.getOrThrow(yield* journal.get("op_3" as OperationId)).redoConsumed).toBe(true)

        // An entry is consumed once: a second redo of it cannot commit.
        const { redo: ___, ...twice } = intent("op_7", "s1", { kind: "redo", redoes: "op_3" as OperationId })
        yield* journal.begin(twice)
        expect(
          (yield* Effect.flip(journal.complete("op_7" as OperationId, { status: "committed", at: 7 })))._tag,
        ).toBe("StoreError")
        expect(Option.getOrThrow(yield* journal.get("op_7" as OperationId)).status).toBe("pending")
        expect((yield* journal.all()).map((r) => r.intent.operationId)).toEqual([
          "op_1",
          "op_2",
          "op_3",
          "op_4",
          "op_5",
          "op_6",
          "op_7",
        ])
      }),
    )

    it.scoped("what was journaled is there after a reopen", () =>
      Effect.gen(function* () {
        const { journal, reopen } = yield* harness.make
        yield* journal.begin(intent("op_1", "s1"))
        yield* journal.step("op_1" as OperationId, {
          step: 0,
          path: "a.txt" as WorkspacePath,
          state: "writing",
          at: 11,
        })
        yield* journal.begin(intent("op_2", "s1"))
        yield* journal.complete("op_2" as OperationId, { status: "committed", at: 12 })
        const reopened = yield* reopen
        const pending = yield* reopened.incomplete()
        expect(pending.map((r) => [r.intent.operationId, r.steps.length])).toEqual([["op_1", 1]])
        expect(pending[0]!.intent).toEqual(intent("op_1", "s1"))
        expect((yield* reopened.redoStack("s1" as SessionId)).map((r) => r.intent.operationId)).toEqual([
          "op_2",
        ])
      }),
    )
  })
}
