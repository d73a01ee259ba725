/**
 * The PostgreSQL SessionStore beside the SQLite one, measured in one run on the same events:
 * - batched append throughput (events per second, batches of 100 events), with a raw `pg`
 *   baseline that writes the same rows into the same schema in one transaction per batch (the
 *   version bump and one `INSERT … SELECT FROM unnest(…)`), so the adapter's own cost shows;
 * - fork-like commit latency: one multi-stream commit of a new child stream (a copied prefix of
 *   the parent), a marker event in the parent at its expected version, and a command fact.
 * Every side runs interleaved with the others, step by step with a rotating order, so other
 * processes competing for the cores slow every side alike; ratios are PostgreSQL / SQLite.
 *
 * Needs a server: `BENCH_PG_URL` or `REWIND_PG_URL` (`source .ci/postgres.sh` starts a throwaway
 * one). Without it `runPostgresStoreBench` returns a report saying so. The benchmark works in a
 * schema of its own, dropped at the end. Self-contained: `runPostgresStoreBench()` returns the
 * figures and `formatPostgresStoreBench` prints them.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { PostgresSessionStore } from "@rewind/adapter-postgres"
import { SqliteSessionStore } from "@rewind/adapter-sqlite"
import { Session, SessionCreated, type SessionEvent, type SessionId } from "@rewind/contracts"
import { SessionStore, type SessionStoreService } from "@rewind/core"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import pg from "pg"
import { type BenchFigure, encodeRow, median, percentile, sessionEvents } from "./sqliteStore.bench.js"

export interface PostgresStoreBenchOptions {
  /** Events per batch in the throughput figure (default 100). */
  readonly batchSize?: number
  /** Batches per throughput run (default 60). */
  readonly batches?: number
  /** Events in the parent of the fork-like commits (default 2,000). */
  readonly parentEvents?: number
  /** Events copied into each child (default 500). */
  readonly copiedEvents?: number
  /** Fork-like commits per store (default 40). */
  readonly forks?: number
  /** Repetitions of the throughput run; the median is reported (default 3). */
  readonly runs?: number
}

export type PostgresStoreBenchReport =
  | { readonly suite: "postgres-store"; readonly skipped: string }
  | {
      readonly suite: "postgres-store"
      readonly serverVersion: string
      readonly figures: ReadonlyArray<BenchFigure>
      readonly details: Readonly<Record<string, number>>
    }

const pgUrl = () => process.env.BENCH_PG_URL ?? process.env.REWIND_PG_URL ?? ""

/** Builds a layer for the life of the returned scope and hands back its SessionStore. */
const openStore = async (layer: Layer.Layer<SessionStore, unknown>) => {
  const scope = await Effect.runPromise(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  return {
    store: Context.get(context, SessionStore),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void)),
  }
}

const run = <A>(effect: Effect.Effect<A, unknown>) => Effect.runPromise(effect)

/** The minimum a hand-written PostgreSQL store does per append, on the adapter's own tables. */
const rawAppender = (pool: pg.Pool, schema: string, sessionId: SessionId) => ({
  append: async (sequence: number, rows: ReadonlyArray<ReturnType<typeof encodeRow>>, at: number) => {
    const client = await pool.connect()
    try {
      await client.query("begin")
      await client.query(
        `insert into "${schema}".streams (session_id, version, updated_at) values ($1, $2, $3)
         on conflict (session_id) do update set version = excluded.version, updated_at = excluded.updated_at`,
        [sessionId, sequence + rows.length, at],
      )
      await client.query(
        `insert into "${schema}".events (session_id, sequence, type, version, payload, at)
         select $1, $2::integer + u.ord::integer, u.type, u.version, u.payload, $3
         from unnest($4::text[], $5::integer[], $6::text[]) with ordinality as u(type, version, payload, ord)
         order by u.ord`,
        [
          sessionId,
          sequence,
          at,
          rows.map((r) => r.type),
          rows.map((r) => r.version),
          rows.map((r) => r.payload),
        ],
      )
      await client.query("commit")
    } catch (error) {
      await client.query("rollback").catch(() => undefined)
      throw error
    } finally {
      client.release()
    }
  },
})

