// What the schema itself enforces (append-only events and facts, contiguous sequences), how the
// projections are rebuilt from the events, and how a locked store answers.
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { encodeEvent } from "@rewind/contracts"
import { SessionStore } from "@rewind/core"
import { StoreEvents } from "@rewind/testkit"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { SqliteSessionStore } from "../src/index.js"
import type { SqliteStoreOptions } from "../src/SqliteStoreOptions.js"
import { tempDir, withRawDatabase } from "./tempStore.js"

const { sessionCreated, sessionIdOf, textPart, userMessage } = StoreEvents

const a = sessionIdOf("a")
const b = sessionIdOf("b")

const withStore = <A, E>(
  options: SqliteStoreOptions,
  body: Effect.Effect<A, E, SessionStore | SqliteSessionStore.SqliteStore>,
) => Effect.provide(body, SqliteSessionStore.layer(options))

/** A store with two sessions (a: 3 events, b: 2 events) and one command fact. */
const seededStore = Effect.gen(function* () {
  const file = path.join(yield* tempDir, "store.db")
  yield* withStore(
    { path: file },
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
  return file
})

const rawError = (file: string, statement: string) =>
  withRawDatabase(file, (db) => {
    try {
      db.exec(statement)
      return undefined
    } catch (error) {
      return { code: (error as { code?: string }).code, message: (error as Error).message }
    }
  })

const listing = Effect.flatMap(SessionStore, (s) =>
  Effect.all({ sessions: s.listSessions(), a: s.version(a), b: s.version(b) }),
)

describe("the schema keeps events and facts append-only", () => {
  it.scoped("refuses raw SQL updates and deletes of events and command facts", () =>
    Effect.gen(function* () {
      const file = yield* seededStore
      const countEvents = () =>
        withRawDatabase(file, (db) => db.prepare("select count(*) from events").pluck().get())
      for (const statement of [
        "update events set payload = '{}' where sequence = 1",
        "update events set at = at + 1",
        "delete from events where session_id = 'a'",
        "delete from events",
        "update command_facts set result = '1'",
        "delete from command_facts",
      ]) {
        const error = rawError(file, statement)
        expect(error, statement).toMatchObject({ code: "SQLITE_CONSTRAINT_TRIGGER" })
        expect(error?.message).toMatch(/append-only/)
      }
      expect(countEvents()).toBe(5)
      expect(
        withRawDatabase(file, (db) => db.prepare("select count(*) from command_facts").pluck().get()),
      ).toBe(1)
    }),
  )

  it.scoped("refuses a duplicate sequence and a gap in a stream", () =>
    Effect.gen(function* () {
      const file = yield* seededStore
      const insert = (sequence: number) =>
        `insert into events (session_id, sequence, type, version, payload, at) values ('a', ${sequence}, 'TurnStarted', 1, '{}', 9)`
      expect(rawError(file, insert(2))?.code).toBe("SQLITE_CONSTRAINT_TRIGGER")
      expect(rawError(file, insert(3))?.code).toBe("SQLITE_CONSTRAINT_TRIGGER")
      expect(rawError(file, insert(5))?.message).toMatch(/without a gap/)
      withRawDatabase(file, (db) => {
        db.pragma("foreign_keys = ON")
        // Without the stream row the foreign key refuses the event.
        expect(() => db.exec(insert(1).replace("'a'", "'nobody'"))).toThrow(/FOREIGN KEY/)
        // The unique constraint stands on its own, even without the trigger.
        db.exec("drop trigger events_contiguous")
        expect(() => db.exec(insert(2))).toThrow(/UNIQUE/)
      })
    }),
  )
})

describe("projections", () => {
  it.scoped("rebuildProjections restores sessions and stream versions from the events alone", () =>
    Effect.gen(function* () {
      const file = yield* seededStore
      const before = yield* withStore({ path: file }, listing)
      expect(before.sessions.map((s) => s.sessionId)).toEqual([a, b])
      withRawDatabase(file, (db) => {
        db.pragma("foreign_keys = OFF")
        db.exec("delete from sessions")
        db.exec("update streams set version = 1, updated_at = 0 where session_id = 'a'")
        db.exec("delete from streams where session_id = 'b'")
      })
      const damaged = yield* withStore({ path: file }, listing)
      expect(damaged).toEqual({ sessions: [], a: 1, b: 0 })

      const rebuilt = yield* withStore(
        { path: file },
        Effect.gen(function* () {
          const report = yield* SqliteSessionStore.rebuildProjections
          return { report, after: yield* listing, integrity: yield* SqliteSessionStore.integrityCheck }
        }),
      )
      expect(rebuilt.report).toEqual({ streams: 2, sessions: 2 })
      expect(rebuilt.after).toEqual(before)
      expect(rebuilt.integrity).toEqual({ ok: true, problems: [] })
    }),
  )

  it.scoped("a projection behind its events is caught by the schema as a VersionConflict", () =>
    Effect.gen(function* () {
      const file = yield* seededStore
      withRawDatabase(file, (db) => db.exec("update streams set version = 1 where session_id = 'a'"))
      const outcome = yield* withStore(
        { path: file },
        Effect.gen(function* () {
          const store = yield* SessionStore
          const conflict = yield* Effect.flip(
            store.append({ sessionId: a, expectedVersion: 1, events: [textPart(1, 2, "lost?")], at: 4 }),
          )
          const events = yield* store.read(a)
          yield* SqliteSessionStore.rebuildProjections
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
      const file = yield* seededStore
      withRawDatabase(file, (db) => db.exec("update streams set version = 7 where session_id = 'a'"))
      const error = yield* withStore(
        { path: file },
        Effect.flatMap(SessionStore, (s) =>
          Effect.flip(s.append({ sessionId: a, expectedVersion: 7, events: [textPart(1, 2, "x")], at: 4 })),
        ),
      )
      expect(error).toMatchObject({ _tag: "StoreError", operation: "append" })
      expect(error.message).toMatch(/rebuildProjections/)
    }),
  )

  it.scoped("a rebuild that cannot read a SessionCreated changes nothing", () =>
    Effect.gen(function* () {
      const file = yield* seededStore
      const future = sessionIdOf("future")
      const encoded = encodeEvent(sessionCreated(future))
      withRawDatabase(file, (db) =>
        db.transaction(() => {
          db.prepare("insert into streams (session_id, version, updated_at) values (?, 1, 9)").run(future)
          db.prepare(
            "insert into events (session_id, sequence, type, version, payload, at) values (?, 1, ?, 99, ?, 9)",
          ).run(future, encoded.type, JSON.stringify(encoded.payload))
        })(),
      )
      const before = yield* withStore({ path: file }, listing)
      const error = yield* withStore({ path: file }, Effect.flip(SqliteSessionStore.rebuildProjections))
      expect(error).toMatchObject({ _tag: "EventDecodeError", reason: "unsupported_version" })
      expect(yield* withStore({ path: file }, listing)).toEqual(before)
    }),
  )
})

describe("a store locked by another connection", () => {
  it.scoped("fails a write with a StoreError after its retries, and writes once the lock is gone", () =>
    Effect.gen(function* () {
      const file = yield* seededStore
      const holder = new Database(file)
      yield* Effect.addFinalizer(() => Effect.sync(() => holder.close()))
      holder.exec("begin immediate")
      const outcome = yield* withStore(
        { path: file, busyTimeoutMillis: 10 },
        Effect.gen(function* () {
          const store = yield* SessionStore
          const blocked = yield* Effect.flip(
            store.append({ sessionId: a, expectedVersion: 3, events: [textPart(1, 2, "wait")], at: 4 }),
          )
          // Readers are not blocked by a writer in WAL mode.
          const version = yield* store.version(a)
          holder.exec("commit")
          const written = yield* store.append({
            sessionId: a,
            expectedVersion: 3,
            events: [textPart(1, 2, "wait")],
            at: 4,
          })
          return { blocked, version, written }
        }),
      )
      expect(outcome.blocked).toMatchObject({ _tag: "StoreError", operation: "append" })
      expect(outcome.blocked.message).toMatch(/locked by another connection/)
      expect(outcome.version).toBe(3)
      expect(outcome.written).toEqual({ version: 4 })
    }),
  )
})
