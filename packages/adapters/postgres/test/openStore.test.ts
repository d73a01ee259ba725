// Opening a PostgreSQL store: a new schema gets the tables, a current one is left as it is, one
// behind is migrated in place, and schemas that are not (or not yet) ours are refused untouched.
// Many workers opening one new schema at once take turns: the migrations run exactly once.
import { expect, it } from "@effect/vitest"
import { SessionStore } from "@rewind/core"
import { StoreEvents } from "@rewind/testkit"
import { ConfigProvider, Effect, Layer } from "effect"
import { PostgresDatabase, PostgresSessionStore } from "../src/index.js"
import { makeDatabase } from "../src/internal/makeDatabase.js"
import { POSTGRES_MIGRATIONS } from "../src/internal/migrations.js"
import { describePg, pgUrl, rawQuery, rawQueryEffect, storeOptions, tempSchema } from "./pgTest.js"

const { sessionCreated, sessionIdOf, textPart, userMessage } = StoreEvents

const main = sessionIdOf("main")
const fork = sessionIdOf("fork")

const openWith = (schema: string, migrations = POSTGRES_MIGRATIONS) =>
  Effect.scoped(makeDatabase(storeOptions(schema), migrations))

const writeSample = (layer: Layer.Layer<SessionStore, unknown>) =>
  Effect.provide(
    Effect.gen(function* () {
      const store = yield* SessionStore
      yield* store.append({
        sessionId: main,
        expectedVersion: 0,
        events: [sessionCreated(main), userMessage(main, 1)],
        at: 1,
      })
      yield* store.commit({
        appends: [
          {
            sessionId: fork,
            expectedVersion: 0,
            events: [sessionCreated(fork, { kind: "fork", parentId: main }), textPart(1, 1, "copied ✓")],
            at: 2,
          },
        ],
        facts: [{ sessionId: main, commandId: "fork-1", result: { child: fork }, at: 2 }],
      })
      return {
        main: yield* store.read(main),
        fork: yield* store.read(fork),
        list: yield* store.listSessions(),
      }
    }),
    layer,
  )

const readBack = (layer: Layer.Layer<SessionStore, unknown>) =>
  Effect.provide(
    Effect.gen(function* () {
      const store = yield* SessionStore
      return {
        main: yield* store.read(main),
        fork: yield* store.read(fork),
        list: yield* store.listSessions(),
      }
    }),
    layer,
  )

/** Every table of the schema with its row count: what "untouched" is checked against. */
const tablesOf = (schema: string) =>
  Effect.promise(async () => {
    const { rows } = await rawQuery<{ name: string }>(
      schema,
      "select tablename as name from pg_tables where schemaname = $1 order by 1",
      [schema],
    )
    const out: Record<string, number> = {}
    for (const { name } of rows) {
      out[name] = Number(
        (await rawQuery<{ n: string }>(schema, `select count(*) as n from "${name}"`)).rows[0]!.n,
      )
    }
    return out
  })

