/**
 * The store's schema history, as code. Each migration has a version number; Kysely's `Migrator`
 * runs the pending ones (through the in-code provider below) inside one `BEGIN IMMEDIATE`
 * transaction, and each records its version in `PRAGMA user_version` and `rewind_meta` in that
 * same transaction, so the recorded version can never disagree with the tables.
 *
 * Rules for a new migration: append it with the next version and a name that sorts after the last
 * one; never edit a released migration; anything that rewrites `events` must keep every row (the
 * append-only triggers have to be dropped and re-created inside the migration).
 */
import {
  recordSchemaVersion,
  type StoreMigration,
  migrationProvider as sharedProvider,
} from "@rewind/kysely-store"
import { type Kysely, type MigrationProvider, sql } from "kysely"

export { latestVersion, type StoreMigration } from "@rewind/kysely-store"

/** `PRAGMA application_id` of a Rewind store: "RWND" in ASCII. */
export const REWIND_APPLICATION_ID = 0x52574e44

const appendOnly = (table: string) => [
  sql`create trigger ${sql.raw(`${table}_no_update`)} before update on ${sql.table(table)}
      begin select raise(abort, ${sql.lit(`rewind: ${table} are append-only (update refused)`)}); end`,
  sql`create trigger ${sql.raw(`${table}_no_delete`)} before delete on ${sql.table(table)}
      begin select raise(abort, ${sql.lit(`rewind: ${table} are append-only (delete refused)`)}); end`,
]

const initial: StoreMigration = {
  version: 1,
  name: "0001_initial",
  up: async (db) => {
    await sql`pragma application_id = ${sql.raw(String(REWIND_APPLICATION_ID))}`.execute(db)

    await db.schema
      .createTable("rewind_meta")
      .addColumn("key", "text", (c) => c.primaryKey())
      .addColumn("value", "text", (c) => c.notNull())
      .modifyEnd(sql`strict`)
      .execute()

    await db.schema
      .createTable("streams")
      .addColumn("session_id", "text", (c) => c.primaryKey())
      .addColumn("version", "integer", (c) => c.notNull().check(sql`version >= 1`))
      .addColumn("updated_at", "integer", (c) => c.notNull())
      .modifyEnd(sql`strict, without rowid`)
      .execute()

    await db.schema
      .createTable("events")
      .addColumn("position", "integer", (c) => c.primaryKey())
      .addColumn("session_id", "text", (c) => c.notNull().references("streams.session_id"))
      .addColumn("sequence", "integer", (c) => c.notNull().check(sql`sequence >= 1`))
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("version", "integer", (c) => c.notNull())
      .addColumn("payload", "text", (c) => c.notNull())
      .addColumn("at", "integer", (c) => c.notNull())
      .addUniqueConstraint("events_stream_sequence", ["session_id", "sequence"])
      .modifyEnd(sql`strict`)
      .execute()

    // Rebuilding the sessions projection reads only these rows.
    await db.schema
      .createIndex("events_session_created")
      .on("events")
      .column("position")
      .where(sql.ref("type"), "=", "SessionCreated")
      .execute()

    await db.schema
      .createTable("sessions")
      .addColumn("session_id", "text", (c) => c.primaryKey().references("streams.session_id"))
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("parent_id", "text")
      .addColumn("root_trace_id", "text", (c) => c.notNull())
      .addColumn("title", "text", (c) => c.notNull())
      .addColumn("cwd", "text", (c) => c.notNull())
      .addColumn("created_at", "integer", (c) => c.notNull())
      .addColumn("created_position", "integer", (c) => c.notNull().unique().references("events.position"))
      .modifyEnd(sql`strict`)
      .execute()
    await db.schema.createIndex("sessions_parent").on("sessions").column("parent_id").execute()

    await db.schema
      .createTable("command_facts")
      .addColumn("session_id", "text", (c) => c.notNull())
      .addColumn("command_id", "text", (c) => c.notNull())
      .addColumn("result", "text", (c) => c.notNull())
      .addColumn("at", "integer", (c) => c.notNull())
      .addPrimaryKeyConstraint("command_facts_pk", ["session_id", "command_id"])
      .modifyEnd(sql`strict`)
      .execute()

    for (const statement of [...appendOnly("events"), ...appendOnly("command_facts")]) {
      await statement.execute(db)
    }
    // A stream has no holes: each event continues its stream exactly where it ended.
    await sql`create trigger events_contiguous before insert on events
      when new.sequence <> coalesce((select max(sequence) from events where session_id = new.session_id), 0) + 1
      begin select raise(abort, 'rewind: event sequence must continue its stream without a gap'); end`.execute(
      db,
    )

    await sql`insert into rewind_meta (key, value) values ('store', 'rewind-session-store')`.execute(db)
  },
}

/**
 * The operation journal (DESIGN §7): one row per multi-file restore, its intent (every file's
 * rescue and planned version) as JSON, and one row per step. Rows are updated as an operation
 * completes (status, redo entry consumed), so these tables are not append-only.
 */
