/**
 * A write transaction on the store's one connection without Kysely's transaction machinery:
 * `BEGIN IMMEDIATE`, the body, `COMMIT` (or `ROLLBACK` when the body or the commit fails), each a
 * statement prepared once. Kysely's `transaction().execute` acquires its connection, builds a
 * transaction object and awaits its driver's begin and commit: several promise hops and about
 * 80 µs of CPU per call, more than the one-event append it wraps (a per-edit checkpoint's).
 *
 * The body gets the store's own Kysely instance: the driver has exactly one connection, over the
 * same database, so its queries run inside this transaction (as `journalBackend.ts`'s snapshot
 * reads do). That holds only because every call runs under the connection's one permit
 * (`connection.ts`'s `exclusive`): no other fiber's statement can reach the connection while the
 * body awaits. Callers must hold it.
 */
import type { StoreTables } from "@rewind/kysely-store"
import type Database from "better-sqlite3"
import type { Kysely } from "kysely"

export const makeWriteTransaction = (db: Database.Database, kysely: Kysely<StoreTables>) => {
  let statements:
    | {
        readonly begin: Database.Statement
        readonly commit: Database.Statement
        readonly rollback: Database.Statement
      }
    | undefined
  return async <A>(body: (trx: Kysely<StoreTables>) => Promise<A>): Promise<A> => {
    statements ??= {
      begin: db.prepare("begin immediate"),
      commit: db.prepare("commit"),
      rollback: db.prepare("rollback"),
    }
    statements.begin.run()
    try {
      const result = await body(kysely)
      statements.commit.run()
      return result
    } catch (error) {
      // A failed statement may already have ended the transaction (SQLite rolls back on some errors).
      if (db.inTransaction) statements.rollback.run()
      throw error
    }
  }
}
