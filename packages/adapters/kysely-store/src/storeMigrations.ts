/**
 * How an SQL adapter's schema history is described and handed to Kysely's `Migrator`: numbered
 * migrations in code, an in-code provider that makes each migration also record its version (in
 * the same transaction as its DDL, so the recorded version can never disagree with the tables), and
 * how to recognise a store whose recorded migrations this build does not know.
 */
import { type Kysely, type Migration, type MigrationProvider, sql } from "kysely"

export interface StoreMigration {
  readonly version: number
  /** Kysely runs migrations in name order: a new one's name sorts after every earlier one. */
  readonly name: string
  readonly up: (db: Kysely<unknown>) => Promise<void>
}

export const latestVersion = (migrations: ReadonlyArray<StoreMigration>): number =>
  migrations.reduce((max, m) => Math.max(max, m.version), 0)

/** Writes `schema_version` into the store's `rewind_meta` table. */
export const recordSchemaVersion = async (db: Kysely<unknown>, version: number) => {
  await sql`insert into rewind_meta (key, value) values ('schema_version', ${String(version)})
            on conflict (key) do update set value = excluded.value`.execute(db)
}

/**
 * The in-code provider: each migration runs `up`, then `record` with its version (by default the
 * `rewind_meta` row; an adapter may record it in more places).
 */
export const migrationProvider = (
  migrations: ReadonlyArray<StoreMigration>,
  record: (db: Kysely<unknown>, version: number) => Promise<void> = recordSchemaVersion,
): MigrationProvider => ({
  getMigrations: async () => {
    const out: Record<string, Migration> = {}
    for (const m of migrations) {
      out[m.name] = {
        up: async (db) => {
          await m.up(db)
          await record(db, m.version)
        },
      }
    }
    return out
  },
})

/**
 * Kysely's Migrator refuses to run when the store records a migration missing from this build's
 * list ("corrupted migrations"): the store was migrated by a newer build.
 */
export const isUnknownMigrationError = (error: unknown): error is Error =>
  error instanceof Error && error.message.startsWith("corrupted migrations")
