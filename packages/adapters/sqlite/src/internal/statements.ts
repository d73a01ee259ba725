/**
 * The prepared statements of the hot paths (appending batches of events, reading a stream cold,
 * the version lookup every command makes). Events are inserted `EVENT_BATCH` rows per statement: a
 * fork bundle is tens of thousands of rows, and one statement per row costs a VM run and a binding
 * round trip per event.
 * better-sqlite3 is synchronous, so these run on the store's one connection inside the same
 * `BEGIN IMMEDIATE` transaction Kysely opened; building and compiling a Kysely query per event
 * would cost more than the insert itself.
 */

import type { EventRowTuple } from "@rewind/kysely-store"
import type Database from "better-sqlite3"

/** Rows per multi-row insert: 6,000 parameters, below SQLite's limit of 32,766 (fewer, larger statements cost less per row). */
export const EVENT_BATCH = 1_000

export interface HotStatements {
  readonly streamVersion: Database.Statement<[string], number>
  readonly insertStream: Database.Statement<[string, number, number]>
  readonly advanceStream: Database.Statement<[number, number, string, number]>
  readonly insertEvent: Database.Statement<[string, number, string, number, string, number]>
  /** `insert … values (…), (…)` of `EVENT_BATCH` rows: parameters row after row. */
  readonly insertEvents: Database.Statement<Array<string | number>>
  /** The positions of a stream's rows `from..to` (sequences), in order. */
  readonly positions: Database.Statement<[string, number, number], number>
  readonly lastSequence: Database.Statement<[string], number | null>
  readonly readEvents: Database.Statement<[string, number], EventRowTuple>
}

export const prepareHotStatements = (db: Database.Database): HotStatements => ({
  streamVersion: db.prepare<[string], number>("select version from streams where session_id = ?").pluck(),
  insertStream: db.prepare("insert into streams (session_id, version, updated_at) values (?, ?, ?)"),
  advanceStream: db.prepare(
    "update streams set version = ?, updated_at = ? where session_id = ? and version = ?",
  ),
  insertEvent: db.prepare(
    "insert into events (session_id, sequence, type, version, payload, at) values (?, ?, ?, ?, ?, ?)",
  ),
  insertEvents: db.prepare<Array<string | number>>(
    `insert into events (session_id, sequence, type, version, payload, at) values ${Array.from(
      { length: EVENT_BATCH },
      () => "(?, ?, ?, ?, ?, ?)",
    ).join(", ")}`,
  ),
  positions: db
    .prepare<[string, number, number], number>(
      "select position from events where session_id = ? and sequence between ? and ? order by sequence",
    )
    .pluck(),
  lastSequence: db
    .prepare<[string], number | null>("select max(sequence) from events where session_id = ?")
    .pluck(),
  readEvents: db
    .prepare<[string, number], EventRowTuple>(
      "select sequence, type, version, payload, at from events where session_id = ? and sequence > ? order by sequence",
    )
    .raw(),
})