const operationJournal: StoreMigration = {
  version: 2,
  name: "0002_operation_journal",
  up: async (db) => {
    await db.schema
      .createTable("operations")
      .addColumn("seq", "integer", (c) => c.primaryKey())
      .addColumn("operation_id", "text", (c) => c.notNull().unique())
      .addColumn("session_id", "text", (c) => c.notNull())
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("intent", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) =>
        c.notNull().check(sql`status in ('pending', 'committed', 'rolled_back')`),
      )
      .addColumn("started_at", "integer", (c) => c.notNull())
      .addColumn("finished_at", "integer")
      .addColumn("redoes", "text")
      .addColumn("redo_available", "integer", (c) => c.notNull().check(sql`redo_available in (0, 1)`))
      .addColumn("redo_consumed", "integer", (c) => c.notNull().check(sql`redo_consumed in (0, 1)`))
      .modifyEnd(sql`strict`)
      .execute()
    await db.schema
      .createIndex("operations_pending")
      .on("operations")
      .column("seq")
      .where(sql.ref("status"), "=", "pending")
      .execute()
    await db.schema
      .createIndex("operations_session")
      .on("operations")
      .columns(["session_id", "seq"])
      .execute()
    await db.schema
      .createTable("operation_steps")
      .addColumn("id", "integer", (c) => c.primaryKey())
      .addColumn("operation_id", "text", (c) => c.notNull().references("operations.operation_id"))
      .addColumn("step", "integer", (c) => c.notNull())
      .addColumn("path", "text", (c) => c.notNull())
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("at", "integer", (c) => c.notNull())
      .modifyEnd(sql`strict`)
      .execute()
    await db.schema
      .createIndex("operation_steps_operation")
      .on("operation_steps")
      .columns(["operation_id", "id"])
      .execute()
  },
}

/**
 * Content-addressed blobs (the SQLite ArtifactStore): the SHA-256 as 32 bytes, the content's size,
 * how it is stored (0 as is, 1 raw deflate) and when it was last put (the GC grace window). A
 * rowid table, so large contents sit in overflow pages rather than in the key's b-tree.
 */
const blobs: StoreMigration = {
  version: 3,
  name: "0003_blobs",
  up: async (db) => {
    await db.schema
      .createTable("blobs")
      .addColumn("id", "integer", (c) => c.primaryKey())
      .addColumn("hash", "blob", (c) => c.notNull().unique().check(sql`length(hash) = 32`))
      .addColumn("size", "integer", (c) => c.notNull().check(sql`size >= 0`))
      .addColumn("encoding", "integer", (c) => c.notNull().check(sql`encoding in (0, 1)`))
      .addColumn("stored_at", "integer", (c) => c.notNull())
      .addColumn("content", "blob", (c) => c.notNull())
      .modifyEnd(sql`strict`)
      .execute()
  },
}

/**
 * Operation intents in a table of their own, keyed by the operation's `seq`. An intent holds the
 * session's whole active branch (for redo), so on a long session it spans overflow pages, and
 * SQLite rewrites a whole row on every UPDATE: completing an operation (its status) or consuming
 * its redo entry rewrote the intent each time. Now those updates touch only the small row.
 */
const operationIntents: StoreMigration = {
  version: 4,
  name: "0004_operation_intents",
  up: async (db) => {
    await db.schema
      .createTable("operation_intents")
      .addColumn("seq", "integer", (c) => c.primaryKey().references("operations.seq"))
      .addColumn("intent", "text", (c) => c.notNull())
      .modifyEnd(sql`strict`)
      .execute()
    await sql`insert into operation_intents (seq, intent) select seq, intent from operations`.execute(db)
    await db.schema.alterTable("operations").dropColumn("intent").execute()
  },
}

/**
 * Blobs may be stored as brotli (encoding 2), which a capture compresses at about 1.6× the speed
 * of deflate level 1 for ~3% more bytes on source text. A column's CHECK cannot be altered in
 * SQLite, so the table is rebuilt under the same name with every row (ids, hashes, stored forms
 * and times) copied as it is; rows stored as deflate stay deflate and read back as before.
 */
const brotliBlobs: StoreMigration = {
  version: 5,
  name: "0005_blobs_brotli",
  up: async (db) => {
    await db.schema
      .createTable("blobs_next")
      .addColumn("id", "integer", (c) => c.primaryKey())
      .addColumn("hash", "blob", (c) => c.notNull().unique().check(sql`length(hash) = 32`))
      .addColumn("size", "integer", (c) => c.notNull().check(sql`size >= 0`))
      .addColumn("encoding", "integer", (c) => c.notNull().check(sql`encoding in (0, 1, 2)`))
      .addColumn("stored_at", "integer", (c) => c.notNull())
      .addColumn("content", "blob", (c) => c.notNull())
      .modifyEnd(sql`strict`)
      .execute()
    await sql`insert into blobs_next (id, hash, size, encoding, stored_at, content)
      select id, hash, size, encoding, stored_at, content from blobs`.execute(db)
    await db.schema.dropTable("blobs").execute()
    await db.schema.alterTable("blobs_next").renameTo("blobs").execute()
  },
}

/** Every migration this build knows, oldest first. */
export const STORE_MIGRATIONS: ReadonlyArray<StoreMigration> = [
  initial,
  operationJournal,
  blobs,
  operationIntents,
  brotliBlobs,
]

const recordVersion = async (db: Kysely<unknown>, version: number) => {
  await sql`pragma user_version = ${sql.raw(String(version))}`.execute(db)
  await recordSchemaVersion(db, version)
}

/** The in-code provider: each migration also records its version in `PRAGMA user_version`. */
export const migrationProvider = (migrations: ReadonlyArray<StoreMigration>): MigrationProvider =>
  sharedProvider(migrations, recordVersion)
