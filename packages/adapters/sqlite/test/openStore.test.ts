// Opening store files: new ones get the schema and pragmas, current ones are left as they are, and
// files that are not (or not yet) ours are refused without a single byte changed.
import * as fs from "node:fs"
import * as path from "node:path"
import { deflateRawSync } from "node:zlib"
import { describe, expect, it } from "@effect/vitest"
import {
  type ContentHash,
  encodeOperationIntentJson,
  type MessageId,
  type OperationId,
  type OperationIntent,
  type WorkspacePath,
} from "@rewind/contracts"
import { ArtifactStore, hashContent, SessionStore } from "@rewind/core"
import { StoreEvents } from "@rewind/testkit"
import { Effect } from "effect"
import { SqliteArtifactStore, SqliteSessionStore } from "../src/index.js"
import { makeSqliteStore } from "../src/internal/makeSqliteStore.js"
import { REWIND_APPLICATION_ID, STORE_MIGRATIONS } from "../src/internal/migrations.js"
import { migrateStore, openDatabase } from "../src/internal/openDatabase.js"
import { resolveOptions, type SqliteStoreOptions } from "../src/SqliteStoreOptions.js"
import { fixture, runNode } from "./childProcess.js"
import { V2_MIGRATION } from "./fixtures/v2Migration.mjs"
import { tempDir, withRawDatabase } from "./tempStore.js"

const { sessionCreated, sessionIdOf, textPart, userMessage } = StoreEvents

const openStore = (options: SqliteStoreOptions) => Effect.scoped(SqliteSessionStore.make(options))

/** Opens the store for the duration of `body`. */
const withStore = <A, E>(
  options: SqliteStoreOptions,
  body: Effect.Effect<A, E, SessionStore | SqliteSessionStore.SqliteStore>,
) => Effect.provide(body, SqliteSessionStore.layer(options))

const main = sessionIdOf("main")
const fork = sessionIdOf("fork")

const writeSampleSessions = (file: string) =>
  withStore(
    { path: file },
    Effect.gen(function* () {
      const store = yield* SessionStore
      yield* store.append({
        sessionId: main,
        expectedVersion: 0,
        events: [sessionCreated(main), userMessage(main, 1)],
        at: 1,
      })
      yield* store.append({
        sessionId: fork,
        expectedVersion: 0,
        events: [sessionCreated(fork, { kind: "fork", parentId: main }), textPart(1, 1, "copied ✓")],
        at: 2,
      })
      return { main: yield* store.read(main), fork: yield* store.read(fork) }
    }),
  )

const snapshot = (dir: string, file: string) => ({
  bytes: fs.readFileSync(file),
  entries: fs.readdirSync(dir).sort(),
})

/** The open must fail with StoreIncompatible(reason) and leave the file and its directory as they were. */
const expectRefusedUntouched = (
  dir: string,
  file: string,
  reason: string,
  options: Partial<SqliteStoreOptions> = {},
) =>
  Effect.gen(function* () {
    const before = snapshot(dir, file)
    const error = yield* Effect.flip(openStore({ path: file, ...options }))
    expect(error).toMatchObject({ _tag: "StoreIncompatible", reason, location: file })
    const after = snapshot(dir, file)
    expect(after.entries).toEqual(before.entries)
    expect(Buffer.compare(after.bytes, before.bytes)).toBe(0)
    return error
  })

