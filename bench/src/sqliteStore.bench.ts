/**
 * The SQLite SessionStore against raw better-sqlite3 on the very same schema, measured in one run:
 * - batched append throughput (events per second, batches of 100 events);
 * - single-event append latency (one transaction per event);
 * - the cold load of a 100,000-event session: open the file, read, decode and `projectSession`.
 *
 * Raw baselines insert the same rows into the same tables (the store creates the schema, then a
 * plain better-sqlite3 connection writes with prepared statements inside `BEGIN IMMEDIATE`), so the
 * ratios show what the adapter costs on top of SQLite. Two raw variants are reported: one that also
 * encodes each event with the contracts codec (the same work the store must do) and one that
 * inserts rows encoded beforehand (SQLite alone). Self-contained: `runSqliteStoreBench()` returns
 * the figures and `formatSqliteStoreBench` prints them.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
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
import { Effect } from "effect"

export interface SqliteStoreBenchOptions {
  /** Events per batch in the throughput figure (default 100). */
  readonly batchSize?: number
  /** Batches per throughput run (default 100). */
  readonly batches?: number
  /** Appends in the latency figure (default 2,000). */
  readonly singleAppends?: number
  /** Events of the cold-loaded session (default 100,000). */
  readonly coldLoadEvents?: number
  /** Repetitions of each measurement; the median is reported (default 3). */
  readonly runs?: number
}

export interface BenchFigure {
  readonly name: string
  readonly unit: string
  readonly store: number
  readonly baseline: number
  readonly baselineName: string
  /** `store / baseline`; `higherIsBetter` says how to read it. */
  readonly ratio: number
  readonly higherIsBetter: boolean
  readonly target?: { readonly description: string; readonly met: boolean }
}

export interface SqliteStoreBenchReport {
  readonly suite: "sqlite-store"
  readonly figures: ReadonlyArray<BenchFigure>
  /** Extra observations: breakdowns and first-run numbers. */
  readonly details: Readonly<Record<string, number>>
}

export const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

