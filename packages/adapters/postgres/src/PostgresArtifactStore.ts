/**
 * A content-addressed ArtifactStore in PostgreSQL (`bytea` rows keyed by SHA-256), so that agent
 * workers on different machines share checkpoint content through the database they already share.
 * Every get re-hashes the bytes (`ArtifactCorrupt` on a mismatch); a put of the real content
 * repairs a damaged row.
 *
 * GC safety with concurrent writers. Each row carries `stored_at`, the database server's clock
 * (one clock for every worker, however their own clocks drift) at the last put of that content:
 * a put of content already stored refreshes it. The port's `now` is that clock, and its `sweep`
 * (what core's `cleanup` uses) deletes a candidate only if `stored_at` is before the mark time minus
 * the grace window, checked in the DELETE itself, under the row's lock. This adapter's own `sweep`
 * (a whole-store sweep with a liveness predicate) does the same with the sweep's start as the mark
 * time. So:
 * - a put that refreshes a row before the sweep's DELETE reaches it makes the row young: kept;
 * - a put that comes after the DELETE finds no row and inserts the content again;
 * either way, once `put` has returned the blob is there, and stays for at least the grace window.
 * The rule for callers: the grace window must be longer than the longest time between putting a
 * blob and committing the event that makes it reachable (a checkpoint, a point), so a sweep that
 * marked its live set before that commit cannot take the blob.
 */
import {
  ArtifactCorrupt,
  ArtifactNotFound,
  ArtifactStoreError,
  type ContentHash,
  type StoreError,
  type StoreIncompatible,
} from "@rewind/contracts"
import {
  type ArtifactInfo,
  ArtifactStore,
  type ArtifactStoreService,
  hashContent,
  requireContentHash,
  sweepCutoff,
} from "@rewind/core"
import { Chunk, Context, Effect, Layer, Option, Stream } from "effect"
import { sql } from "kysely"
import { type ArtifactSql, deleteOlderThan, PAGE, sweepStore } from "./internal/artifactDeletes.js"
import { layer as databaseLayer, PostgresDatabase, type PostgresDatabaseService } from "./PostgresDatabase.js"
import type { PostgresStoreOptions } from "./PostgresStoreOptions.js"

