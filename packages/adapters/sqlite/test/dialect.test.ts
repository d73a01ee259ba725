// The dialect's job: a Kysely transaction takes SQLite's write lock when it begins, not at its
// first write (checked against a second connection, with Kysely's stock dialect as the contrast),
// and each SQL text Kysely runs is prepared once.
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { type Dialect, Kysely, SqliteDialect } from "kysely"
import { ImmediateSqliteDialect } from "../src/internal/dialect.js"
import { tempDir } from "./tempStore.js"

interface Tables {
  readonly t: { readonly n: number }
}

/** Inside a read-only Kysely transaction, can another connection still start writing? */
const otherWriterGetsIn = (file: string, dialectOf: (db: Database.Database) => Dialect) =>
  Effect.promise(async () => {
    const db = new Database(file)
    db.pragma("journal_mode = WAL")
    db.exec("create table if not exists t (n integer)")
    const other = new Database(file)
    other.pragma("busy_timeout = 0")
    const kysely = new Kysely<Tables>({ dialect: dialectOf(db) })
    try {
      return await kysely.transaction().execute(async (trx) => {
        await trx.selectFrom("t").selectAll().execute()
        try {
          other.exec("begin immediate")
          other.exec("rollback")
          return true
        } catch (error) {
          expect((error as { code?: string }).code).toBe("SQLITE_BUSY")
          return false
        }
      })
    } finally {
      other.close()
      await kysely.destroy()
    }
  })

describe("ImmediateSqliteDialect", () => {
  it.scoped("begins write transactions with BEGIN IMMEDIATE, so the lock is held from the start", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "lock.db")
      expect(yield* otherWriterGetsIn(file, (db) => new ImmediateSqliteDialect({ database: db }))).toBe(false)
      // Kysely's stock dialect sends a deferred BEGIN: the other writer is not kept out.
      expect(yield* otherWriterGetsIn(file, (db) => new SqliteDialect({ database: db }))).toBe(true)
    }),
  )

  it.scoped("rolls a failed transaction back", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const db = new Database(path.join(dir, "rollback.db"))
      const kysely = new Kysely<Tables>({ dialect: new ImmediateSqliteDialect({ database: db }) })
      yield* Effect.addFinalizer(() => Effect.promise(() => kysely.destroy()))
      yield* Effect.promise(() => kysely.schema.createTable("t").addColumn("n", "integer").execute())
      const failed = yield* Effect.promise(() =>
        kysely
          .transaction()
          .execute(async (trx) => {
            await trx.insertInto("t").values({ n: 1 }).execute()
            throw new Error("boom")
          })
          .then(
            () => "committed",
            (error: Error) => error.message,
          ),
      )
      expect(failed).toBe("boom")
      expect(db.inTransaction).toBe(false)
      expect(db.prepare("select count(*) from t").pluck().get()).toBe(0)
    }),
  )

  it.scoped("prepares each SQL text once, streamed or not", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const db = new Database(path.join(dir, "prepared.db"))
      const kysely = new Kysely<Tables>({ dialect: new ImmediateSqliteDialect({ database: db }) })
      yield* Effect.addFinalizer(() => Effect.promise(() => kysely.destroy()))
      yield* Effect.promise(() => kysely.schema.createTable("t").addColumn("n", "integer").execute())
      const prepared: Array<string> = []
      const prepare = db.prepare.bind(db)
      db.prepare = ((sql: string) => {
        prepared.push(sql)
        return prepare(sql)
      }) as typeof db.prepare
      const select = () => kysely.selectFrom("t").select("n").where("n", ">", 0).orderBy("n")
      const values = yield* Effect.promise(async () => {
        for (const n of [1, 2, 3]) await kysely.insertInto("t").values({ n }).execute()
        const first = await select().execute()
        const second = await select().execute()
        // Kysely holds the one connection while a stream runs, so nothing else uses its statement.
        const streamed: Array<number> = []
        for await (const row of select().stream()) streamed.push(row.n)
        const after = await select().execute()
        return {
          first: first.map((r) => r.n),
          second: second.map((r) => r.n),
          streamed,
          after: after.map((r) => r.n),
        }
      })
      expect(values.first).toEqual([1, 2, 3])
      expect(values.second).toEqual([1, 2, 3])
      expect(values.streamed).toEqual([1, 2, 3])
      expect(values.after).toEqual([1, 2, 3])
      const selects = prepared.filter((sql) => sql.startsWith("select"))
      const inserts = prepared.filter((sql) => sql.startsWith("insert"))
      // Three inserts and four selects of one text each: each text prepared once.
      expect(inserts).toHaveLength(1)
      expect(selects).toHaveLength(1)
    }),
  )
})
