/**
 * The PostgreSQL SessionStore beside the SQLite one, measured in the same rounds on the same events:
 * - batched appends (100 events per append, one transaction each): the PostgreSQL store against
 *   the SQLite store (a file), with raw `pg` writing the same rows into the same PostgreSQL schema
 *   (the version bump and one `INSERT … SELECT FROM unnest(…)` per batch) as the limit, so the
 *   adapter's own cost shows apart from the server's;
 * - fork-like commits: one multi-stream commit of a new child stream (a copied prefix of the
 *   parent), a marker event in the parent at its expected version, and a command fact in the parent,
 *   on the PostgreSQL store against the SQLite store: the store's share of a fork;
 * - fork latency: core's `forkAtMessage` (load the parent, build the child, one commit) of the fork
 *   benchmark's parent session, on the PostgreSQL store against the SQLite store.
 * The append series reports events per second beside the time per append.
 *
 * It needs a server: `REWIND_PG_URL`; `source .ci/postgres.sh` starts a
 * throwaway one. The registry lists the case only when one is configured. Each store works in a
 * schema of its own, dropped when the case ends.
 */
import { join } from "node:path"
import { PostgresSessionStore } from "@rewind/adapter-postgres"
import { SqliteSessionStore } from "@rewind/adapter-sqlite"
import {
  type CommandId,
  Session,
  SessionCreated,
  type SessionEvent,
  type SessionId,
  type TraceId,
} from "@rewind/contracts"
import { forkAtMessage, IdGenerators, SessionStore, type SessionStoreService } from "@rewind/core"
import { Effect, Layer, ManagedRuntime } from "effect"
import pg from "pg"
import { parentEvents } from "./fork.bench.js"
import type { BenchCase, BenchContext, InProcessSampler } from "./harness/types.js"
import { chunks, encodeRow, type Row, sessionEvents } from "./sqliteStore.bench.js"

/** The server the case runs against ("" when none is configured). */
export const benchPostgresUrl = (): string => process.env.REWIND_PG_URL ?? ""

/**
 * Per mode: events per batched append, prepared batches, parent length and events copied per
 * fork-like commit, and messages of the session `forkAtMessage` forks.
 */
const SHAPE = {
  full: { batchSize: 100, batches: 60, parentEvents: 2_000, copiedEvents: 500, forkMessages: 2_000 },
  quick: { batchSize: 100, batches: 5, parentEvents: 200, copiedEvents: 50, forkMessages: 100 },
} as const

const SESSION = "bench-session" as SessionId
const PARENT = "bench-parent" as SessionId

interface Target {
  readonly run: (iteration: number) => Promise<void>
  readonly close: () => Promise<void>
}

/**
 * An in-process sampler whose iterations each call `run` on a target; `fresh` (untimed, in
 * `beforeEach`) opens a new target when the current one has had `iterations` calls.
 */
const targetSampler = (
  label: string,
  iterations: number,
  open: () => Promise<Target>,
): InProcessSampler & { readonly close: () => Promise<void> } => {
  let target: Target | undefined
  let next = 0
  return {
    kind: "in-process",
    label,
    beforeEach: async () => {
      if (target !== undefined && next < iterations) return
      await target?.close()
      target = await open()
      next = 0
    },
    fn: () => target!.run(next++),
    close: async () => {
      await target?.close()
      target = undefined
    },
  }
}

const storeOf = async (layer: Layer.Layer<SessionStore, unknown>) => {
  const runtime = ManagedRuntime.make(layer)
  const store: SessionStoreService = await runtime.runPromise(SessionStore)
  return { store, dispose: () => runtime.dispose() }
}

/** Opens stores on fresh PostgreSQL schemas and SQLite files, and removes them all at the end. */
const storeFactory = (ctx: BenchContext, url: string) => {
  const admin = new pg.Pool({ connectionString: url, max: 2 })
  admin.on("error", () => {})
  const dir = ctx.tempDir("postgres-store")
  const schemas: Array<string> = []
  const base = `rewind_bench_${process.pid}_${Date.now().toString(36)}`
  let files = 0
  const freshSchema = () => {
    const schema = `${base}_${schemas.length}`
    schemas.push(schema)
    return schema
  }
  const dropSchema = (schema: string) => admin.query(`drop schema if exists "${schema}" cascade`)
  return {
    url,
    admin,
    freshSchema,
    dropSchema,
    /** Layers for whole programs (the schema or file stays until `close`). */
    postgresLayer: () =>
      PostgresSessionStore.layer({ connectionString: url, schema: freshSchema(), poolSize: 2 }),
    sqliteLayer: () => SqliteSessionStore.layer({ path: join(dir, `store-${files++}.db`) }),
    postgres: async () => {
      const schema = freshSchema()
      const opened = await storeOf(PostgresSessionStore.layer({ connectionString: url, schema, poolSize: 2 }))
      return {
        ...opened,
        schema,
        dispose: async () => {
          await opened.dispose()
          await dropSchema(schema)
        },
      }
    },
    sqlite: () => storeOf(SqliteSessionStore.layer({ path: join(dir, `store-${files++}.db`) })),
    close: async () => {
      for (const schema of schemas) await dropSchema(schema).catch(() => undefined)
      await admin.end()
    },
  }
}