describe("opening a SQLite store", () => {
  it.scoped("creates a new store in WAL mode with foreign keys, NORMAL sync and a 5 s busy timeout", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "new.db")
      const store = yield* openStore({ path: file })
      expect(store.settings).toEqual({
        journalMode: "wal",
        synchronous: "NORMAL",
        busyTimeoutMillis: 5000,
        foreignKeys: true,
      })
      expect(store.schemaVersion).toBe(5)
      expect(store.migrationsApplied).toEqual([
        "0001_initial",
        "0002_operation_journal",
        "0003_blobs",
        "0004_operation_intents",
        "0005_blobs_brotli",
      ])
      expect(store.backupPath).toBeUndefined()
      withRawDatabase(file, (db) => {
        expect(db.pragma("application_id", { simple: true })).toBe(REWIND_APPLICATION_ID)
        expect(db.pragma("user_version", { simple: true })).toBe(5)
        expect(db.pragma("journal_mode", { simple: true })).toBe("wal")
        expect(db.pragma("page_size", { simple: true })).toBe(16_384)
        expect(db.prepare("select value from rewind_meta where key = 'schema_version'").pluck().get()).toBe(
          "5",
        )
        expect(db.prepare("select name from kysely_migration").pluck().all()).toEqual([
          "0001_initial",
          "0002_operation_journal",
          "0003_blobs",
          "0004_operation_intents",
          "0005_blobs_brotli",
        ])
      })
    }),
  )

  it.scoped("uses FULL sync and the busy timeout it is given", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const store = yield* openStore({
        path: path.join(dir, "full.db"),
        synchronous: "FULL",
        busyTimeoutMillis: 1234,
      })
      expect(store.settings).toMatchObject({ synchronous: "FULL", busyTimeoutMillis: 1234 })
    }),
  )

  it.scoped("refuses invalid options and a missing directory with a StoreError", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const invalid = yield* Effect.flip(openStore({ path: path.join(dir, "x.db"), busyTimeoutMillis: -1 }))
      expect(invalid).toMatchObject({ _tag: "StoreError", operation: "open" })
      expect(invalid.message).toMatch(/busyTimeoutMillis/)
      const missing = yield* Effect.flip(openStore({ path: path.join(dir, "no", "such", "dir", "x.db") }))
      expect(missing._tag).toBe("StoreError")
      expect(fs.existsSync(path.join(dir, "no"))).toBe(false)
    }),
  )

  it.effect(":memory: gives a private store per layer", () =>
    Effect.gen(function* () {
      const id = sessionIdOf("mem")
      const layer = SqliteSessionStore.layer({ path: ":memory:" })
      const first = yield* Effect.provide(
        Effect.gen(function* () {
          const store = yield* SessionStore
          const admin = yield* SqliteSessionStore.SqliteStore
          yield* store.append({ sessionId: id, expectedVersion: 0, events: [sessionCreated(id)], at: 1 })
          return { settings: admin.settings, events: yield* store.read(id) }
        }),
        layer,
      )
      expect(first.settings.journalMode).toBe("memory")
      expect(first.events).toHaveLength(1)
      expect(
        yield* Effect.provide(
          Effect.flatMap(SessionStore, (s) => s.version(id)),
          layer,
        ),
      ).toBe(0)
    }),
  )

  it.scoped("reopening a current store runs no migration and makes no backup", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "store.db")
      const written = yield* writeSampleSessions(file)
      const reopened = yield* openStore({ path: file })
      expect(reopened.migrationsApplied).toEqual([])
      expect(reopened.backupPath).toBeUndefined()
      expect(fs.readdirSync(dir)).toEqual(["store.db"])
      const events = yield* withStore(
        { path: file },
        Effect.flatMap(SessionStore, (s) => s.read(main)),
      )
      expect(events).toEqual(written.main)
    }),
  )

  it.scoped("running the migrations again on a current store is a no-op", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "store.db")
      yield* writeSampleSessions(file)
      const schemaOf = () =>
        withRawDatabase(file, (db) =>
          db.prepare("select type, name, sql from sqlite_schema order by name").all(),
        )
      const before = schemaOf()
      const opened = yield* openDatabase(resolveOptions({ path: file }), STORE_MIGRATIONS)
      expect(yield* migrateStore(opened.kysely, file, STORE_MIGRATIONS)).toEqual([])
      expect(yield* migrateStore(opened.kysely, file, STORE_MIGRATIONS)).toEqual([])
      expect(opened.db.prepare("select count(*) from kysely_migration").pluck().get()).toBe(
        STORE_MIGRATIONS.length,
      )
      expect(schemaOf()).toEqual(before)
    }),
  )

  it.scoped("an empty file becomes a new store", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "empty.db")
      fs.writeFileSync(file, "")
      const store = yield* openStore({ path: file })
      expect(store.migrationsApplied).toEqual([
        "0001_initial",
        "0002_operation_journal",
        "0003_blobs",
        "0004_operation_intents",
        "0005_blobs_brotli",
      ])
    }),
  )

  it.scoped(
    "a store made with 4 KiB pages keeps them, and its sessions and blobs, when opened and written",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const file = path.join(dir, "small-pages.db")
        const written = yield* writeSampleSessions(file)
        // Rebuilt with SQLite's default 4 KiB pages, as every store made before 16 KiB ones was.
        withRawDatabase(file, (db) => {
          db.pragma("journal_mode = DELETE")
          db.pragma("page_size = 4096")
          db.exec("vacuum")
          expect(db.pragma("page_size", { simple: true })).toBe(4096)
        })
        const content = new TextEncoder().encode("kept on small pages ".repeat(2_000))
        const read = yield* withStore(
          { path: file },
          Effect.gen(function* () {
            const store = yield* SessionStore
            const hash = yield* Effect.flatMap(ArtifactStore, (a) => a.put(content))
            return {
              main: yield* store.read(main),
              fork: yield* store.read(fork),
              back: yield* Effect.flatMap(ArtifactStore, (a) => a.get(hash)),
            }
          }).pipe(Effect.provide(SqliteArtifactStore.layer)),
        )
        expect({ main: read.main, fork: read.fork }).toEqual(written)
        expect(Buffer.from(read.back).equals(content)).toBe(true)
        withRawDatabase(file, (db) => {
          expect(db.pragma("page_size", { simple: true })).toBe(4096)
          expect(db.pragma("integrity_check", { simple: true })).toBe("ok")
        })
      }),
  )

  it.effect("closes the connection when the scope closes", () =>
    Effect.gen(function* () {
      const db = yield* Effect.scoped(
        Effect.gen(function* () {
          const dir = yield* tempDir
          const opened = yield* openDatabase(
            resolveOptions({ path: path.join(dir, "s.db") }),
            STORE_MIGRATIONS,
          )
          expect(opened.db.open).toBe(true)
          return opened.db
        }),
      )
      expect(db.open).toBe(false)
    }),
  )
})

