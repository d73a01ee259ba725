/**
 * The row types of the session store's tables, as Kysely sees them, the same in every SQL dialect
 * (each adapter's migrations create them with its own column types; integers always arrive as JS
 * numbers). `events` and `command_facts` are the record (append-only, enforced by triggers);
 * `streams` and `sessions` are projections kept for speed, written in the same transaction as the
 * events they summarise and rebuildable from them.
 */
import type { Generated } from "kysely"

export interface RewindMetaTable {
  readonly key: string
  readonly value: string
}

/** One row per stream that has events: its version (last sequence) and last append time. */
export interface StreamsTable {
  readonly session_id: string
  readonly version: number
  readonly updated_at: number
}

export interface EventsTable {
  /** Global append order across all streams (SQLite's rowid, an identity column in PostgreSQL). */
  readonly position: Generated<number>
  readonly session_id: string
  readonly sequence: number
  readonly type: string
  readonly version: number
  /** The encoded payload as JSON text (lone surrogates travel as `\uXXXX` escapes). */
  readonly payload: string
  readonly at: number
}

/** The session record of every stream that has a SessionCreated event. */
export interface SessionsTable {
  readonly session_id: string
  readonly kind: string
  readonly parent_id: string | null
  readonly root_trace_id: string
  /** A copy for people reading the tables with SQL tools (see `textCopy`); the exact title is in the event. */
  readonly title: string
  readonly cwd: string
  readonly created_at: number
  /** The `events.position` of the stream's first SessionCreated: listing order and exact title. */
  readonly created_position: number
}

export interface CommandFactsTable {
  readonly session_id: string
  readonly command_id: string
  /** The command's result as JSON text. */
  readonly result: string
  readonly at: number
}

export interface StoreTables {
  readonly rewind_meta: RewindMetaTable
  readonly streams: StreamsTable
  readonly events: EventsTable
  readonly sessions: SessionsTable
  readonly command_facts: CommandFactsTable
}