type Stores = ReturnType<typeof storeFactory>

const appendTarget =
  (
    open: () => Promise<{ store: SessionStoreService; dispose: () => Promise<void> }>,
    batches: ReadonlyArray<ReadonlyArray<SessionEvent>>,
  ) =>
  async (): Promise<Target> => {
    const { store, dispose } = await open()
    let version = 0
    return {
      run: async (b) => {
        const events = batches[b]!
        await Effect.runPromise(store.append({ sessionId: SESSION, expectedVersion: version, events, at: b }))
        version += events.length
      },
      close: dispose,
    }
  }

/** The minimum a hand-written PostgreSQL store does per append, on the adapter's own tables. */
const rawTarget = (stores: Stores, rows: ReadonlyArray<ReadonlyArray<Row>>) => async (): Promise<Target> => {
  // The adapter creates the schema and its tables; raw pg then writes into them.
  const schema = stores.freshSchema()
  const made = await storeOf(
    PostgresSessionStore.layer({ connectionString: stores.url, schema, poolSize: 1 }),
  )
  await made.dispose()
  let version = 0
  return {
    run: async (b) => {
      const batch = rows[b]!
      const client = await stores.admin.connect()
      try {
        await client.query("begin")
        await client.query(
          `insert into "${schema}".streams (session_id, version, updated_at) values ($1, $2, $3)
           on conflict (session_id) do update set version = excluded.version, updated_at = excluded.updated_at`,
          [SESSION, version + batch.length, b],
        )
        await client.query(
          `insert into "${schema}".events (session_id, sequence, type, version, payload, at)
           select $1, $2::integer + u.ord::integer, u.type, u.version, u.payload, $3
           from unnest($4::text[], $5::integer[], $6::text[]) with ordinality as u(type, version, payload, ord)
           order by u.ord`,
          [
            SESSION,
            version,
            b,
            batch.map((r) => r.type),
            batch.map((r) => r.version),
            batch.map((r) => r.payload),
          ],
        )
        await client.query("commit")
      } catch (error) {
        await client.query("rollback").catch(() => undefined)
        throw error
      } finally {
        client.release()
      }
      version += batch.length
    },
    close: () => stores.dropSchema(schema).then(() => undefined),
  }
}

const measureAppends = async (ctx: BenchContext, stores: Stores) => {
  const shape = SHAPE[ctx.mode]
  const batchEvents = chunks(sessionEvents(shape.batchSize * shape.batches), shape.batchSize)
  const batchRows = batchEvents.map((events) => events.map(encodeRow))
  const samplers = [
    targetSampler(
      `PostgresSessionStore.append (${shape.batchSize} events)`,
      batchEvents.length,
      appendTarget(stores.postgres, batchEvents),
    ),
    targetSampler(
      `SqliteSessionStore.append (${shape.batchSize} events)`,
      batchEvents.length,
      appendTarget(stores.sqlite, batchEvents),
    ),
    targetSampler(
      "raw pg, rows encoded beforehand, same schema, one transaction",
      batchEvents.length,
      rawTarget(stores, batchRows),
    ),
  ] as const
  try {
    await ctx.compare({
      series: `PostgreSQL store: batched append (${shape.batchSize} events per append)`,
      subject: samplers[0],
      baseline: samplers[1],
      limit: samplers[2],
      items: { count: shape.batchSize, unit: "events" },
      notes: [
        "time per append of one batch in its own transaction; ratio = PostgreSQL store / SQLite store",
        "limit: raw pg writing the same rows, encoded beforehand, into the same PostgreSQL tables (the server alone)",
      ],
    })
  } finally {
    for (const s of samplers) await s.close()
  }
}

const childEvents = (parent: ReadonlyArray<SessionEvent>, child: SessionId, copied: number) => [
  new SessionCreated({
    session: new Session({
      id: child,
      rootTraceId: `trace-${child}` as TraceId,
      kind: "fork",
      parentId: PARENT,
      title: "Fork of benchmark session",
      cwd: "/work",
      createdAt: 0,
    }),
  }),
  ...parent.slice(1, copied),
]