describe("refusing files that are not a store this build may change", () => {
  it.scoped("a file that is not SQLite is not_a_store, left byte for byte untouched", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "notes.txt")
      fs.writeFileSync(file, "these are my notes, not a database\n".repeat(200))
      const error = yield* expectRefusedUntouched(dir, file, "not_a_store")
      expect(error.message).toMatch(/not a SQLite database/)
    }),
  )

  it.scoped("a directory is not_a_store", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const error = yield* Effect.flip(openStore({ path: dir }))
      expect(error).toMatchObject({ _tag: "StoreIncompatible", reason: "not_a_store" })
    }),
  )

  it.scoped("a SQLite header followed by garbage is corrupt, left untouched", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "garbage.db")
      const garbage = Buffer.alloc(8192)
      for (let i = 0; i < garbage.length; i++) garbage[i] = (i * 31 + 7) & 0xff
      Buffer.from("SQLite format 3\u0000", "latin1").copy(garbage)
      fs.writeFileSync(file, garbage)
      yield* expectRefusedUntouched(dir, file, "corrupt")
    }),
  )

  it.scoped("a store whose first page is damaged is corrupt, left untouched", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "store.db")
      yield* writeSampleSessions(file)
      const bytes = fs.readFileSync(file)
      for (let i = 100; i < 4096; i++) bytes[i] = (i * 7) & 0xff
      fs.writeFileSync(file, bytes)
      yield* expectRefusedUntouched(dir, file, "corrupt")
    }),
  )

  it.scoped(
    "a store damaged deep inside is found corrupt by the integrity check on open, left untouched",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const file = path.join(dir, "store.db")
        const id = sessionIdOf("big")
        yield* withStore(
          { path: file },
          Effect.flatMap(SessionStore, (s) =>
            s.append({
              sessionId: id,
              expectedVersion: 0,
              events: [
                sessionCreated(id),
                ...Array.from({ length: 300 }, (_, n) => textPart(0, n, `${n} `.repeat(300))),
              ],
              at: 1,
            }),
          ),
        )
        const bytes = fs.readFileSync(file)
        const pageSize = 4096
        expect(bytes.length).toBeGreaterThan(pageSize * 60)
        for (let i = pageSize * 40; i < pageSize * 42; i++) bytes[i] = (i * 13) & 0xff
        fs.writeFileSync(file, bytes)
        const error = yield* expectRefusedUntouched(dir, file, "corrupt", { integrityCheckOnOpen: true })
        expect(error.message).toMatch(/integrity check|damaged/)
      }),
  )

  it.scoped("a SQLite database of another application is not_a_store, left untouched", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "app.db")
      withRawDatabase(file, (db) => db.exec("create table customers (id integer primary key, name text)"))
      const error = yield* expectRefusedUntouched(dir, file, "not_a_store")
      expect(error.message).toMatch(/customers/)
    }),
  )

  it.scoped("a store written by a newer Rewind is refused as newer_version and left untouched", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "store.db")
      yield* writeSampleSessions(file)
      withRawDatabase(file, (db) => db.pragma("user_version = 99"))
      const error = yield* expectRefusedUntouched(dir, file, "newer_version")
      expect(error.message).toMatch(/version 99.*up to 5.*Upgrade Rewind/)
    }),
  )
})

