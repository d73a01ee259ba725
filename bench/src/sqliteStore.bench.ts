/**
 * The SQLite SessionStore against raw better-sqlite3 on the very same schema, measured in the same
 * rounds: batched appends (100 events per append), single-event appends (one transaction per
 * event), and the cold load of a long session (100,000 events in full mode): open the file, read,
 * decode and `projectSession`.
 *
 * Raw baselines insert the same rows into the same tables (the store creates the schema, then a
 * plain better-sqlite3 connection writes with prepared statements inside `BEGIN IMMEDIATE`), so the
 * ratios show what the adapter costs on top of SQLite. Batched appends are held against a raw
 * writer that also encodes each event with the contracts codec (the same work the store must do),
 * and against one that inserts rows encoded beforehand (SQLite alone: the floor).
 */
import { rmSync } from "node:fs"
import { join } from "node:path"
import { SqliteSessionStore } from "@rewind/adapter-sqlite"
import {
  encodeEvent,
  Message,
  MessageAppended,
  type MessageId,
  Part,
  PartAppended,
  type PartId,
  Session,
  SessionCreated,
  type SessionEvent,
  type SessionId,
  type TraceId,
  TurnCompleted,
  type TurnId,
  TurnStarted,
} from "@rewind/contracts"
import { projectSession, SessionStore, type SessionStoreService } from "@rewind/core"
import Database from "better-sqlite3"
import { Effect, ManagedRuntime } from "effect"
import type { BenchCase, BenchContext, InProcessSampler } from "./harness/types.js"

/** Per mode: events per batched append, prepared batches, prepared single events, cold-load length. */
const SHAPE = {
  full: { batchSize: 100, batches: 100, singleAppends: 2_000, coldLoadEvents: 100_000 },
  quick: { batchSize: 100, batches: 10, singleAppends: 200, coldLoadEvents: 2_000 },
} as const

/** Results are kept here so no timed call can be optimised away as dead code. */
let sink: unknown
const keep = (value: unknown): void => {
  sink = value
}
export const lastKept = () => sink

// ---------------------------------------------------------------------------------------------
// A realistic stream: turns of a user question, a reply with reasoning, a tool call and text.

const SESSION = "bench-session" as SessionId
const words = "the quick brown fox jumps over the lazy dog while the build runs and the tests pass ".repeat(4)

/** `count` events of a realistic session (the PostgreSQL store case uses them too). */
export const sessionEvents = (count: number, sessionId: SessionId = SESSION): Array<SessionEvent> => {
  const events: Array<SessionEvent> = [
    new SessionCreated({
      session: new Session({
        id: sessionId,
        rootTraceId: "bench-trace" as TraceId,
        kind: "main",
        title: "benchmark session",
        cwd: "/work",
        createdAt: 0,
      }),
    }),
  ]
  for (let turn = 0; events.length < count; turn++) {
    const turnId = `turn_${turn}` as TurnId
    const user = `msg_${turn}_u` as MessageId
    const reply = `msg_${turn}_a` as MessageId
    const message = (id: MessageId, role: "user" | "assistant") =>
      new MessageAppended({
        message: new Message({
          id,
          sessionId,
          turnId,
          role,
          status: "ok",
          visibility: "all",
          createdAt: turn,
        }),
      })
    const part = (id: string, messageId: MessageId, fields: Partial<Part>) =>
      new PartAppended({ part: new Part({ id: id as PartId, messageId, kind: "text", ...fields }) })
    events.push(
      message(user, "user"),
      part(`part_${turn}_q`, user, { text: `question ${turn}: ${words.slice(0, 120)}` }),
      new TurnStarted({ turnId, userMessageId: user }),
      message(reply, "assistant"),
      part(`part_${turn}_r`, reply, { kind: "reasoning", text: words.slice(0, 300) }),
      part(`part_${turn}_t`, reply, {
        kind: "tool_call",
        toolName: "Edit",
        data: { path: `src/file${turn % 50}.ts`, old: "const a = 1", new: `const a = ${turn}` },
      }),
      part(`part_${turn}_x`, reply, { text: `done with ${turn}: ${words.slice(0, 200)}` }),
      new TurnCompleted({ turnId, status: "completed" }),
    )
  }
  return events.slice(0, count)
}

