// What the PostgreSQL schema itself enforces (append-only events and facts, contiguous sequences,
// also against raw SQL), how the projections are rebuilt and checked, and how a write answers
// when another writer holds its stream's lock.
import { expect, it } from "@effect/vitest"
import { encodeEvent } from "@rewind/contracts"
import { SessionStore } from "@rewind/core"
import { StoreEvents } from "@rewind/testkit"
import { Effect } from "effect"
import { PostgresSessionStore, type PostgresStoreOptions } from "../src/index.js"
import {
  adminPool,
  describePg,
  rawError,
  rawQuery,
  rawQueryEffect,
  storeOptions,
  tempSchema,
} from "./pgTest.js"

const { sessionCreated, sessionIdOf, textPart, userMessage } = StoreEvents

const a = sessionIdOf("a")
const b = sessionIdOf("b")

const withStore = <A, E>(
  options: PostgresStoreOptions,
  body: Effect.Effect<A, E, SessionStore | PostgresSessionStore.PostgresStore>,
) => Effect.provide(body, PostgresSessionStore.layer(options))

/** A store with two sessions (a: 3 events, b: 2 events) and one command fact. */
const seededStore = Effect.gen(function* () {
  const schema = yield* tempSchema
  yield* withStore(
    storeOptions(schema),
    Effect.gen(function* () {
      const store = yield* SessionStore
      yield* store.append({
        sessionId: a,
        expectedVersion: 0,
        events: [sessionCreated(a, { at: 1 }), userMessage(a, 1)],
        at: 1,
      })
      yield* store.commit({
        appends: [
          {
            sessionId: b,
            expectedVersion: 0,
            events: [sessionCreated(b, { kind: "fork", parentId: a, at: 2 })],
            at: 2,
          },
          { sessionId: a, expectedVersion: 2, events: [textPart(1, 1, "hello")], at: 2 },
        ],
        facts: [{ sessionId: a, commandId: "fork-b", result: { child: b }, at: 2 }],
      })
      yield* store.append({ sessionId: b, expectedVersion: 1, events: [userMessage(b, 1)], at: 3 })
    }),
  )
  return schema
})

const listing = Effect.flatMap(SessionStore, (s) =>
  Effect.all({ sessions: s.listSessions(), a: s.version(a), b: s.version(b) }),
)

const count = (schema: string, table: string) =>
  Effect.promise(async () =>
    Number((await rawQuery<{ n: string }>(schema, `select count(*) as n from ${table}`)).rows[0]!.n),
  )

/** Runs raw statements on one connection with triggers and foreign keys off (superuser only). */
const damage = (schema: string, statements: ReadonlyArray<string>) =>
  Effect.promise(async () => {
    const client = await adminPool().connect()
    try {
      await client.query(`set search_path to "${schema}"`)
      await client.query("set session_replication_role = replica")
      for (const statement of statements) await client.query(statement)
    } finally {
      await client.query("reset session_replication_role").catch(() => undefined)
      await client.query("reset search_path").catch(() => undefined)
      client.release()
    }
  })

describePg("the PostgreSQL schema keeps events and facts append-only", () => {
  it.scoped("refuses raw SQL updates, deletes and truncation of events and command facts", () =>
    Effect.gen(function* () {
      const schema = yield* seededStore
      for (const statement of [
        "update events set payload = '{}' where sequence = 1",
        "update events set at = at + 1",
        "delete from events where session_id = 'a'",
        "delete from events",
        "truncate events cascade",
        "update command_facts set result = '1'",
        "delete from command_facts",
        "truncate command_facts",
      ]) {
        const error = yield* Effect.promise(() => rawError(schema, statement))
        expect(error, statement).toMatchObject({ code: "RW001" })
        expect(error?.message).toMatch(/append-only/)
      }
      expect(yield* count(schema, "events")).toBe(5)
      expect(yield* count(schema, "command_facts")).toBe(1)
    }),
  )

  it.scoped("refuses a duplicate sequence, a gap, and an event without its stream", () =>
    Effect.gen(function* () {
      const schema = yield* seededStore
      const row = (session: string, sequence: number) =>
        `('${session}', ${sequence}, 'TurnStarted', 1, '{}', 9)`
      const insert = (...rows: ReadonlyArray<string>) =>
        Effect.promise(() =>
          rawError(
            schema,
            `insert into events (session_id, sequence, type, version, payload, at) values ${rows.join(", ")}`,
          ),
        )
      expect((yield* insert(row("a", 2)))?.code).toBe("23505")
      expect(yield* insert(row("a", 5))).toMatchObject({
        code: "RW002",
        message: expect.stringMatching(/without a gap/),
      })
      // A gap inside one statement, and one statement that is fine for one stream but not another.
      expect((yield* insert(row("a", 4), row("a", 6)))?.code).toBe("RW002")
      expect((yield* insert(row("a", 4), row("b", 4)))?.code).toBe("RW002")
      expect((yield* insert(row("nobody", 1)))?.code).toBe("23503")
      expect(yield* count(schema, "events")).toBe(5)
      // What continues a stream is accepted, several rows and streams at once.
      expect(yield* insert(row("a", 4), row("a", 5), row("b", 3))).toBeUndefined()
      expect(yield* count(schema, "events")).toBe(8)
    }),
  )
})