describe("a refused store whose change is still in its WAL (issue 21 item 5)", () => {
  const filesOf = (file: string) =>
    Object.fromEntries(
      ["", "-wal", "-shm"].map((suffix) => [suffix || "main", fs.readFileSync(`${file}${suffix}`)] as const),
    )

  /** A store whose last change (`statement`) a killed process left in `-wal` and `-shm`. */
  const storeWithLiveWal = (statement: string) =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "store.db")
      yield* writeSampleSessions(file)
      const child = yield* runNode(fixture("killedWriter.mjs"), [file, statement])
      expect(child.code).not.toBe(0)
      expect(fs.statSync(`${file}-wal`).size).toBeGreaterThan(0)
      expect(fs.statSync(`${file}-shm`).size).toBeGreaterThan(0)
      return { dir, file }
    })

  it.scoped(
    "newer_version from the WAL: refused without opening, main file, -wal and -shm byte for byte",
    () =>
      Effect.gen(function* () {
        const { dir, file } = yield* storeWithLiveWal("pragma user_version = 99")
        const before = filesOf(file)
        const entries = fs.readdirSync(dir).sort()
        const error = yield* Effect.flip(openStore({ path: file }))
        expect(error).toMatchObject({ _tag: "StoreIncompatible", reason: "newer_version", location: file })
        expect(error.message).toMatch(/version 99/)
        expect(fs.readdirSync(dir).sort()).toEqual(entries)
        const after = filesOf(file)
        for (const name of ["main", "-wal", "-shm"] as const) {
          expect(Buffer.compare(after[name]!, before[name]!), name).toBe(0)
        }
      }),
  )

  it.scoped(
    "unknown migrations from the WAL: refused on a read-only connection, main file and -wal byte for byte",
    () =>
      Effect.gen(function* () {
        const { dir, file } = yield* storeWithLiveWal(
          "insert into kysely_migration (name, timestamp) values ('9999_future', '2030-01-01T00:00:00.000Z')",
        )
        const before = filesOf(file)
        const entries = fs.readdirSync(dir).sort()
        const error = yield* Effect.flip(openStore({ path: file }))
        expect(error).toMatchObject({ _tag: "StoreIncompatible", reason: "newer_version", location: file })
        expect(error.message).toMatch(/9999_future/)
        expect(fs.readdirSync(dir).sort()).toEqual(entries)
        // The -shm is SQLite's index of the -wal, rebuilt from it on a first open: not compared.
        const after = filesOf(file)
        expect(Buffer.compare(after.main!, before.main!)).toBe(0)
        expect(Buffer.compare(after["-wal"]!, before["-wal"]!)).toBe(0)
      }),
  )

  it.scoped("a store whose WAL holds an ordinary change opens and sees it", () =>
    Effect.gen(function* () {
      const { file } = yield* storeWithLiveWal(
        "insert into rewind_meta (key, value) values ('probe', 'seen')",
      )
      const store = yield* openStore({ path: file })
      expect(store.schemaVersion).toBe(STORE_MIGRATIONS.length)
      withRawDatabase(file, (db) =>
        expect(db.prepare("select value from rewind_meta where key = 'probe'").pluck().get()).toBe("seen"),
      )
    }),
  )
})