describePg("opening a PostgreSQL store", () => {
  it.scoped("creates the schema and its tables, records the version, and reopens without migrating", () =>
    Effect.gen(function* () {
      const schema = yield* tempSchema
      const first = yield* openWith(schema)
      expect(first.schemaVersion).toBe(3)
      expect(first.migrationsApplied).toEqual([
        "0001_session_store",
        "0002_artifacts",
        "0003_operation_journal",
      ])
      expect(first.location).toMatch(new RegExp(`\\(schema ${schema}\\)$`))
      expect(first.serverVersion).toMatch(/^\d+/)
      const meta = yield* rawQueryEffect<{ key: string; value: string }>(
        schema,
        "select key, value from rewind_meta order by key",
      )
      expect(meta.rows).toEqual([
        { key: "schema_version", value: "3" },
        { key: "store", value: "rewind-session-store" },
      ])
      expect(Object.keys(yield* tablesOf(schema))).toEqual([
        "artifacts",
        "command_facts",
        "events",
        "kysely_migration",
        "kysely_migration_lock",
        "operation_steps",
        "operations",
        "rewind_meta",
        "sessions",
        "streams",
      ])
      const again = yield* openWith(schema)
      expect(again.migrationsApplied).toEqual([])
      expect(again.schemaVersion).toBe(3)
    }),
  )

  it.scoped("migrates a store written by the previous schema version in place, keeping every row", () =>
    Effect.gen(function* () {
      const schema = yield* tempSchema
      const v1 = yield* openWith(schema, POSTGRES_MIGRATIONS.slice(0, 1))
      expect(v1.schemaVersion).toBe(1)
      const v1Layer = Layer.scoped(
        SessionStore,
        Effect.gen(function* () {
          const db = yield* makeDatabase(storeOptions(schema), POSTGRES_MIGRATIONS.slice(0, 1))
          return PostgresSessionStore.fromDatabase(PostgresDatabase.fromOpened(db)).sessionStore
        }),
      )
      const written = yield* writeSample(v1Layer)
      const upgraded = yield* openWith(schema)
      expect(upgraded.migrationsApplied).toEqual(["0002_artifacts", "0003_operation_journal"])
      expect(upgraded.schemaVersion).toBe(3)
      expect(yield* readBack(PostgresSessionStore.layer(storeOptions(schema)))).toEqual(written)
    }),
  )

  it.scoped("refuses a schema holding another application's tables, and changes nothing in it", () =>
    Effect.gen(function* () {
      const schema = yield* tempSchema
      yield* Effect.promise(async () => {
        await rawQuery(schema, `create schema "${schema}"`)
        await rawQuery(schema, "create table invoices (id integer primary key, total numeric)")
        await rawQuery(schema, "insert into invoices values (1, 9.5)")
      })
      const error = yield* Effect.flip(openWith(schema))
      expect(error).toMatchObject({ _tag: "StoreIncompatible", reason: "not_a_store" })
      expect(error.message).toMatch(/invoices/)
      expect(yield* tablesOf(schema)).toEqual({ invoices: 1 })
    }),
  )

  it.scoped("refuses a store written by a newer schema version, or recording unknown migrations", () =>
    Effect.gen(function* () {
      const newer = yield* tempSchema
      yield* openWith(newer)
      yield* rawQueryEffect(newer, "update rewind_meta set value = '99' where key = 'schema_version'")
      const before = yield* tablesOf(newer)
      const refused = yield* Effect.flip(openWith(newer))
      expect(refused).toMatchObject({ _tag: "StoreIncompatible", reason: "newer_version" })
      expect(refused.message).toMatch(/version 99.*Upgrade Rewind/)
      expect(yield* tablesOf(newer)).toEqual(before)

      // The version row says 1 (as if this build were older), but the migrations table knows more.
      const unknown = yield* tempSchema
      yield* openWith(unknown)
      yield* rawQueryEffect(
        unknown,
        "insert into kysely_migration (name, timestamp) values ('0003_from_the_future', now()::text)",
      )
      yield* rawQueryEffect(unknown, "update rewind_meta set value = '1' where key = 'schema_version'")
      const corrupted = yield* Effect.flip(openWith(unknown))
      expect(corrupted).toMatchObject({ _tag: "StoreIncompatible", reason: "newer_version" })
      expect(corrupted.message).toMatch(/does not know/)
    }),
  )

  it.scoped("workers opening one new schema at once migrate it exactly once", () =>
    Effect.gen(function* () {
      const schema = yield* tempSchema
      const opens = yield* Effect.all(
        Array.from({ length: 6 }, () => openWith(schema)),
        { concurrency: "unbounded" },
      )
      const all = ["0001_session_store", "0002_artifacts", "0003_operation_journal"]
      expect(opens.every((o) => o.schemaVersion === 3)).toBe(true)
      expect(opens.flatMap((o) => o.migrationsApplied)).toEqual(all)
      const recorded = yield* rawQueryEffect<{ name: string }>(
        schema,
        "select name from kysely_migration order by name",
      )
      expect(recorded.rows.map((r) => r.name)).toEqual(all)
    }),
  )

  it.scoped("refuses invalid options with a StoreError naming the field", () =>
    Effect.gen(function* () {
      const badSchema = yield* Effect.flip(openWith("Robert'); drop table students;--"))
      expect(badSchema).toMatchObject({ _tag: "StoreError", operation: "open" })
      expect(badSchema.message).toMatch(/schema/)
      const badPool = yield* Effect.flip(
        Effect.scoped(makeDatabase({ connectionString: pgUrl, poolSize: 0 }, [])),
      )
      expect(badPool.message).toMatch(/poolSize/)
    }),
  )

  it.scoped("an unreachable server is a StoreError that does not reveal the password", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Effect.scoped(
          makeDatabase(
            {
              connectionString: "postgres://rewind:s3cret-pw@127.0.0.1:1/nowhere",
              connectionTimeoutMillis: 2_000,
            },
            POSTGRES_MIGRATIONS,
          ),
        ),
      )
      expect(error).toMatchObject({ _tag: "StoreError", operation: "open" })
      expect(error.message).toMatch(/could not reach PostgreSQL at postgres:\/\/127\.0\.0\.1:1\/nowhere/)
      expect(error.message).not.toMatch(/s3cret/)
    }),
  )

  it.scoped("layerConfig reads REWIND_PG_* variables", () =>
    Effect.gen(function* () {
      const schema = yield* tempSchema
      const provider = ConfigProvider.fromMap(
        new Map([
          ["REWIND_PG_URL", pgUrl],
          ["REWIND_PG_SCHEMA", schema],
          ["REWIND_PG_POOL_SIZE", "3"],
        ]),
      )
      const seen = yield* Effect.provide(
        Effect.map(PostgresDatabase.PostgresDatabase, (db) => db.options),
        PostgresDatabase.layerConfig().pipe(Layer.provide(Layer.setConfigProvider(provider))),
      )
      expect(seen).toMatchObject({ schema, poolSize: 3, lockTimeoutMillis: 10_000 })
      const missing = yield* Effect.flip(
        Effect.provide(
          PostgresDatabase.PostgresDatabase,
          PostgresDatabase.layerConfig().pipe(
            Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map()))),
          ),
        ),
      )
      expect(missing).toMatchObject({ _tag: "StoreError", operation: "config" })
      expect(missing.message).toMatch(/REWIND_PG_URL/)
    }),
  )
})
