/**
 * Doctor's journal step: every operation the journal holds, a damaged row named beside the others
 * (which are still checked). Content a pending operation or an available redo entry needs must be
 * there; each operation must belong to a session in the store; an operation begun and never
 * completed is a problem `recover()` resolves. A host without a journal skips the step.
 */
import type { OperationRecord, SessionId } from "@rewind/contracts"
import { OperationJournal } from "@rewind/core"
import { Effect, Either, Option } from "effect"
import { type Findings, versionHash } from "./findings.js"
import type { DoctorReport } from "./report.js"

const checkOperation = (findings: Findings, known: ReadonlySet<SessionId>, record: OperationRecord) => {
  const { intent } = record
  const live = record.status === "pending" || (intent.redo !== undefined && !record.redoConsumed)
  if (live) {
    for (const f of intent.files) {
      const from = `operation ${intent.operationId} (${f.path})`
      findings.needBlob(versionHash(f.rescue), from)
      findings.needBlob(versionHash(f.planned), from)
    }
  }
  if (!known.has(intent.sessionId)) {
    findings.problem(
      "missing_parent",
      intent.operationId,
      `operation ${intent.operationId} belongs to session ${intent.sessionId}, which is not in the store`,
    )
  }
  if (record.status === "pending") {
    findings.problem(
      "incomplete_operation",
      intent.operationId,
      intent.tree === undefined
        ? `operation ${intent.operationId} (${intent.kind}, ${intent.files.length} file(s)) was begun and never completed: each of its files may hold its rescue or its planned version; run recover() to continue or roll it back`
        : `operation ${intent.operationId} (${intent.kind}) was begun and never completed: the isolated fork's private directory ${intent.tree.staging} (or a tree at ${intent.tree.root} no session owns) may be left over; run recover() to remove it`,
    )
  }
}

export const checkJournal = (findings: Findings, known: ReadonlySet<SessionId>) =>
  Effect.gen(function* () {
    const none: DoctorReport["journal"] = { operations: 0, incomplete: 0 }
    const journal = yield* Effect.serviceOption(OperationJournal)
    if (Option.isNone(journal)) return none
    const scanned = yield* Effect.either(journal.value.scan("all"))
    if (Either.isLeft(scanned)) {
      findings.problem(
        "journal_unreadable",
        "journal",
        `the operation journal cannot be read: ${scanned.left.message}`,
      )
      return none
    }
    const { records, damaged } = scanned.right
    for (const row of damaged) findings.problem("journal_unreadable", row.operationId, row.problem)
    for (const record of records) checkOperation(findings, known, record)
    const incomplete =
      damaged.filter((row) => row.status === "pending").length +
      records.filter((record) => record.status === "pending").length
    return { operations: records.length + damaged.length, incomplete } satisfies DoctorReport["journal"]
  })