describePg("PostgreSQL projections", () => {
  it.scoped("rebuildProjections restores sessions and stream versions from the events alone", () =>
    Effect.gen(function* () {
      const schema = yield* seededStore
      const options = storeOptions(schema)
      const before = yield* withStore(options, listing)
      expect(before.sessions.map((s) => s.sessionId)).toEqual([a, b])
      yield* damage(schema, [
        "delete from sessions",
        "update streams set version = 1, updated_at = 0 where session_id = 'a'",
        "delete from streams where session_id = 'b'",
      ])
      const damaged = yield* withStore(
        options,
        Effect.all({ listing, integrity: PostgresSessionStore.integrityCheck }),
      )
      expect(damaged.listing).toEqual({ sessions: [], a: 1, b: 0 })
      expect(damaged.integrity.ok).toBe(false)
      expect(damaged.integrity.problems).toEqual([
        "stream a: streams.version 1 but the last event is 3",
        "stream b: events without a streams row",
      ])

      const rebuilt = yield* withStore(
        options,
        Effect.gen(function* () {
          const report = yield* PostgresSessionStore.rebuildProjections
          return { report, after: yield* listing, integrity: yield* PostgresSessionStore.integrityCheck }
        }),
      )
      expect(rebuilt.report).toEqual({ streams: 2, sessions: 2 })
      expect(rebuilt.after).toEqual(before)
      expect(rebuilt.integrity).toEqual({ ok: true, problems: [] })
    }),
  )

  it.scoped("a projection behind its events is caught as a VersionConflict carrying the real version", () =>
    Effect.gen(function* () {
      const schema = yield* seededStore
      yield* rawQueryEffect(schema, "update streams set version = 1 where session_id = 'a'")
      const outcome = yield* withStore(
        storeOptions(schema),
        Effect.gen(function* () {
          const store = yield* SessionStore
          const conflict = yield* Effect.flip(
            store.append({ sessionId: a, expectedVersion: 1, events: [textPart(1, 2, "lost?")], at: 4 }),
          )
          const events = yield* store.read(a)
          yield* PostgresSessionStore.rebuildProjections
          const appended = yield* store.append({
            sessionId: a,
            expectedVersion: 3,
            events: [textPart(1, 2, "kept")],
            at: 5,
          })
          return { conflict, count: events.length, appended }
        }),
      )
      expect(outcome.conflict).toMatchObject({
        _tag: "VersionConflict",
        sessionId: a,
        expectedVersion: 1,
        actualVersion: 3,
      })
      expect(outcome.count).toBe(3)
      expect(outcome.appended).toEqual({ version: 4 })
    }),
  )

  it.scoped("a projection ahead of its events fails the append with a StoreError naming the fix", () =>
    Effect.gen(function* () {
      const schema = yield* seededStore
      yield* rawQueryEffect(schema, "update streams set version = 7 where session_id = 'a'")
      const error = yield* withStore(
        storeOptions(schema),
        Effect.flatMap(SessionStore, (s) =>
          Effect.flip(s.append({ sessionId: a, expectedVersion: 7, events: [textPart(1, 2, "x")], at: 4 })),
        ),
      )
      expect(error).toMatchObject({ _tag: "StoreError", operation: "append" })
      expect(error.message).toMatch(/rebuildProjections/)
      expect(yield* count(schema, "events")).toBe(5)
    }),
  )

  it.scoped("a rebuild that cannot read a SessionCreated changes nothing", () =>
    Effect.gen(function* () {
      const schema = yield* seededStore
      const future = sessionIdOf("future")
      const encoded = encodeEvent(sessionCreated(future))
      yield* Effect.promise(async () => {
        await rawQuery(schema, "insert into streams (session_id, version, updated_at) values ($1, 1, 9)", [
          future,
        ])
        await rawQuery(
          schema,
          "insert into events (session_id, sequence, type, version, payload, at) values ($1, 1, $2, 99, $3, 9)",
          [future, encoded.type, JSON.stringify(encoded.payload)],
        )
      })
      const options = storeOptions(schema)
      const before = yield* withStore(options, listing)
      const error = yield* withStore(options, Effect.flip(PostgresSessionStore.rebuildProjections))
      expect(error).toMatchObject({ _tag: "EventDecodeError", reason: "unsupported_version" })
      expect(yield* withStore(options, listing)).toEqual(before)
    }),
  )
})

describePg("a stream locked by another writer", () => {
  it.scoped(
    "makes a write wait, fail with a StoreError after the lock timeout, and succeed once released",
    () =>
      Effect.gen(function* () {
        const schema = yield* seededStore
        const holder = yield* Effect.acquireRelease(
          Effect.promise(() => adminPool().connect()),
          (client) => Effect.promise(async () => client.release()),
        )
        yield* Effect.promise(async () => {
          await holder.query(`set search_path to "${schema}"`)
          await holder.query("begin")
          await holder.query("select version from streams where session_id = 'a' for update")
        })
        const outcome = yield* withStore(
          storeOptions(schema, { lockTimeoutMillis: 200 }),
          Effect.gen(function* () {
            const store = yield* SessionStore
            const blocked = yield* Effect.flip(
              store.append({ sessionId: a, expectedVersion: 3, events: [textPart(1, 2, "wait")], at: 4 }),
            )
            // Readers never wait for a writer.
            const version = yield* store.version(a)
            const other = yield* store.append({
              sessionId: b,
              expectedVersion: 2,
              events: [textPart(1, 3, "b")],
              at: 4,
            })
            yield* Effect.promise(() => holder.query("rollback"))
            const written = yield* store.append({
              sessionId: a,
              expectedVersion: 3,
              events: [textPart(1, 2, "wait")],
              at: 4,
            })
            return { blocked, version, other, written }
          }),
        )
        expect(outcome.blocked).toMatchObject({ _tag: "StoreError", operation: "append" })
        expect(outcome.blocked.message).toMatch(/lock timeout/)
        expect(outcome.version).toBe(3)
        expect(outcome.other).toEqual({ version: 3 })
        expect(outcome.written).toEqual({ version: 4 })
      }),
  )
})