/** The server's clock in milliseconds: the clock of `stored_at`. */
const serverNow = sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`

export interface SweepOptions {
  /** True for every blob reachable from a live point, checkpoint, rescue point or redo entry. */
  readonly isLive: (hash: ContentHash) => boolean
  /** Blobs put within this many milliseconds before the sweep started (server clock) are kept. */
  readonly graceMillis: number
  /** Blobs deleted per statement (default 500). */
  readonly batchSize?: number
}

export interface SweepReport {
  /** When the sweep started, on the server's clock; blobs stored before `cutoff` were candidates. */
  readonly startedAt: number
  readonly cutoff: number
  /** Blobs older than the cutoff that the sweep looked at. */
  readonly examined: number
  /** Of those, kept because they are reachable. */
  readonly keptLive: number
  /** Of those, unreachable but not deleted: a put refreshed them while the sweep ran (or another sweep took them). */
  readonly keptRefreshed: number
  readonly deleted: number
  readonly bytesDeleted: number
}

export interface PostgresArtifactsService {
  readonly artifactStore: ArtifactStoreService
  /** Deletes unreachable blobs older than the grace window (see the module comment for the rule). */
  readonly sweep: (options: SweepOptions) => Effect.Effect<SweepReport, ArtifactStoreError>
  /** The server's clock now (ms), the clock `storedAt` is on. */
  readonly serverTime: Effect.Effect<number, ArtifactStoreError>
}

export class PostgresArtifacts extends Context.Tag("@rewind/adapter-postgres/PostgresArtifacts")<
  PostgresArtifacts,
  PostgresArtifactsService
>() {}

const asBytes = (b: Uint8Array): Uint8Array => new Uint8Array(b.buffer, b.byteOffset, b.byteLength)
const asBuffer = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength)

export const fromDatabase = (database: PostgresDatabaseService): PostgresArtifactsService => {
  const db = database.kysely

  const attempt = <A>(operation: string, run: () => Promise<A>) =>
    Effect.tryPromise({
      try: run,
      catch: (cause) =>
        new ArtifactStoreError({
          operation,
          message: `${operation} failed at ${database.location}: ${cause instanceof Error ? cause.message : String(cause)}`,
          cause,
        }),
    })

  // A malformed address never reaches the database.
  const checked = requireContentHash

  const serverTime = attempt("serverTime", async () => {
    const { rows } = await sql<{ now: number }>`select ${serverNow} as now`.execute(db)
    return rows[0]!.now
  })
  const at: ArtifactSql = { db, attempt, serverTime }

  const artifactStore: ArtifactStoreService = {
    // One statement per blob (the pool runs a few at once); a batch has no transaction to share.
    putMany: (contents) => Effect.forEach(contents, (c) => artifactStore.put(c), { concurrency: 4 }),
    getMany: (hashes) => Effect.forEach(hashes, (h) => artifactStore.get(h), { concurrency: 4 }),
    put: (content) =>
      Effect.gen(function* () {
        const hash = hashContent(content)
        // Common case first: the content is already stored. Refresh its age and check it in one
        // statement, without sending the bytes again.
        const touched = yield* attempt("put", () =>
          sql<{ intact: boolean }>`
            update artifacts set stored_at = greatest(stored_at, ${serverNow})
            where hash = ${hash}
            returning sha256(content) = decode(hash, 'hex') as intact`.execute(db),
        )
        if (touched.rows[0]?.intact === true) return hash
        // Absent, or damaged: write the bytes. A writer that inserted the same content meanwhile
        // wrote the same bytes, so overwriting its row changes nothing but the age.
        const bytes = Uint8Array.from(content)
        yield* attempt("put", () =>
          sql`
            insert into artifacts (hash, content, size, stored_at)
            values (${hash}, ${asBuffer(bytes)}, ${bytes.byteLength}, ${serverNow})
            on conflict (hash) do update set
              content = excluded.content,
              size = excluded.size,
              stored_at = greatest(artifacts.stored_at, excluded.stored_at)`.execute(db),
        )
        return hash
      }),

    get: (hash) =>
      Effect.gen(function* () {
        yield* checked(hash, "get")
        const row = yield* attempt("get", () =>
          db.selectFrom("artifacts").select("content").where("hash", "=", hash).executeTakeFirst(),
        )
        if (row === undefined) return yield* new ArtifactNotFound({ hash })
        const bytes = asBytes(row.content)
        const actual = hashContent(bytes)
        if (actual !== hash) return yield* new ArtifactCorrupt({ hash, actualHash: actual })
        return bytes
      }),

    has: (hash) =>
      Effect.flatMap(checked(hash, "has"), () =>
        attempt(
          "has",
          async () =>
            (await db.selectFrom("artifacts").select("hash").where("hash", "=", hash).executeTakeFirst()) !==
            undefined,
        ),
      ),

    delete: (hash) =>
      Effect.flatMap(checked(hash, "delete"), () =>
        attempt(
          "delete",
          async () =>
            (await db.deleteFrom("artifacts").where("hash", "=", hash).executeTakeFirst()).numDeletedRows >
            0n,
        ),
      ),

    // Pages in hash order (keyset, not OFFSET), so a long listing never holds a transaction open.
    list: () =>
      Stream.paginateChunkEffect("", (after) =>
        attempt("list", () =>
          db
            .selectFrom("artifacts")
            .select(["hash", "size", "stored_at"])
            .where("hash", ">", after)
            .orderBy("hash")
            .limit(PAGE)
            .execute(),
        ).pipe(
          Effect.map((rows) => {
            const infos: Array<ArtifactInfo> = rows.map((r) => ({
              hash: r.hash as ContentHash,
              size: r.size,
              storedAt: r.stored_at,
            }))
            const next = rows.length < PAGE ? Option.none<string>() : Option.some(rows[rows.length - 1]!.hash)
            return [Chunk.fromIterable(infos), next] as const
          }),
        ),
      ),

    stats: () =>
      attempt("stats", async () => {
        const row = await db
          .selectFrom("artifacts")
          .select((eb) => [
            eb.fn.countAll<number>().as("count"),
            eb.fn.coalesce(eb.fn.sum<number>("size"), eb.lit(0)).as("bytes"),
          ])
          .executeTakeFirstOrThrow()
        return { count: Number(row.count), bytes: Number(row.bytes) }
      }),

    now: () => serverTime,

    sweep: (request) =>
      Effect.gen(function* () {
        const cutoff = yield* sweepCutoff(request)
        const candidates = [...new Set(request.candidates)]
        for (const hash of candidates) yield* checked(hash, "sweep")
        return yield* deleteOlderThan(at, candidates, cutoff)
      }),
  }

  const sweep = (options: SweepOptions): Effect.Effect<SweepReport, ArtifactStoreError> =>
    sweepStore(at, options)

  return { artifactStore, sweep, serverTime }
}

/** The artifact store over the `PostgresDatabase` in context. */
export const layerFromDatabase: Layer.Layer<ArtifactStore | PostgresArtifacts, never, PostgresDatabase> =
  Layer.effect(
    ArtifactStore,
    Effect.map(PostgresArtifacts, (artifacts) => artifacts.artifactStore),
  ).pipe(Layer.provideMerge(Layer.effect(PostgresArtifacts, Effect.map(PostgresDatabase, fromDatabase))))

/** An artifact store over a PostgreSQL database (each build of the layer opens its own pool). */
export const layer = (
  options: PostgresStoreOptions,
): Layer.Layer<ArtifactStore | PostgresArtifacts | PostgresDatabase, StoreIncompatible | StoreError> =>
  layerFromDatabase.pipe(Layer.provideMerge(databaseLayer(options)))

/** Deletes unreachable blobs older than the grace window from the store in context. */
export const sweep = (
  options: SweepOptions,
): Effect.Effect<SweepReport, ArtifactStoreError, PostgresArtifacts> =>
  Effect.flatMap(PostgresArtifacts, (artifacts) => artifacts.sweep(options))
