/**
 * The projection tables (`streams`, `sessions`): how an append keeps them in step, and how they
 * are rebuilt from the events alone. They only exist for speed; the events are the record. The
 * statements are plain Kysely (and one `insert … select … on conflict` that SQLite and PostgreSQL
 * both read the same way), so every SQL adapter runs the same code.
 */
import type { Session } from "@rewind/contracts"
import { type Kysely, sql } from "kysely"
import { decodeStored } from "./eventRows.js"
import type { StoreTables } from "./tables.js"

/**
 * The copy of a text kept in a plain SQL column for people reading the tables: well-formed Unicode
 * without NUL. A lone surrogate cannot be stored as UTF-8 and PostgreSQL text cannot hold NUL, so
 * both become U+FFFD here; the exact text stays in the event's JSON payload.
 */
export const textCopy = (text: string): string => text.toWellFormed().replaceAll("\u0000", "\uFFFD")

/**
 * Records a stream's SessionCreated. A later SessionCreated in the same stream updates the record
 * but keeps the first one's position, so listing order never changes.
 */
export const upsertSession = (
  db: Kysely<StoreTables>,
  streamId: string,
  session: Session,
  position: number,
) =>
  db
    .insertInto("sessions")
    .values({
      session_id: streamId,
      kind: session.kind,
      parent_id: session.parentId ?? null,
      root_trace_id: session.rootTraceId,
      title: textCopy(session.title),
      cwd: textCopy(session.cwd),
      created_at: session.createdAt,
      created_position: position,
    })
    .onConflict((oc) =>
      oc.column("session_id").doUpdateSet((eb) => ({
        kind: eb.ref("excluded.kind"),
        parent_id: eb.ref("excluded.parent_id"),
        root_trace_id: eb.ref("excluded.root_trace_id"),
        title: eb.ref("excluded.title"),
        cwd: eb.ref("excluded.cwd"),
        created_at: eb.ref("excluded.created_at"),
      })),
    )
    .execute()

export interface RebuildReport {
  readonly streams: number
  readonly sessions: number
}

/**
 * Recomputes `streams` and `sessions` from `events`, inside the caller's write transaction.
 * Throws EventDecodeError when a SessionCreated event cannot be read by this build.
 */
export const rebuildProjectionTables = async (trx: Kysely<StoreTables>): Promise<RebuildReport> => {
  await trx.deleteFrom("sessions").execute()
  await trx
    .deleteFrom("streams")
    .where("session_id", "not in", trx.selectFrom("events").select("session_id").distinct())
    .execute()
  await sql`
    insert into streams (session_id, version, updated_at)
    select last.session_id, last.version, e.at
    from (select session_id, max(sequence) as version from events group by session_id) as last
    join events e on e.session_id = last.session_id and e.sequence = last.version
    where true
    on conflict (session_id) do update set version = excluded.version, updated_at = excluded.updated_at
  `.execute(trx)

  const created = await trx
    .selectFrom("events")
    .select(["position", "session_id", "type", "version", "payload"])
    .where("type", "=", "SessionCreated")
    .orderBy("position")
    .execute()
  for (const row of created) {
    const event = decodeStored(row.type, row.version, row.payload, `at position ${row.position}`)
    if (event._tag === "SessionCreated") await upsertSession(trx, row.session_id, event.session, row.position)
  }

  const count = async (table: "streams" | "sessions") =>
    Number(
      (
        await trx
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    )
  return { streams: await count("streams"), sessions: await count("sessions") }
}
