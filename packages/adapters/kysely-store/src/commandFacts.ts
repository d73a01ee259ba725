/**
 * Command facts as rows: how a fact is validated and encoded before a write transaction, and the
 * two queries every SQL adapter runs on `command_facts` (look one up, write a commit's facts).
 */
import { type SessionId, StoreError } from "@rewind/contracts"
import type { CommandFact } from "@rewind/core"
import type { Kysely } from "kysely"
import type { StoreTables } from "./tables.js"

export interface FactRow {
  readonly session_id: string
  readonly command_id: string
  /** The command's result as JSON text. */
  readonly result: string
  readonly at: number
}

/**
 * Validates and encodes a commit's facts; throws a StoreError naming what is wrong. A command id
 * must be well-formed Unicode without NUL: SQL text columns would store anything else altered
 * (two ids could then collide) or refuse it, and an id that one adapter accepts and another
 * refuses would make hosts non-portable.
 */
export const encodeFacts = (facts: ReadonlyArray<CommandFact>): Array<FactRow> => {
  const keys = new Set<string>()
  return facts.map((f) => {
    if (!f.commandId.isWellFormed() || f.commandId.includes("\u0000")) {
      throw new StoreError({
        operation: "commit",
        message: "a command id must be well-formed Unicode text without NUL characters",
      })
    }
    const key = `${f.sessionId}\u0000${f.commandId}`
    if (keys.has(key)) {
      throw new StoreError({
        operation: "commit",
        message: `command ${f.commandId} of session ${f.sessionId} appears twice in one commit`,
      })
    }
    keys.add(key)
    if (!Number.isSafeInteger(f.at) || f.at < 0) {
      throw new StoreError({
        operation: "commit",
        message: `fact time must be a non-negative integer, got ${f.at}`,
      })
    }
    const result = JSON.stringify(f.result ?? null)
    if (result === undefined) {
      throw new StoreError({ operation: "commit", message: "a command fact's result has no JSON form" })
    }
    return { session_id: f.sessionId, command_id: f.commandId, result, at: f.at }
  })
}

/** The stored result, as the command returned it. */
export const factResult = (json: string): unknown => JSON.parse(json)

export const selectFact = (db: Kysely<StoreTables>, sessionId: string, commandId: string) =>
  db
    .selectFrom("command_facts")
    .select(["result", "at"])
    .where("session_id", "=", sessionId)
    .where("command_id", "=", commandId)
    .executeTakeFirst()

export const insertFacts = async (db: Kysely<StoreTables>, rows: ReadonlyArray<FactRow>) => {
  if (rows.length > 0) await db.insertInto("command_facts").values(rows).execute()
}

export const toCommandFact = (
  sessionId: SessionId,
  commandId: string,
  row: { readonly result: string; readonly at: number },
): CommandFact => ({ sessionId, commandId, result: factResult(row.result), at: row.at })
