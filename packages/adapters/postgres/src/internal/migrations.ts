/**
 * The PostgreSQL store's schema history, as code. Kysely's `Migrator` runs the pending migrations
 * (through the shared in-code provider) in one transaction, and each records its version in
 * `rewind_meta` in that same transaction. Every table lives in the store's own schema (the
 * connections' `search_path`); trigger functions name their tables with the schema written in,
 * so a raw SQL session with another `search_path` is checked the same way.
 *
 * Rules for a new migration: append it with the next version and a name that sorts after the last
 * one; never edit a released migration; anything that rewrites `events` must keep every row (the
 * append-only triggers have to be dropped and re-created inside the migration).
 */
import type { StoreMigration } from "@rewind/kysely-store"
import { type Kysely, sql } from "kysely"
import { SqlState } from "./pgErrors.js"

/** The value of `rewind_meta.store` in every Rewind store. */
export const STORE_MARKER = "rewind-session-store"

const currentSchema = async (db: Kysely<unknown>): Promise<string> => {
  const result = await sql<{ schema: string }>`select current_schema() as schema`.execute(db)
  const schema = result.rows[0]?.schema
  if (schema === undefined || schema === null) throw new Error("the store's schema is not on the search_path")
  return schema
}

const sessionStore: StoreMigration = {
  version: 1,
  name: "0001_session_store",
  up: async (db) => {
    const schema = await currentSchema(db)
    const qualified = (table: string) => sql.raw(`"${schema}"."${table}"`)

    await sql`create table rewind_meta (key text primary key, value text not null)`.execute(db)

    // Ids are compared byte for byte (collation "C"): the lock order of a commit's streams and the
    // keys of command facts must not depend on the server's locale.
    await sql`create table streams (
      session_id text collate "C" primary key,
      version integer not null check (version >= 1),
      updated_at bigint not null
    )`.execute(db)

    await sql`create table events (
      position bigint generated always as identity primary key,
      session_id text collate "C" not null references streams (session_id),
      sequence integer not null check (sequence >= 1),
      type text not null,
      version integer not null,
      payload text not null,
      at bigint not null,
      constraint events_stream_sequence unique (session_id, sequence)
    )`.execute(db)
    // Rebuilding the sessions projection reads only these rows.
    await sql`create index events_session_created on events (position) where type = 'SessionCreated'`.execute(
      db,
    )

    await sql`create table sessions (
      session_id text collate "C" primary key references streams (session_id),
      kind text not null,
      parent_id text collate "C",
      root_trace_id text not null,
      title text not null,
      cwd text not null,
      created_at bigint not null,
      created_position bigint not null unique references events (position)
    )`.execute(db)
    await sql`create index sessions_parent on sessions (parent_id)`.execute(db)

    await sql`create table command_facts (
      session_id text collate "C" not null,
      command_id text collate "C" not null,
      result text not null,
      at bigint not null,
      constraint command_facts_pk primary key (session_id, command_id)
    )`.execute(db)

    // The record is append-only, also for raw SQL: updates, deletes and truncation are refused.
    await sql`create function rewind_refuse_change() returns trigger language plpgsql as $$
      begin
        raise exception 'rewind: % are append-only (% refused)', tg_table_name, lower(tg_op)
          using errcode = ${sql.lit(SqlState.appendOnly)};
      end
    $$`.execute(db)
    for (const table of ["events", "command_facts"]) {
      await sql`create trigger ${sql.raw(`${table}_append_only`)} before update or delete on ${sql.table(table)}
        for each row execute function rewind_refuse_change()`.execute(db)
      await sql`create trigger ${sql.raw(`${table}_no_truncate`)} before truncate on ${sql.table(table)}
        for each statement execute function rewind_refuse_change()`.execute(db)
    }

    // A stream has no holes. Checked once per statement over the rows it inserted (a transition
    // table): within each stream they are consecutive, and the first one follows a row that is
    // already there (or is sequence 1). With the unique (session_id, sequence) key, that keeps
    // every stream numbered 1..N, and costs one index probe per stream and statement rather than
    // a function call per row.
    await sql`create function rewind_events_contiguous() returns trigger language plpgsql as $$
      declare
        broken record;
      begin
        select s.session_id, s.first into broken
        from (select session_id, min(sequence) as first, max(sequence) as last, count(*) as n
              from inserted group by session_id) s
        where s.last - s.first + 1 <> s.n
           or (s.first > 1 and not exists (
                select 1 from ${qualified("events")} e
                where e.session_id = s.session_id and e.sequence = s.first - 1))
        limit 1;
        if found then
          raise exception 'rewind: event sequence must continue its stream without a gap (session %, from sequence %)',
            broken.session_id, broken.first using errcode = ${sql.lit(SqlState.sequenceGap)};
        end if;
        return null;
      end
    $$`.execute(db)
    await sql`create trigger events_contiguous after insert on events referencing new table as inserted
      for each statement execute function rewind_events_contiguous()`.execute(db)

    await sql`insert into rewind_meta (key, value) values ('store', ${STORE_MARKER})`.execute(db)
  },
}

