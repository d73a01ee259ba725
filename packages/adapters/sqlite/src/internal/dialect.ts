/**
 * Kysely's SQLite dialect, adjusted for a store that several processes write at once.
 *
 * - Write transactions start with `BEGIN IMMEDIATE`. Kysely's driver sends a plain (deferred)
 *   `BEGIN`, which takes the write lock only at the first write; two deferred transactions that
 *   both read and then write can deadlock, and SQLite then fails one with SQLITE_BUSY without
 *   consulting the busy timeout. Taking the lock up front makes the busy timeout apply and makes
 *   every read inside the transaction see the state the write will be based on.
 * - The adapter reports transactional DDL: SQLite has it, and Kysely's `Migrator` only wraps
 *   migrations in a transaction when the adapter says so. With it, a migration is all or nothing
 *   and two processes opening a fresh store serialise on the write lock.
 *
 * The transaction statements are prepared once: Kysely's connection compiles every query it runs,
 * which costs more than the rest of a one-event append. So are the queries Kysely sends: its
 * connection calls `prepare` for every query it runs (SQLite parses and plans the SQL each time),
 * and the shared operation journal runs the same few queries on every restore. The cache is keyed by
 * the SQL text, bounded (cleared when full: texts that vary, like `in (?, ?, …)` lists, cannot grow
 * it without end). A streamed query holds Kysely's one connection while it iterates, so no other
 * query can meet its statement busy.
 */
import type Database from "better-sqlite3"
import {
  type DatabaseConnection,
  type Driver,
  SqliteAdapter,
  type SqliteDatabase,
  SqliteDialect,
  SqliteDriver,
} from "kysely"

/** How many distinct SQL texts stay prepared before the cache starts again. */
const STATEMENT_CACHE_SIZE = 256

/** `db` as Kysely's driver sees it, with each SQL text prepared once. */
const preparedOnce = (db: Database.Database): SqliteDatabase => {
  const cache = new Map<string, Database.Statement>()
  return {
    prepare: (sql) => {
      const cached = cache.get(sql)
      if (cached !== undefined) return cached
      const statement = db.prepare(sql)
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.clear()
      cache.set(sql, statement)
      return statement
    },
    close: () => db.close(),
  }
}

interface TransactionStatements {
  readonly begin: Database.Statement
  readonly commit: Database.Statement
  readonly rollback: Database.Statement
}

class ImmediateSqliteDriver extends SqliteDriver {
  readonly #db: Database.Database
  #statements: TransactionStatements | undefined

  constructor(db: Database.Database) {
    super({ database: preparedOnce(db) })
    this.#db = db
  }

  get #prepared(): TransactionStatements {
    this.#statements ??= {
      begin: this.#db.prepare("begin immediate"),
      commit: this.#db.prepare("commit"),
      rollback: this.#db.prepare("rollback"),
    }
    return this.#statements
  }

  // The driver has exactly one connection, over `#db`: running the statements on it directly is
  // running them on that connection.
  override async beginTransaction(_connection: DatabaseConnection): Promise<void> {
    this.#prepared.begin.run()
  }

  override async commitTransaction(_connection: DatabaseConnection): Promise<void> {
    this.#prepared.commit.run()
  }

  override async rollbackTransaction(_connection: DatabaseConnection): Promise<void> {
    // A failed statement may already have ended the transaction (SQLite rolls back on some errors).
    if (this.#db.inTransaction) this.#prepared.rollback.run()
  }
}

class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true
  }
}

export class ImmediateSqliteDialect extends SqliteDialect {
  readonly #db: Database.Database

  constructor(config: { readonly database: Database.Database }) {
    super({ database: config.database })
    this.#db = config.database
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#db)
  }

  override createAdapter(): SqliteAdapter {
    return new TransactionalDdlSqliteAdapter()
  }
}