const childOf = (
  parent: ReadonlyArray<SessionEvent>,
  child: SessionId,
  parentId: SessionId,
  copied: number,
) => [
  new SessionCreated({
    session: new Session({
      id: child,
      rootTraceId: `trace-${child}` as Session["rootTraceId"],
      kind: "fork",
      parentId,
      title: "Fork of benchmark session",
      cwd: "/work",
      createdAt: 0,
    }),
  }),
  ...parent.slice(1, copied),
]

export const runPostgresStoreBench = async (
  options: PostgresStoreBenchOptions = {},
): Promise<PostgresStoreBenchReport> => {
  const url = pgUrl()
  if (url === "") {
    return {
      suite: "postgres-store",
      skipped:
        "no PostgreSQL server: set BENCH_PG_URL or REWIND_PG_URL (`source .ci/postgres.sh` starts one)",
    }
  }
  const batchSize = options.batchSize ?? 100
  const batches = options.batches ?? 60
  const parentEvents = options.parentEvents ?? 2_000
  const copiedEvents = options.copiedEvents ?? 500
  const forks = options.forks ?? 40
  const runs = options.runs ?? 3

  const schemaBase = `rewind_bench_${process.pid}_${Date.now().toString(36)}`
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rewind-bench-pg-"))
  const admin = new pg.Pool({ connectionString: url, max: 2 })
  admin.on("error", () => {})
  const schemas: Array<string> = []
  const pgStore = async () => {
    const schema = `${schemaBase}_${schemas.length}`
    schemas.push(schema)
    return { schema, ...(await openStore(PostgresSessionStore.layer({ connectionString: url, schema }))) }
  }
  let files = 0
  const sqliteStore = () => openStore(SqliteSessionStore.layer({ path: path.join(dir, `run-${files++}.db`) }))

  try {
    const serverVersion = (await admin.query<{ v: string }>("select current_setting('server_version') as v"))
      .rows[0]!.v
    const session = "bench-session" as SessionId
    const batchEvents = sessionEvents(batchSize * batches, session)

    // Batched appends: PostgreSQL store, SQLite store and raw pg, interleaved batch by batch.
    const batchedRun = async () => {
      const postgres = await pgStore()
      const sqlite = await sqliteStore()
      const rawSide = await pgStore()
      const raw = rawAppender(admin, rawSide.schema, session)
      const time = { postgres: 0, sqlite: 0, raw: 0 }
      try {
        for (let b = 0; b < batches; b++) {
          const from = b * batchSize
          const events = batchEvents.slice(from, from + batchSize)
          for (let turn = 0; turn < 3; turn++) {
            const start = performance.now()
            switch ((b + turn) % 3) {
              case 0:
                await run(postgres.store.append({ sessionId: session, expectedVersion: from, events, at: b }))
                time.postgres += performance.now() - start
                break
              case 1:
                await run(sqlite.store.append({ sessionId: session, expectedVersion: from, events, at: b }))
                time.sqlite += performance.now() - start
                break
              default:
                await raw.append(from, events.map(encodeRow), b)
                time.raw += performance.now() - start
            }
          }
        }
      } finally {
        await Promise.all([postgres.close(), sqlite.close(), rawSide.close()])
      }
      const perSecond = (millis: number) => (batchEvents.length / millis) * 1000
      return { postgres: perSecond(time.postgres), sqlite: perSecond(time.sqlite), raw: perSecond(time.raw) }
    }
    const batched: Array<Awaited<ReturnType<typeof batchedRun>>> = []
    for (let r = 0; r < runs; r++) batched.push(await batchedRun())

    // Fork-like commits: a new child stream, a marker in the parent, and a command fact.
    const parent = "bench-parent" as SessionId
    const parentStream = sessionEvents(parentEvents, parent)
    const postgres = await pgStore()
    const sqlite = await sqliteStore()
    const latencies = { postgres: [] as Array<number>, sqlite: [] as Array<number> }
    try {
      for (const side of [postgres, sqlite]) {
        await run(side.store.append({ sessionId: parent, expectedVersion: 0, events: parentStream, at: 0 }))
      }
      const forkOnce = async (store: SessionStoreService, i: number) => {
        const child = `bench-child-${i}` as SessionId
        const start = performance.now()
        await run(
          store.commit({
            appends: [
              {
                sessionId: child,
                expectedVersion: 0,
                events: childOf(parentStream, child, parent, copiedEvents),
                at: i,
              },
              {
                sessionId: parent,
                expectedVersion: parentEvents + i,
                events: parentStream.slice(parentEvents - 1, parentEvents),
                at: i,
              },
            ],
            facts: [{ sessionId: parent, commandId: `fork-${i}`, result: { child }, at: i }],
          }),
        )
        return performance.now() - start
      }
      for (let i = 0; i < forks; i++) {
        const order = i % 2 === 0 ? (["postgres", "sqlite"] as const) : (["sqlite", "postgres"] as const)
        for (const side of order) {
          latencies[side].push(await forkOnce(side === "postgres" ? postgres.store : sqlite.store, i))
        }
      }
    } finally {
      await Promise.all([postgres.close(), sqlite.close()])
    }

    const throughput = {
      postgres: median(batched.map((b) => b.postgres)),
      sqlite: median(batched.map((b) => b.sqlite)),
      raw: median(batched.map((b) => b.raw)),
    }
    const forkMedian = { postgres: median(latencies.postgres), sqlite: median(latencies.sqlite) }
    const figures: Array<BenchFigure> = [
      {
        name: `batched append, ${batchSize} events per append`,
        unit: "events/s",
        store: throughput.postgres,
        baseline: throughput.sqlite,
        baselineName: "SQLite store, same events",
        ratio: throughput.postgres / throughput.sqlite,
        higherIsBetter: true,
      },
      {
        name: `batched append, ${batchSize} events per append`,
        unit: "events/s",
        store: throughput.postgres,
        baseline: throughput.raw,
        baselineName: "raw pg, same rows and encoding, one transaction per batch",
        ratio: throughput.postgres / throughput.raw,
        higherIsBetter: true,
      },
      {
        name: `fork-like commit (child of ${copiedEvents} events + parent marker + command fact), median`,
        unit: "ms",
        store: forkMedian.postgres,
        baseline: forkMedian.sqlite,
        baselineName: "SQLite store, same commit",
        ratio: forkMedian.postgres / forkMedian.sqlite,
        higherIsBetter: false,
      },
    ]
    return {
      suite: "postgres-store",
      serverVersion,
      figures,
      details: {
        forkP95PostgresMs: percentile(latencies.postgres, 95),
        forkP95SqliteMs: percentile(latencies.sqlite, 95),
        throughputRuns: runs,
        forks,
      },
    }
  } finally {
    for (const schema of schemas)
      await admin.query(`drop schema if exists "${schema}" cascade`).catch(() => undefined)
    await admin.end()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

const number = (value: number) =>
  value >= 100 ? Math.round(value).toLocaleString("en") : value.toFixed(value >= 10 ? 1 : 2)

export const formatPostgresStoreBench = (report: PostgresStoreBenchReport): string => {
  if ("skipped" in report) return `PostgreSQL store benchmark skipped: ${report.skipped}`
  const lines = [`PostgreSQL store (server ${report.serverVersion}) beside SQLite, measured in the same run:`]
  for (const f of report.figures) {
    lines.push(
      `  ${f.name}: ${number(f.store)} ${f.unit} vs ${number(f.baseline)} ${f.unit} (${f.baselineName}): ratio ${f.ratio.toFixed(2)}${f.higherIsBetter ? "" : " (lower is better)"}`,
    )
  }
  lines.push(
    `  fork-like commit p95: PostgreSQL ${number(report.details.forkP95PostgresMs!)} ms, SQLite ${number(report.details.forkP95SqliteMs!)} ms`,
  )
  return lines.join("\n")
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runPostgresStoreBench()
    .then((report) => console.log(formatPostgresStoreBench(report)))
    .catch((error) => {
      console.error(error)
      process.exitCode = 1
    })
}