export const percentile = (values: ReadonlyArray<number>, p: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

const collectGarbage = () => (globalThis as { gc?: () => void }).gc?.()

// ---------------------------------------------------------------------------------------------
// A realistic stream: turns of a user question, a reply with reasoning, a tool call and text.

const SESSION = "bench-session" as SessionId
const words = "the quick brown fox jumps over the lazy dog while the build runs and the tests pass ".repeat(4)

/** `count` events of a realistic session (also used by the PostgreSQL benchmark). */
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

interface Row {
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

const withStore = <A>(file: string, body: (store: SessionStoreService) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(
    Effect.flatMap(SessionStore, body).pipe(Effect.provide(SqliteSessionStore.layer({ path: file }))),
  )

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

// ---------------------------------------------------------------------------------------------

export const runSqliteStoreBench = async (
  options: SqliteStoreBenchOptions = {},
): Promise<SqliteStoreBenchReport> => {
  const batchSize = options.batchSize ?? 100
  const batches = options.batches ?? 100
  const singleAppends = options.singleAppends ?? 2_000
  const coldLoadEvents = options.coldLoadEvents ?? 100_000
  const runs = options.runs ?? 3
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rewind-bench-sqlite-"))
  let fileCount = 0
  const freshFile = async () => {
    const file = path.join(dir, `run-${fileCount++}.db`)
    await createStoreFile(file)
    return file
  }

  try {
    const batchEvents = sessionEvents(batchSize * batches)
    const batchRows = batchEvents.map(encodeRow)
    const singleEvents = sessionEvents(singleAppends)
    const singleRows = singleEvents.map(encodeRow)

    // The store and the raw baselines run interleaved, batch by batch (rotating who goes first), so
    // that other processes competing for the cores slow every side alike.
    const batchedRun = async () => {
      const storeFile = await freshFile()
      const rawEncoding = rawAppender(await freshFile())
      const rawEncoded = rawAppender(await freshFile())
      const elapsed = await withStore(storeFile, (store) =>
        Effect.gen(function* () {
          const time = { store: 0, rawEncoding: 0, rawEncoded: 0 }
          for (let b = 0; b < batches; b++) {
            const from = b * batchSize
            const events = batchEvents.slice(from, from + batchSize)
            for (let turn = 0; turn < 3; turn++) {
              const start = performance.now()
              switch ((b + turn) % 3) {
                case 0:
                  yield* store.append({ sessionId: SESSION, expectedVersion: from, events, at: b })
                  time.store += performance.now() - start
                  break
                case 1:
                  rawEncoding.append(from, events.map(encodeRow), b)
                  time.rawEncoding += performance.now() - start
                  break
                default:
                  rawEncoded.append(from, batchRows.slice(from, from + batchSize), b)
                  time.rawEncoded += performance.now() - start
              }
            }
          }
          return time
        }),
      )
      rawEncoding.close()
      rawEncoded.close()
      const perSecond = (millis: number) => (batchEvents.length / millis) * 1000
      return {
        store: perSecond(elapsed.store),
        rawEncoding: perSecond(elapsed.rawEncoding),
        rawEncoded: perSecond(elapsed.rawEncoded),
      }
    }

    // Single-event latency: microseconds per append, interleaved the same way.
    const singleRun = async () => {
      const storeFile = await freshFile()
      const raw = rawAppender(await freshFile())
      const latencies = await withStore(storeFile, (store) =>
        Effect.gen(function* () {
          const out = { store: [] as Array<number>, raw: [] as Array<number> }
          for (let i = 0; i < singleEvents.length; i++) {
            for (let turn = 0; turn < 2; turn++) {
              const start = performance.now()
              if ((i + turn) % 2 === 0) {
                yield* store.append({
                  sessionId: SESSION,
                  expectedVersion: i,
                  events: [singleEvents[i]!],
                  at: i,
                })
                out.store.push((performance.now() - start) * 1000)
              } else {
                raw.append(i, [singleRows[i]!], i)
                out.raw.push((performance.now() - start) * 1000)
              }
            }
          }
          return out
        }),
      )
      raw.close()
      return latencies
    }

    // Warm every path up once so the JIT does not favour whichever runs first.
    await batchedRun()
    await singleRun()

    const batched = {
      store: [] as Array<number>,
      rawEncoding: [] as Array<number>,
      rawEncoded: [] as Array<number>,
    }
    const single = { store: [] as Array<number>, raw: [] as Array<number>, storeP95: [] as Array<number> }
    for (let run = 0; run < runs; run++) {
      collectGarbage()
      const b = await batchedRun()
      batched.store.push(b.store)
      batched.rawEncoding.push(b.rawEncoding)
      batched.rawEncoded.push(b.rawEncoded)
      collectGarbage()
      const s = await singleRun()
      single.store.push(median(s.store))
      single.storeP95.push(percentile(s.store, 95))
      single.raw.push(median(s.raw))
    }

    // Cold load: a closed file with a 100,000-event session, opened, read, decoded and projected.
    const coldFile = await freshFile()
    const coldEvents = sessionEvents(coldLoadEvents)
    await withStore(coldFile, (store) =>
      Effect.gen(function* () {
        for (let start = 0; start < coldEvents.length; start += 1000) {
          const events = coldEvents.slice(start, start + 1000)
          yield* store.append({ sessionId: SESSION, expectedVersion: start, events, at: start })
        }
      }),
    )
    const cpuMillis = (since: NodeJS.CpuUsage) => {
      const used = process.cpuUsage(since)
      return (used.user + used.system) / 1000
    }
    const coldStore = async () => {
      collectGarbage()
      const cpu0 = process.cpuUsage()
      const t0 = performance.now()
      return Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const sqlite = yield* SqliteSessionStore.make({ path: coldFile })
            const t1 = performance.now()
            const events = yield* sqlite.sessionStore.read(SESSION)
            const t2 = performance.now()
            const state = projectSession(events)
            const t3 = performance.now()
            if (state.version !== coldLoadEvents) throw new Error(`loaded ${state.version} events`)
            return { total: t3 - t0, cpu: cpuMillis(cpu0), open: t1 - t0, read: t2 - t1, project: t3 - t2 }
          }),
        ),
      )
    }
    const coldRaw = () => {
      collectGarbage()
      const cpu0 = process.cpuUsage()
      const t0 = performance.now()
      const db = new Database(coldFile)
      const rows = db
        .prepare(
          "select sequence, type, version, payload, at from events where session_id = ? order by sequence",
        )
        .raw()
        .all(SESSION) as Array<[number, string, number, string, number]>
      const parsed = rows.map((r) => JSON.parse(r[3]))
      db.close()
      if (parsed.length !== coldLoadEvents) throw new Error(`raw read ${parsed.length} rows`)
      return { total: performance.now() - t0, cpu: cpuMillis(cpu0) }
    }
    const coldRuns: Array<{ total: number; cpu: number; open: number; read: number; project: number }> = []
    const coldRawRuns: Array<{ total: number; cpu: number }> = []
    for (let run = 0; run < runs; run++) {
      coldRuns.push(await coldStore())
      coldRawRuns.push(coldRaw())
    }

    const batchedStore = median(batched.store)
    const batchedRawEncoding = median(batched.rawEncoding)
    const batchedRawEncoded = median(batched.rawEncoded)
    const singleStore = median(single.store)
    const singleRaw = median(single.raw)
    const coldTotal = median(coldRuns.map((r) => r.total))
    const coldRawTotal = median(coldRawRuns.map((r) => r.total))

    return {
      suite: "sqlite-store",
      figures: [
        {
          name: `batched append (${batchSize} events per append)`,
          unit: "events/s",
          store: batchedStore,
          baseline: batchedRawEncoding,
          baselineName: "raw better-sqlite3, same rows, same encoding",
          ratio: batchedStore / batchedRawEncoding,
          higherIsBetter: true,
          target: { description: "at least 0.5 of raw", met: batchedStore / batchedRawEncoding >= 0.5 },
        },
        {
          name: `batched append (${batchSize} events per append)`,
          unit: "events/s",
          store: batchedStore,
          baseline: batchedRawEncoded,
          baselineName: "raw better-sqlite3, rows encoded beforehand",
          ratio: batchedStore / batchedRawEncoded,
          higherIsBetter: true,
        },
        {
          name: "single-event append latency (median)",
          unit: "µs",
          store: singleStore,
          baseline: singleRaw,
          baselineName: "raw better-sqlite3 transaction, one row",
          ratio: singleStore / singleRaw,
          higherIsBetter: false,
        },
        {
          name: `cold load of a ${coldLoadEvents.toLocaleString("en")}-event session (open + read + decode + project)`,
          unit: "ms",
          store: coldTotal,
          baseline: coldRawTotal,
          baselineName: "raw better-sqlite3 select + JSON.parse",
          ratio: coldTotal / coldRawTotal,
          higherIsBetter: false,
          target: { description: "under 1000 ms", met: coldTotal < 1000 },
        },
      ],
      details: {
        singleAppendStoreP95Micros: median(single.storeP95),
        coldLoadFirstRunMillis: coldRuns[0]!.total,
        // CPU time is what the load costs without other processes competing for the cores.
        coldLoadCpuMillis: median(coldRuns.map((r) => r.cpu)),
        coldLoadRawCpuMillis: median(coldRawRuns.map((r) => r.cpu)),
        coldLoadOpenMillis: median(coldRuns.map((r) => r.open)),
        coldLoadReadDecodeMillis: median(coldRuns.map((r) => r.read)),
        coldLoadProjectMillis: median(coldRuns.map((r) => r.project)),
        coldFileMegabytes: fs.statSync(coldFile).size / 1024 / 1024,
      },
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString("en") : n.toFixed(2))

export const formatSqliteStoreBench = (report: SqliteStoreBenchReport): string => {
  const lines = ["SQLite SessionStore vs raw better-sqlite3 (same schema, same run)", ""]
  for (const f of report.figures) {
    const reading = f.higherIsBetter ? "of raw speed" : "× raw time"
    const target =
      f.target === undefined ? "" : `  [target: ${f.target.description}: ${f.target.met ? "met" : "NOT met"}]`
    lines.push(`${f.name}`)
    lines.push(`  store ${fmt(f.store)} ${f.unit}  vs  ${f.baselineName} ${fmt(f.baseline)} ${f.unit}`)
    lines.push(`  ratio ${f.ratio.toFixed(2)} ${reading}${target}`)
  }
  lines.push("", "details:")
  for (const [key, value] of Object.entries(report.details)) lines.push(`  ${key}: ${fmt(value)}`)
  return lines.join("\n")
}