/** A store holding the parent; each iteration commits one fork-like bundle against it. */
const forkTarget =
  (
    open: () => Promise<{ store: SessionStoreService; dispose: () => Promise<void> }>,
    parent: ReadonlyArray<SessionEvent>,
    copied: number,
  ) =>
  async (): Promise<Target> => {
    const { store, dispose } = await open()
    await Effect.runPromise(store.append({ sessionId: PARENT, expectedVersion: 0, events: parent, at: 0 }))
    let version = parent.length
    return {
      run: async (i) => {
        const child = `bench-child-${i}` as SessionId
        await Effect.runPromise(
          store.commit({
            appends: [
              { sessionId: child, expectedVersion: 0, events: childEvents(parent, child, copied), at: i },
              { sessionId: PARENT, expectedVersion: version, events: parent.slice(-1), at: i },
            ],
            facts: [{ sessionId: PARENT, commandId: `fork-${i}`, result: { child }, at: i }],
          }),
        )
        version += 1
      },
      close: dispose,
    }
  }

const measureForks = async (ctx: BenchContext, stores: Stores) => {
  const shape = SHAPE[ctx.mode]
  const parent = sessionEvents(shape.parentEvents, PARENT)
  // A target serves this many forks before a fresh one (its parent stream grows by one per fork).
  const perTarget = 200
  const samplers = [
    targetSampler(
      "PostgresSessionStore.commit",
      perTarget,
      forkTarget(stores.postgres, parent, shape.copiedEvents),
    ),
    targetSampler(
      "SqliteSessionStore.commit",
      perTarget,
      forkTarget(stores.sqlite, parent, shape.copiedEvents),
    ),
  ] as const
  try {
    await ctx.compare({
      series: `PostgreSQL store: fork-like commit (new child of ${shape.copiedEvents} events + parent marker + command fact)`,
      subject: samplers[0],
      baseline: samplers[1],
      notes: ["one multi-stream commit with a command fact; ratio = PostgreSQL store / SQLite store"],
    })
  } finally {
    for (const s of samplers) await s.close()
  }
}

/** A runtime over a store holding the fork benchmark's parent session; `fork` runs one forkAtMessage. */
const forkRuntime = async (layer: Layer.Layer<SessionStore, unknown>, messages: number) => {
  const runtime = ManagedRuntime.make(Layer.merge(layer, IdGenerators.layerRandom))
  const parentId = "ses_bench_parent" as SessionId
  const parent = parentEvents(parentId, messages)
  await runtime.runPromise(
    Effect.gen(function* () {
      const store = yield* SessionStore
      for (let i = 0; i < parent.events.length; i += 1_000) {
        yield* store.append({
          sessionId: parentId,
          expectedVersion: i,
          events: parent.events.slice(i, i + 1_000),
          at: 0,
        })
      }
    }),
  )
  let n = 0
  const fork = async () => {
    const child = await runtime.runPromise(
      forkAtMessage({
        sessionId: parentId,
        messageId: parent.lastBoundary,
        commandId: `bench-${n++}` as CommandId,
      }),
    )
    if (child.copiedMessageCount !== messages) {
      throw new Error(`the fork copied ${child.copiedMessageCount} messages, expected ${messages}`)
    }
  }
  return { fork, dispose: () => runtime.dispose() }
}

const measureProgramForks = async (ctx: BenchContext, stores: Stores) => {
  const messages = SHAPE[ctx.mode].forkMessages
  const postgres = await forkRuntime(stores.postgresLayer(), messages)
  const sqlite = await forkRuntime(stores.sqliteLayer(), messages)
  try {
    await ctx.compare({
      series: `PostgreSQL store: forkAtMessage of a ${messages}-message session`,
      subject: { kind: "in-process", label: "forkAtMessage on PostgreSQL", fn: postgres.fork },
      baseline: { kind: "in-process", label: "forkAtMessage on SQLite", fn: sqlite.fork },
      notes: [
        "core's fork program end to end: load the parent, build the child, commit it; ratio = PostgreSQL / SQLite",
      ],
    })
  } finally {
    await postgres.dispose()
    await sqlite.dispose()
  }
}

export const postgresStore: BenchCase = {
  name: "postgres-store",
  group: "store",
  description:
    "PostgresSessionStore batched appends (events/s), fork-like multi-stream commits and forkAtMessage latency beside the SQLite store (and raw pg), on a configured PostgreSQL server",
  run: async (ctx) => {
    const url = benchPostgresUrl()
    if (url === "") throw new Error("no PostgreSQL server: set REWIND_PG_URL")
    const stores = storeFactory(ctx, url)
    try {
      await measureAppends(ctx, stores)
      await measureForks(ctx, stores)
      await measureProgramForks(ctx, stores)
    } finally {
      await stores.close()
    }
  },
}
