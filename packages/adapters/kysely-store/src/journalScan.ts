/**
 * How a journal listing names the rows it cannot read (`OperationJournal.scan`): each damaged row
 * by the columns that name an operation whatever its intent holds, and what is wrong in one
 * sentence (table, row, field), beside the rows that decode. Shared by every SQL journal listing.
 */
import type { OperationRecord } from "@rewind/contracts"
import type { DamagedOperation, JournalScan } from "@rewind/core"
import { ParseResult } from "effect"
import type { OperationsTable } from "./sqlOperationJournal.js"

/** The columns that name an operation whatever its intent holds. */
export type ScannedRow = Pick<
  OperationsTable,
  "operation_id" | "session_id" | "kind" | "status" | "started_at"
>

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
