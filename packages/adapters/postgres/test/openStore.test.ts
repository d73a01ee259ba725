// Opening a PostgreSQL store: a new schema gets the tables, a current one is left as it is, one
// behind is migrated in place, and schemas that are not (or not yet) ours are refused untouched.
// Many workers opening one new schema at once take turns: the migrations run exactly once.
import { expect, it } from "@effect/vitest"
import {
  encodeOperationIntentJson,
  type MessageId,
  type OperationId,
  type OperationIntent,
} from "@rewind/contracts"
import { OperationJournal, SessionStore } from "@rewind/core"
import { journalIntent, StoreEvents } from "@rewind/testkit"
import { ConfigProvider, Context, Effect, Layer } from "effect"
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
      expect(first.schemaVersion).toBe(4)
      expect(first.migrationsApplied).toEqual([
        "0001_session_store",
        "0002_artifacts",
        "0003_operation_journal",
        "0004_operation_intents",
      ])
      expect(first.location).toMatch(new RegExp(`\\(schema ${schema}\\)$`))
      expect(first.serverVersion).toMatch(/^\d+/)
      const meta = yield* rawQueryEffect<{ key: string; value: string }>(
        schema,
        "select key, value from rewind_meta order by key",
      )
      expect(meta.rows).toEqual([
        { key: "schema_version", value: "4" },
        { key: "store", value: "rewind-session-store" },
      ])
      expect(Object.keys(yield* tablesOf(schema))).toEqual([
        "artifacts",
        "command_facts",
        "events",
        "kysely_migration",
        "kysely_migration_lock",
        "operation_intents",
        "operation_steps",
        "operations",
        "rewind_meta",
        "sessions",
        "streams",
      ])
      const again = yield* openWith(schema)
      expect(again.migrationsApplied).toEqual([])
      expect(again.schemaVersion).toBe(4)
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
      expect(upgraded.migrationsApplied).toEqual([
        "0002_artifacts",
        "0003_operation_journal",
        "0004_operation_intents",
      ])
      expect(upgraded.schemaVersion).toBe(4)
      expect(yield* readBack(PostgresSessionStore.layer(storeOptions(schema)))).toEqual(written)
    }),
  )

  it.scoped(
    "0004 moves every journaled intent to its own table; recovery sees the pending operation whole",
    () =>
      Effect.gen(function* () {
        const schema = yield* tempSchema
        yield* openWith(schema, POSTGRES_MIGRATIONS.slice(0, 3))
        const intentOf = (operationId: string, extra: Partial<OperationIntent> = {}) =>
          journalIntent(operationId, main, { startedAt: 7, ...extra })
        const done = intentOf("op-done", {
          redo: {
            activeBranch: Array.from({ length: 300 }, (_, i) => `msg-${i}` as MessageId),
            spentCheckpointIds: [],
          },
        })
        const redoing = intentOf("op-redo", { kind: "redo", redoes: "op-done" as OperationId })
        // The rows as the schema-3 journal wrote them: the intent inline in `operations`.
        yield* Effect.promise(async () => {
          for (const [intent, status] of [
            [done, "committed"],
            [redoing, "pending"],
          ] as const) {
            await rawQuery(
              schema,
              `insert into operations (operation_id, session_id, kind, intent, status, started_at, finished_at,
               redoes, redo_available, redo_consumed) values ($1, $2, $3, $4, $5, $6, null, $7, $8, 0)`,
              [
                intent.operationId,
                intent.sessionId,
                intent.kind,
                encodeOperationIntentJson(intent),
                status,
                intent.startedAt,
                intent.redoes ?? null,
                intent.redo === undefined ? 0 : 1,
              ],
            )
          }
          await rawQuery(
            schema,
            "insert into operation_steps (operation_id, step, path, state, at) values ('op-redo', 0, 'a.txt', 'writing', 8)",
          )
        })
        const upgraded = yield* openWith(schema)
        expect(upgraded.migrationsApplied).toEqual(["0004_operation_intents"])
        const columns = yield* rawQueryEffect<{ name: string }>(
          schema,
          "select column_name as name from information_schema.columns where table_schema = $1 and table_name = 'operations'",
          [schema],
        )
        expect(columns.rows.map((c) => c.name)).not.toContain("intent")

        const journal = Context.get(
          yield* Layer.build(PostgresSessionStore.layer(storeOptions(schema))),
          OperationJournal,
        )
        expect(yield* journal.incomplete()).toEqual([
          {
            intent: redoing,
            status: "pending",
            steps: [{ step: 0, path: "a.txt", state: "writing", at: 8 }],
            redoConsumed: false,
          },
        ])
        expect((yield* journal.redoStack(main)).map((r) => r.intent)).toEqual([done])
        yield* journal.complete("op-redo" as OperationId, { status: "committed", at: 9 })
        expect(yield* journal.incomplete()).toEqual([])
        // The finished redo carries a redo entry of its own; the one it redid is consumed.
        expect((yield* journal.redoStack(main)).map((r) => r.intent.operationId)).toEqual(["op-redo"])
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
      const all = ["0001_session_store", "0002_artifacts", "0003_operation_journal", "0004_operation_intents"]
      expect(opens.every((o) => o.schemaVersion === 4)).toBe(true)
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
