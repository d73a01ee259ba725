// Issue 22: doctor is a sequence of named steps over one Findings; each step is checked here on its
// own (the whole run is covered by doctor.test.ts and doctor.integrity.test.ts).
import { describe, expect, it } from "@effect/vitest"
import type { ContentHash, OperationId, OperationRecord, SessionId, WorkspacePath } from "@rewind/contracts"
import { OperationJournal, type OperationJournalService } from "@rewind/core"
import { Effect, Layer } from "effect"
import { Findings } from "../src/internal/doctor/findings.js"
import { checkJournal } from "../src/internal/doctor/journal.js"

const hash = (c: string) => c.repeat(64) as ContentHash
const kinds = (findings: Findings) => findings.problems.map((p) => p.kind)

const journalOf = (
  records: ReadonlyArray<OperationRecord>,
  damaged: OperationJournalService["scan"] = () => Effect.succeed({ records, damaged: [] }),
) => Layer.succeed(OperationJournal, { scan: damaged } as unknown as OperationJournalService)

const record = (status: OperationRecord["status"], sessionId: string): OperationRecord => ({
  intent: {
    operationId: `op-${status}` as OperationId,
    sessionId: sessionId as SessionId,
    kind: "direct_restore",
    files: [
      {
        path: "a.txt" as WorkspacePath,
        rescue: { _tag: "present", hash: hash("a") },
        planned: { _tag: "present", hash: hash("b") },
      },
    ],
    startedAt: 1,
  },
  status,
  steps: [],
  redoConsumed: false,
})

describe("doctor's steps", () => {
  it("Findings: a reference to a damaged blob is not missing; a missing one is reported once per place", () => {
    const findings = new Findings()
    findings.verified.add(hash("a"))
    findings.damaged.add(hash("b"))
    findings.needBlob(hash("a"), "here")
    findings.needBlob(hash("b"), "here")
    findings.needBlob(hash("c"), "here")
    findings.needBlob(hash("c"), "here")
    findings.needBlob(hash("c"), "there")
    findings.needBlob(undefined, "nowhere")
    expect(findings.references).toBe(5)
    expect(findings.problems.map((p) => [p.kind, p.subject])).toEqual([
      ["missing_blob", hash("c")],
      ["missing_blob", hash("c")],
    ])
  })

  it.effect(
    "checkJournal: a pending operation of an unknown session needs its content and is incomplete",
    () =>
      Effect.gen(function* () {
        const findings = new Findings()
        findings.verified.add(hash("a"))
        const journal = yield* checkJournal(findings, new Set<SessionId>(["s1" as SessionId])).pipe(
          Effect.provide(journalOf([record("pending", "gone"), record("committed", "s1")])),
        )
        expect(journal).toEqual({ operations: 2, incomplete: 1 })
        // The pending one needs both versions (b is missing); the committed one without redo needs none.
        expect(kinds(findings)).toEqual(["missing_blob", "missing_parent", "incomplete_operation"])
        expect(findings.references).toBe(2)
      }),
  )

  it.effect("checkJournal: an unreadable journal is one finding; without a journal the step is skipped", () =>
    Effect.gen(function* () {
      const findings = new Findings()
      const failing = journalOf([], () => Effect.fail({ _tag: "StoreError", message: "disk gone" } as never))
      expect(yield* checkJournal(findings, new Set()).pipe(Effect.provide(failing))).toEqual({
        operations: 0,
        incomplete: 0,
      })
      expect(findings.problems).toMatchObject([{ kind: "journal_unreadable", subject: "journal" }])
      const none = new Findings()
      expect(yield* checkJournal(none, new Set())).toEqual({ operations: 0, incomplete: 0 })
      expect(none.problems).toEqual([])
    }),
  )
})