export interface Row {
  readonly type: string
  readonly version: number
  readonly payload: string
}

export const encodeRow = (event: SessionEvent): Row => {
  const encoded = encodeEvent(event)
  return { type: encoded.type, version: encoded.version, payload: JSON.stringify(encoded.payload) }
}

// ---------------------------------------------------------------------------------------------
// The two sides: the store (through Effect) and raw better-sqlite3 on a file with the same schema.

/** Creates the store's schema in a new file and closes it again. */
const createStoreFile = (file: string) =>
  Effect.runPromise(Effect.scoped(SqliteSessionStore.make({ path: file })))

/** The minimum a hand-written store does per append: lock, insert the rows, bump the version, commit. */
const rawAppender = (file: string) => {
  const db = new Database(file)
  db.pragma("busy_timeout = 5000")
  db.pragma("journal_mode = WAL")
  db.pragma("synchronous = NORMAL")
  db.pragma("foreign_keys = ON")
  const begin = db.prepare("begin immediate")
  const commit = db.prepare("commit")
  const upsertStream = db.prepare(
    "insert into streams (session_id, version, updated_at) values (?, ?, ?) on conflict (session_id) do update set version = excluded.version, updated_at = excluded.updated_at",
  )
  const insert = db.prepare(
    "insert into events (session_id, sequence, type, version, payload, at) values (?, ?, ?, ?, ?, ?)",
  )
  return {
    append: (sequence: number, rows: ReadonlyArray<Row>, at: number) => {
      begin.run()
      upsertStream.run(SESSION, sequence + rows.length, at)
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i]!
        insert.run(SESSION, sequence + i + 1, row.type, row.version, row.payload, at)
      }
      commit.run()
    },
    close: () => db.close(),
  }
}

