/**
 * The deletes of the PostgreSQL artifact store: `deleteOlderThan` (what the port's `sweep` and the
 * whole-store sweep both end in) and the whole-store sweep itself. A row is deleted only if its
 * `stored_at` is before the cutoff when the DELETE locks it, so a put that refreshed it meanwhile
 * keeps it (the GC rule of `PostgresArtifactStore.ts`).
 */
import { ArtifactStoreError, type ContentHash } from "@rewind/contracts"
import type { SweptBlob } from "@rewind/core"
import { Effect } from "effect"
import type { SweepOptions, SweepReport } from "../PostgresArtifactStore.js"
import type { PostgresDatabaseService } from "../PostgresDatabase.js"

/** Rows per page of a listing or a sweep (keyset pages, so no transaction is held open). */
export const PAGE = 1_000

/** What the store's statements run over: the database, its error mapping and the server's clock. */
export interface ArtifactSql {
  readonly db: PostgresDatabaseService["kysely"]
  readonly attempt: <A>(operation: string, run: () => Promise<A>) => Effect.Effect<A, ArtifactStoreError>
  readonly serverTime: Effect.Effect<number, ArtifactStoreError>
}

const DELETE_BATCH = 500

/** Deletes those of `hashes` stored before `cutoff`; the age is checked on each row as the DELETE locks it. */
export const deleteOlderThan = (
  { db, attempt }: ArtifactSql,
  hashes: ReadonlyArray<string>,
  cutoff: number,
  batchSize = DELETE_BATCH,
) =>
  Effect.gen(function* () {
    const deleted: Array<SweptBlob> = []
    for (let start = 0; start < hashes.length; start += batchSize) {
      const batch = hashes.slice(start, start + batchSize)
      const gone = yield* attempt("sweep", () =>
        db
          .deleteFrom("artifacts")
          .where("hash", "in", batch)
          .where("stored_at", "<", cutoff)
          .returning(["hash", "size"])
          .execute(),
      )
      for (const row of gone) deleted.push({ hash: row.hash as ContentHash, size: row.size })
    }
    return deleted
  })

/**
 * The whole-store sweep (`PostgresArtifacts.sweep`): pages of blobs older than the grace window, in
 * hash order, the unreachable ones deleted with their age checked again in the DELETE.
 */
export const sweepStore = (
  at: ArtifactSql,
  options: SweepOptions,
): Effect.Effect<SweepReport, ArtifactStoreError> =>
  Effect.gen(function* () {
    if (!Number.isSafeInteger(options.graceMillis) || options.graceMillis < 0) {
      return yield* new ArtifactStoreError({
        operation: "sweep",
        message: `the grace window must be a non-negative integer of milliseconds, got ${options.graceMillis}`,
      })
    }
    const batchSize = Math.max(1, options.batchSize ?? 500)
    const startedAt = yield* at.serverTime
    const cutoff = startedAt - options.graceMillis
    let examined = 0
    let keptLive = 0
    let deleted = 0
    let bytesDeleted = 0
    let after = ""
    for (;;) {
      const page = yield* at.attempt("sweep", () =>
        at.db
          .selectFrom("artifacts")
          .select("hash")
          .where("stored_at", "<", cutoff)
          .where("hash", ">", after)
          .orderBy("hash")
          .limit(PAGE)
          .execute(),
      )
      if (page.length === 0) break
      after = page[page.length - 1]!.hash
      examined += page.length
      const dead = page.map((r) => r.hash as ContentHash).filter((hash) => !options.isLive(hash))
      keptLive += page.length - dead.length
      // The age is checked again in the DELETE, on the row as it is when the DELETE locks it.
      const gone = yield* deleteOlderThan(at, dead, cutoff, batchSize)
      deleted += gone.length
      for (const row of gone) bytesDeleted += row.size
      if (page.length < PAGE) break
    }
    return {
      startedAt,
      cutoff,
      examined,
      keptLive,
      keptRefreshed: examined - keptLive - deleted,
      deleted,
      bytesDeleted,
    }
  })
