/**
 * The PostgreSQL SessionStore and its OperationJournal (in the same database), for many agent
 * workers on many machines sharing one database: layers over a `PostgresDatabase` (or opening one),
 * plus the adapter's own service (`PostgresStore`) for what only this adapter does: rebuild its
 * projections, check that streams and projections agree, say where it is and which schema version
 * it runs.
 */
import type { EventDecodeError, StoreError, StoreIncompatible } from "@rewind/contracts"
import {
  OperationJournal,
  type OperationJournalService,
  SessionStore,
  type SessionStoreService,
} from "@rewind/core"
import {
  makeSqlOperationJournal,
  makeSqlSessionStore,
  type RebuildReport,
  rebuildProjections as rebuild,
} from "@rewind/kysely-store"
import { type Config, Context, Effect, Layer } from "effect"
import { sql } from "kysely"
import { makeJournalBackend } from "./internal/journalBackend.js"
import { toStoreError } from "./internal/pgErrors.js"
import { makeSessionBackend } from "./internal/sessionBackend.js"
import {
  layer as databaseLayer,
  layerConfig as databaseLayerConfig,
  PostgresDatabase,
  type PostgresDatabaseService,
} from "./PostgresDatabase.js"
import type { PostgresStoreOptions } from "./PostgresStoreOptions.js"

export type { RebuildReport } from "@rewind/kysely-store"

export interface IntegrityReport {
  readonly ok: boolean
  /** Streams whose projection disagrees with their events, or whose events have gaps; empty when ok. */
  readonly problems: ReadonlyArray<string>
}

export interface PostgresStoreService {
  readonly sessionStore: SessionStoreService
  /** The durable journal of multi-file restores, in the same database (shared by every worker). */
  readonly operationJournal: OperationJournalService
  /** The URL without its password, and the schema. */
  readonly location: string
  readonly schema: string
  readonly schemaVersion: number
  /** Migrations this open applied, oldest first (empty when the store was already current). */
  readonly migrationsApplied: ReadonlyArray<string>
  readonly serverVersion: string
  /**
   * Recomputes the `streams` and `sessions` projections from the events, in one transaction that
   * holds writers off (`events`, `streams` and `sessions` locked in SHARE ROW EXCLUSIVE mode).
   */
  readonly rebuildProjections: Effect.Effect<RebuildReport, StoreError | EventDecodeError>
  /** Checks every stream: its version equals its last sequence, and its sequences have no gap. */
  readonly integrityCheck: Effect.Effect<IntegrityReport, StoreError>
}

export class PostgresStore extends Context.Tag("@rewind/adapter-postgres/PostgresStore")<
  PostgresStore,
  PostgresStoreService
>() {}

/** The session store over an opened database (the pool stays the database's). */
export const fromDatabase = (database: PostgresDatabaseService): PostgresStoreService => {
  const backend = makeSessionBackend(database)
  return {
    sessionStore: makeSqlSessionStore(backend),
    operationJournal: makeSqlOperationJournal(makeJournalBackend(database)),
    location: database.location,
    schema: database.options.schema,
    schemaVersion: database.schemaVersion,
    migrationsApplied: database.migrationsApplied,
    serverVersion: database.serverVersion,
    rebuildProjections: rebuild(backend, async (trx) => {
      await sql`lock table events, streams, sessions in share row exclusive mode`.execute(trx)
    }),
    integrityCheck: Effect.tryPromise({
      try: async () => {
        const rows = await sql<{
          session_id: string
          version: number | null
          last: number | null
          n: number | null
        }>`
          select coalesce(s.session_id, e.session_id) as session_id, s.version, e.last, e.n
          from streams s
          full join (select session_id, max(sequence) as last, count(*) as n from events group by session_id) e
            on e.session_id = s.session_id
          where s.version is distinct from e.last or e.n is distinct from e.last
          order by 1`.execute(database.kysely)
        const problems = rows.rows.map((r) =>
          r.version === null
            ? `stream ${r.session_id}: events without a streams row`
            : r.last === null
              ? `stream ${r.session_id}: a streams row (version ${r.version}) without events`
              : r.version !== r.last
                ? `stream ${r.session_id}: streams.version ${r.version} but the last event is ${r.last}`
                : `stream ${r.session_id}: ${r.n} events numbered up to ${r.last} (a gap)`,
        )
        return { ok: problems.length === 0, problems }
      },
      catch: (error) => toStoreError("integrityCheck", error, database.location),
    }),
  }
}

/** The session store and the operation journal over the `PostgresDatabase` in context. */
export const layerFromDatabase: Layer.Layer<
  SessionStore | OperationJournal | PostgresStore,
  never,
  PostgresDatabase
> = Layer.mergeAll(
  Layer.effect(
    SessionStore,
    Effect.map(PostgresStore, (store) => store.sessionStore),
  ),
  Layer.effect(
    OperationJournal,
    Effect.map(PostgresStore, (store) => store.operationJournal),
  ),
).pipe(Layer.provideMerge(Layer.effect(PostgresStore, Effect.map(PostgresDatabase, fromDatabase))))

/**
 * A SessionStore and its OperationJournal over a PostgreSQL database (each build of the layer
 * opens its own pool).
 */
export const layer = (
  options: PostgresStoreOptions,
): Layer.Layer<
  SessionStore | OperationJournal | PostgresStore | PostgresDatabase,
  StoreIncompatible | StoreError
> => layerFromDatabase.pipe(Layer.provideMerge(databaseLayer(options)))

/** Like `layer`, reading its options from `Config` (by default the `REWIND_PG_*` variables). */
export const layerConfig = (
  config?: Config.Config<PostgresStoreOptions>,
): Layer.Layer<
  SessionStore | OperationJournal | PostgresStore | PostgresDatabase,
  StoreIncompatible | StoreError
> => layerFromDatabase.pipe(Layer.provideMerge(databaseLayerConfig(config)))

/** Rebuilds the projections of the store in context from its events. */
export const rebuildProjections: Effect.Effect<RebuildReport, StoreError | EventDecodeError, PostgresStore> =
  Effect.flatMap(PostgresStore, (store) => store.rebuildProjections)

/** Checks streams against their events on the store in context. */
export const integrityCheck: Effect.Effect<IntegrityReport, StoreError, PostgresStore> = Effect.flatMap(
  PostgresStore,
  (store) => store.integrityCheck,
)