const artifacts: StoreMigration = {
  version: 2,
  name: "0002_artifacts",
  up: async (db) => {
    // Content-addressed blobs shared by every worker. `stored_at` (the server's clock, ms) is
    // refreshed by every put of the content, so a sweep that keeps blobs younger than its grace
    // window never deletes one a writer has just put again.
    await sql`create table artifacts (
      hash text collate "C" primary key check (hash ~ '^[0-9a-f]{64}$'),
      content bytea not null,
      size bigint not null check (size >= 0),
      stored_at bigint not null
    )`.execute(db)
    await sql`create index artifacts_stored_at on artifacts (stored_at)`.execute(db)
  },
}

/**
 * The operation journal (DESIGN §7), the same tables as SQLite's migration 0002 (the SQL on them is
 * shared, in @rewind/kysely-store): one row per multi-file restore with its intent as JSON, one
 * per step. Rows are updated as an operation completes (status, redo entry consumed), so these
 * tables are not append-only. Flags are 0/1 smallints, as in SQLite, so the shared SQL is one.
 */
const operationJournal: StoreMigration = {
  version: 3,
  name: "0003_operation_journal",
  up: async (db) => {
    await sql`create table operations (
      seq bigint generated always as identity primary key,
      operation_id text collate "C" not null unique,
      session_id text collate "C" not null,
      kind text not null,
      intent text not null,
      status text not null check (status in ('pending', 'committed', 'rolled_back')),
      started_at bigint not null,
      finished_at bigint,
      redoes text collate "C",
      redo_available smallint not null check (redo_available in (0, 1)),
      redo_consumed smallint not null check (redo_consumed in (0, 1))
    )`.execute(db)
    await sql`create index operations_pending on operations (seq) where status = 'pending'`.execute(db)
    await sql`create index operations_session on operations (session_id, seq)`.execute(db)
    await sql`create table operation_steps (
      id bigint generated always as identity primary key,
      operation_id text collate "C" not null references operations (operation_id),
      step integer not null,
      path text not null,
      state text not null,
      at bigint not null
    )`.execute(db)
    await sql`create index operation_steps_operation on operation_steps (operation_id, id)`.execute(db)
  },
}

/**
 * Operation intents in a table of their own, keyed by the operation's `seq`, as in SQLite (its
 * migration 0004): the shared journal's SQL is one, so both stores have one schema. PostgreSQL keeps
 * a large intent out of line (TOAST) and would not rewrite it on a status update; the table is here
 * for the one schema, not for speed. Every intent is copied before the column goes, in the same
 * transaction, so a pending operation reads back whole.
 */
const operationIntents: StoreMigration = {
  version: 4,
  name: "0004_operation_intents",
  up: async (db) => {
    await sql`create table operation_intents (
      seq bigint primary key references operations (seq),
      intent text not null
    )`.execute(db)
    await sql`insert into operation_intents (seq, intent) select seq, intent from operations`.execute(db)
    await sql`alter table operations drop column intent`.execute(db)
  },
}

/** Every migration this build knows, oldest first. */
export const POSTGRES_MIGRATIONS: ReadonlyArray<StoreMigration> = [
  sessionStore,
  artifacts,
  operationJournal,
  operationIntents,
]