export const chunks = <A>(items: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

/** One side's target: a store file it appends prepared batches to, in order. */
interface Target {
  readonly append: (batch: number) => unknown
  readonly close: () => unknown
}

/**
 * An in-process sampler appending the prepared batches one per iteration; when they run out, the
 * next iteration starts over on a fresh file (opened untimed), so the stream stays well-formed.
 */
const appendSampler = (
  label: string,
  batches: number,
  open: () => Promise<Target>,
): InProcessSampler & { readonly close: () => Promise<void> } => {
  let target: Target | undefined
  let next = 0
  return {
    kind: "in-process",
    label,
    beforeEach: async () => {
      if (target !== undefined && next < batches) return
      await target?.close()
      target = await open()
      next = 0
    },
    fn: () => target!.append(next++),
    close: async () => {
      await target?.close()
      target = undefined
    },
  }
}

const storeTarget = async (
  file: string,
  batches: ReadonlyArray<ReadonlyArray<SessionEvent>>,
): Promise<Target> => {
  const runtime = ManagedRuntime.make(SqliteSessionStore.layer({ path: file }))
  const store: SessionStoreService = await runtime.runPromise(SessionStore)
  let version = 0
  return {
    append: async (b) => {
      const events = batches[b]!
      await Effect.runPromise(store.append({ sessionId: SESSION, expectedVersion: version, events, at: b }))
      version += events.length
    },
    close: () => runtime.dispose(),
  }
}

const rawTarget = (file: string, rowsOf: (b: number) => ReadonlyArray<Row>): Target => {
  const raw = rawAppender(file)
  let version = 0
  return {
    append: (b) => {
      const rows = rowsOf(b)
      raw.append(version, rows, b)
      version += rows.length
    },
    close: raw.close,
  }
}

const removeDb = (file: string) => {
  for (const suffix of ["", "-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true })
}

const measureAppends = async (ctx: BenchContext) => {
  const shape = SHAPE[ctx.mode]
  const dir = ctx.tempDir("sqlite-appends")
  let files = 0
  const freshFile = async () => {
    const file = join(dir, `run-${files++}.db`)
    await createStoreFile(file)
    return file
  }
  /** Each side removes its previous file when it starts a fresh one. */
  const opener = (make: (file: string) => Target | Promise<Target>) => {
    let previous: string | undefined
    return async () => {
      if (previous !== undefined) removeDb(previous)
      previous = await freshFile()
      return make(previous)
    }
  }

  const batchEvents = chunks(sessionEvents(shape.batchSize * shape.batches), shape.batchSize)
  const batchRows = batchEvents.map((events) => events.map(encodeRow))
  const batched = [
    appendSampler(
      `SqliteSessionStore.append (${shape.batchSize} events)`,
      batchEvents.length,
      opener((file) => storeTarget(file, batchEvents)),
    ),
    appendSampler(
      "raw better-sqlite3, same rows, same encoding",
      batchEvents.length,
      opener((file) => rawTarget(file, (b) => batchEvents[b]!.map(encodeRow))),
    ),
    appendSampler(
      "raw better-sqlite3, rows encoded beforehand",
      batchEvents.length,
      opener((file) => rawTarget(file, (b) => batchRows[b]!)),
    ),
  ] as const
  try {
    await ctx.compare({
      series: `batched append (${shape.batchSize} events per append)`,
      subject: batched[0],
      baseline: batched[1],
      limit: batched[2],
      notes: [
        "time per append of one batch in its own transaction; target: at least half raw speed (ratio at most 2)",
        "limit: SQLite alone (rows encoded beforehand)",
      ],
    })
  } finally {
    for (const s of batched) await s.close()
  }

  const singleEvents = chunks(sessionEvents(shape.singleAppends), 1)
  const singleRows = singleEvents.map((events) => events.map(encodeRow))
  const single = [
    appendSampler(
      "SqliteSessionStore.append (1 event)",
      singleEvents.length,
      opener((file) => storeTarget(file, singleEvents)),
    ),
    appendSampler(
      "raw better-sqlite3 transaction, one row",
      singleEvents.length,
      opener((file) => rawTarget(file, (b) => singleRows[b]!)),
    ),
  ] as const
  try {
    await ctx.compare({
      series: "single-event append latency",
      subject: single[0],
      baseline: single[1],
    })
  } finally {
    for (const s of single) await s.close()
  }
}

const measureColdLoad = async (ctx: BenchContext) => {
  const events = SHAPE[ctx.mode].coldLoadEvents
  const file = join(ctx.tempDir("sqlite-cold"), "cold.db")
  const stream = sessionEvents(events)
  const runtime = ManagedRuntime.make(SqliteSessionStore.layer({ path: file }))
  try {
    const store = await runtime.runPromise(SessionStore)
    for (let start = 0; start < stream.length; start += 1000) {
      const batch = stream.slice(start, start + 1000)
      await Effect.runPromise(
        store.append({ sessionId: SESSION, expectedVersion: start, events: batch, at: start }),
      )
    }
  } finally {
    await runtime.dispose()
  }
  ctx.sampleMemory()

  const loadWithStore = () =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const sqlite = yield* SqliteSessionStore.make({ path: file })
          const state = projectSession(yield* sqlite.sessionStore.read(SESSION))
          if (state.version !== events) throw new Error(`loaded ${state.version} events`)
          return state
        }),
      ),
    )
  const loadRaw = () => {
    const db = new Database(file)
    const rows = db
      .prepare(
        "select sequence, type, version, payload, at from events where session_id = ? order by sequence",
      )
      .raw()
      .all(SESSION) as Array<[number, string, number, string, number]>
    const parsed = rows.map((r) => JSON.parse(r[3]))
    db.close()
    if (parsed.length !== events) throw new Error(`raw read ${parsed.length} rows`)
    return parsed
  }

  await ctx.compare({
    series: "cold load of a session (open + read + decode + project)",
    size: { value: events, unit: "events" },
    subject: {
      kind: "in-process",
      label: "SqliteSessionStore open + read + projectSession",
      fn: async () => keep(await loadWithStore()),
    },
    baseline: {
      kind: "in-process",
      label: "raw better-sqlite3 select + JSON.parse",
      fn: () => keep(loadRaw()),
    },
    ...(events >= 100_000
      ? { target: { description: `cold load of a ${events}-event session`, maxMedianMs: 1000 } }
      : {}),
    expectedGrowth: "whole",
  })
}

export const sqliteStore: BenchCase = {
  name: "sqlite-store",
  group: "store",
  description:
    "SqliteSessionStore batched and single-event appends and a cold session load, against raw better-sqlite3 on the same schema",
  run: async (ctx) => {
    await measureAppends(ctx)
    await measureColdLoad(ctx)
  },
}
