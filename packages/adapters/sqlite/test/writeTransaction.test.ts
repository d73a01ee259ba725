// The store's write transaction without Kysely's machinery (writeTransaction.ts): it holds the
// write lock from its start, the body's Kysely queries run inside it, and a failing body or a
// failing statement leaves nothing behind. Also the busy retry's bare first attempt
// (sqliteErrors.ts): a call that succeeds runs once, a Busy one is still retried within its budget.
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { StoreTables } from "@rewind/kysely-store"
import Database from "better-sqlite3"
import { Effect, Either } from "effect"
import { Kysely, sql } from "kysely"
import { ImmediateSqliteDialect } from "../src/internal/dialect.js"
import { Busy, retryBusy } from "../src/internal/sqliteErrors.js"
import { makeWriteTransaction } from "../src/internal/writeTransaction.js"
import { tempDir } from "./tempStore.js"

/** A WAL database with one table, its Kysely over the store's dialect, and a second connection. */
const opened = Effect.gen(function* () {
  const file = path.join(yield* tempDir, "tx.db")
  const db = new Database(file)
  db.pragma("journal_mode = WAL")
  db.exec("create table t (n integer)")
  const kysely = new Kysely<StoreTables>({ dialect: new ImmediateSqliteDialect({ database: db }) })
  const other = new Database(file)
  other.pragma("busy_timeout = 0")
  yield* Effect.addFinalizer(() =>
    Effect.promise(async () => {
      other.close()
      await kysely.destroy()
    }),
  )
  const count = () => (other.prepare("select count(*) as n from t").get() as { n: number }).n
  return { db, kysely, other, count, inWriteTransaction: makeWriteTransaction(db, kysely) }
})

const insertThroughKysely = (trx: Kysely<StoreTables>, n: number) =>
  sql`insert into t (n) values (${n})`.execute(trx)

describe("makeWriteTransaction", () => {
  it.scoped("commits the body's statements and its Kysely queries together", () =>
    Effect.gen(function* () {
      const { db, count, inWriteTransaction } = yield* opened
      const answer = yield* Effect.promise(() =>
        inWriteTransaction(async (trx) => {
          db.prepare("insert into t (n) values (1)").run()
          await insertThroughKysely(trx, 2)
          return "done"
        }),
      )
      expect(answer).toBe("done")
      expect(db.inTransaction).toBe(false)
      expect(count()).toBe(2)
    }),
  )

  it.scoped("holds the write lock from its start: another connection cannot begin writing meanwhile", () =>
    Effect.gen(function* () {
      const { other, inWriteTransaction } = yield* opened
      const seen = yield* Effect.promise(() =>
        inWriteTransaction(async () => {
          await Promise.resolve()
          try {
            other.exec("begin immediate")
            other.exec("rollback")
            return "other got in"
          } catch (error) {
            return (error as { code?: string }).code
          }
        }),
      )
      expect(seen).toBe("SQLITE_BUSY")
    }),
  )

  it.scoped("rolls everything back when the body fails, and rethrows its error", () =>
    Effect.gen(function* () {
      const { db, count, inWriteTransaction } = yield* opened
      const failure = new Error("the body refused")
      const result = yield* Effect.either(
        Effect.tryPromise({
          try: () =>
            inWriteTransaction(async (trx) => {
              db.prepare("insert into t (n) values (1)").run()
              await insertThroughKysely(trx, 2)
              throw failure
            }),
          catch: (error) => error,
        }),
      )
      expect(result).toEqual(Either.left(failure))
      expect(db.inTransaction).toBe(false)
      expect(count()).toBe(0)
      // The connection is usable again.
      yield* Effect.promise(() => inWriteTransaction(async (trx) => insertThroughKysely(trx, 3)))
      expect(count()).toBe(1)
    }),
  )

  it.scoped("a failing statement that already ended the transaction is not rolled back twice", () =>
    Effect.gen(function* () {
      const { db, count, inWriteTransaction } = yield* opened
      db.exec("create table u (n integer primary key on conflict rollback)")
      const result = yield* Effect.either(
        Effect.tryPromise({
          try: () =>
            inWriteTransaction(async () => {
              db.prepare("insert into t (n) values (1)").run()
              db.prepare("insert into u (n) values (1)").run()
              // ON CONFLICT ROLLBACK ends the transaction inside SQLite.
              db.prepare("insert into u (n) values (1)").run()
            }),
          catch: (error) => (error as { code?: string }).code,
        }),
      )
      expect(result).toEqual(Either.left("SQLITE_CONSTRAINT_PRIMARYKEY"))
      expect(db.inTransaction).toBe(false)
      expect(count()).toBe(0)
    }),
  )
})

describe("retryBusy", () => {
  const busy = new Busy({ operation: "test", cause: new Error("locked") })

  it.effect("runs a call that succeeds exactly once", () =>
    Effect.gen(function* () {
      let attempts = 0
      const value = yield* retryBusy(Effect.sync(() => ++attempts))
      expect([value, attempts]).toEqual([1, 1])
    }),
  )

  it.live("retries a call that found the store busy until it succeeds", () =>
    Effect.gen(function* () {
      let attempts = 0
      const value = yield* retryBusy(
        Effect.suspend(() => (++attempts < 4 ? Effect.fail(busy) : Effect.succeed("written"))),
        2_000,
      )
      expect([value, attempts]).toEqual(["written", 4])
    }),
  )

  it.live("gives up with a StoreError once the budget has passed", () =>
    Effect.gen(function* () {
      let attempts = 0
      const error = yield* Effect.flip(
        retryBusy(
          Effect.suspend(() => {
            attempts++
            return Effect.fail(busy)
          }),
          50,
        ),
      )
      expect(error._tag).toBe("StoreError")
      expect(error.message).toMatch(/stayed locked by another connection for 50 ms/)
      expect(attempts).toBeGreaterThan(2)
    }),
  )

  it.effect("passes any other failure through untouched, after one attempt", () =>
    Effect.gen(function* () {
      let attempts = 0
      const error = yield* Effect.flip(
        retryBusy(
          Effect.suspend(() => {
            attempts++
            return Effect.fail("not busy" as const)
          }),
        ),
      )
      expect([error, attempts]).toEqual(["not busy", 1])
    }),
  )
})