describe("migrating a store with data", () => {
  const withV2 = [...STORE_MIGRATIONS, V2_MIGRATION]

  it.scoped("backs the file up first, records the new version, and another process reads the result", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "store.db")
      const written = yield* writeSampleSessions(file)

      const migrated = yield* Effect.scoped(
        Effect.gen(function* () {
          const store = yield* makeSqliteStore({ path: file }, withV2)
          return {
            schemaVersion: store.schemaVersion,
            migrationsApplied: store.migrationsApplied,
            backupPath: store.backupPath,
            main: yield* store.sessionStore.read(main),
          }
        }),
      )
      expect(migrated).toEqual({
        schemaVersion: 6,
        migrationsApplied: ["0006_test_session_archive"],
        backupPath: `${file}.bak-v5`,
        main: written.main,
      })

      // The backup is the v2 store as it was: this build opens it as a current store.
      const backup = yield* withStore(
        { path: `${file}.bak-v5` },
        Effect.gen(function* () {
          const store = yield* SessionStore
          const admin = yield* SqliteSessionStore.SqliteStore
          return {
            version: admin.schemaVersion,
            main: yield* store.read(main),
            fork: yield* store.read(fork),
          }
        }),
      )
      expect(backup).toEqual({ version: 5, main: written.main, fork: written.fork })

      // Opening again is a no-op: nothing to run, no second backup.
      const again = yield* Effect.scoped(makeSqliteStore({ path: file }, withV2))
      expect(again.migrationsApplied).toEqual([])
      expect(again.backupPath).toBeUndefined()
      expect(fs.readdirSync(dir).filter((f) => f.includes(".bak-"))).toEqual(["store.db.bak-v5"])

      // This build (schema 5) must not touch the upgraded store.
      yield* expectRefusedUntouched(dir, file, "newer_version")

      const child = yield* runNode(fixture("readMigratedStore.mjs"), [file])
      expect(child.stderr).toBe("")
      expect(child.code).toBe(0)
      expect(JSON.parse(child.stdout)).toEqual({
        schemaVersion: 6,
        migrationsApplied: [],
        backupPath: null,
        sessions: [
          { sessionId: main, kind: "main", title: "session main", version: 2 },
          { sessionId: fork, kind: "fork", title: "session fork", version: 2 },
        ],
        eventTypes: [
          "main#1:SessionCreated",
          "main#2:MessageAppended",
          "fork#1:SessionCreated",
          "fork#2:PartAppended",
        ],
        integrity: { ok: true, problems: [] },
        archived: [
          { session_id: fork, archived: 1 },
          { session_id: main, archived: 0 },
        ],
      })
    }),
  )

  it.scoped("0004 moves every journaled intent to its own table; a pending operation reads back whole", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "store.db")
      // A schema-3 store (intents inline in `operations`) with one pending and one committed operation.
      yield* Effect.scoped(openDatabase(resolveOptions({ path: file }), STORE_MIGRATIONS.slice(0, 3)))
      const intentOf = (operationId: string): OperationIntent => ({
        operationId: operationId as OperationId,
        sessionId: main,
        kind: "cascade",
        files: [
          {
            path: "a.txt" as WorkspacePath,
            rescue: { _tag: "present", hash: "a".repeat(64) as ContentHash, mode: 0o644 },
            planned: { _tag: "absent" },
          },
        ],
        startedAt: 7,
        redo: {
          activeBranch: Array.from({ length: 500 }, (_, i) => `msg-${i}` as MessageId),
          spentCheckpointIds: [],
        },
      })
      withRawDatabase(file, (db) => {
        const insert = db.prepare(
          "insert into operations (operation_id, session_id, kind, intent, status, started_at, redo_available, redo_consumed) values (?, ?, 'cascade', ?, ?, 7, 1, 0)",
        )
        insert.run("op-done", main, encodeOperationIntentJson(intentOf("op-done")), "committed")
        insert.run("op-open", main, encodeOperationIntentJson(intentOf("op-open")), "pending")
      })
      const journaled = yield* Effect.scoped(
        Effect.gen(function* () {
          const store = yield* makeSqliteStore({ path: file }, STORE_MIGRATIONS)
          return {
            applied: store.migrationsApplied,
            pending: yield* store.operationJournal.incomplete(),
            all: (yield* store.operationJournal.all()).map((r) => [r.intent.operationId, r.status]),
            integrity: yield* store.integrityCheck,
          }
        }),
      )
      expect(journaled.applied).toEqual(["0004_operation_intents", "0005_blobs_brotli"])
      expect(journaled.pending).toEqual([
        { intent: intentOf("op-open"), status: "pending", steps: [], redoConsumed: false },
      ])
      expect(journaled.all).toEqual([
        ["op-done", "committed"],
        ["op-open", "pending"],
      ])
      expect(journaled.integrity).toEqual({ ok: true, problems: [] })
      withRawDatabase(file, (db) => {
        const columns = (db.pragma("table_info(operations)") as Array<{ name: string }>).map((c) => c.name)
        expect(columns).not.toContain("intent")
      })
    }),
  )

  it.scoped("0005 keeps every blob as it was stored; deflated ones read back, new ones are brotli", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "store.db")
      // A schema-4 store holding a deflated blob and one stored as is, written as 0003 stored them.
      yield* Effect.scoped(openDatabase(resolveOptions({ path: file }), STORE_MIGRATIONS.slice(0, 4)))
      const text = new TextEncoder().encode("a line of source text\n".repeat(2_000))
      const small = new TextEncoder().encode("tiny")
      withRawDatabase(file, (db) => {
        const insert = db.prepare(
          "insert into blobs (id, hash, size, encoding, stored_at, content) values (?, ?, ?, ?, ?, ?)",
        )
        insert.run(7, Buffer.from(hashContent(text), "hex"), text.byteLength, 1, 11, deflateRawSync(text))
        insert.run(9, Buffer.from(hashContent(small), "hex"), small.byteLength, 0, 12, Buffer.from(small))
      })
      const before = withRawDatabase(file, (db) =>
        db.prepare("select id, hash, size, encoding, stored_at, content from blobs order by id").all(),
      )
      const later = new TextEncoder().encode("another file, put after the upgrade\n".repeat(500))
      const after = yield* Effect.scoped(
        Effect.gen(function* () {
          const store = yield* makeSqliteStore({ path: file }, STORE_MIGRATIONS)
          const read = yield* store.artifactStore.getMany([hashContent(text), hashContent(small)])
          yield* store.artifactStore.put(later)
          return { applied: store.migrationsApplied, read, integrity: yield* store.integrityCheck }
        }),
      )
      expect(after.applied).toEqual(["0005_blobs_brotli"])
      expect(after.read.map((b) => Buffer.from(b).toString())).toEqual([Buffer.from(text).toString(), "tiny"])
      expect(after.integrity).toEqual({ ok: true, problems: [] })
      withRawDatabase(file, (db) => {
        const rows = db
          .prepare("select id, hash, size, encoding, stored_at, content from blobs order by id")
          .all()
        expect(rows.slice(0, 2)).toEqual(before)
        expect(rows).toHaveLength(3)
        expect((rows[2] as { encoding: number }).encoding).toBe(2)
        // The rebuilt table refuses an encoding no build writes, as the old one did.
        expect(() => db.prepare("update blobs set encoding = 3 where id = 7").run()).toThrow(/CHECK/)
      })
    }),
  )

  it.scoped("refuses a store that records migrations this build does not know", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "store.db")
      yield* writeSampleSessions(file)
      withRawDatabase(file, (db) =>
        db
          .prepare(
            "insert into kysely_migration (name, timestamp) values ('0001_zz_future', '2030-01-01T00:00:00.000Z')",
          )
          .run(),
      )
      const error = yield* Effect.flip(Effect.scoped(makeSqliteStore({ path: file }, withV2)))
      expect(error).toMatchObject({ _tag: "StoreIncompatible", reason: "newer_version" })
      withRawDatabase(file, (db) =>
        expect(db.pragma("user_version", { simple: true })).toBe(STORE_MIGRATIONS.length),
      )
    }),
  )
})
