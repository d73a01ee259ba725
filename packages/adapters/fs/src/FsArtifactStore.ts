/**
 * A content-addressed blob store on disk: `objects/ab/cdef…` (the SHA-256 split after two hex
 * digits, so no directory grows past a few thousand entries). A put writes a temp file under
 * `tmp/`, syncs it, renames it into place and syncs the shard directory; two writers of the same
 * content (fibers or processes) each rename an identical complete file, so either wins safely. An
 * existing blob is re-verified by a put, so a damaged copy is repaired rather than kept; every get
 * re-hashes the bytes and reports a mismatch as `ArtifactCorrupt`.
 *
 * A blob's `storedAt` is its file's modification time, set from the store's clock (Effect's
 * `Clock`, the machine's clock in production) by every put, also of content already stored. A
 * sweep takes each candidate out of `objects/` by renaming it into `tmp/sweep-<hash>-<uuid>` (one
 * atomic step: no put can touch it there), then reads its age: an old one is unlinked, a young one
 * (a put refreshed it just before) is linked back unless a put has meanwhile stored it anew. A put
 * that finds its blob taken stores it again. While a blob is set aside, `get` and `has` read it
 * there; a sweep that crashed with blobs set aside is undone when the store is next opened. The
 * layout and the steps on its files are `internal/blobFiles.ts`.
 */
import { lstatSync, mkdirSync, readdirSync, unlinkSync } from "node:fs"
import { join } from "node:path"
import { ArtifactCorrupt, ArtifactNotFound, ArtifactStoreError } from "@rewind/contracts"
import {
  ArtifactStore,
  type ArtifactStoreService,
  getEach,
  hashContent,
  type SweptBlob,
  sweepCutoff,
} from "@rewind/core"
import { Clock, Effect, Layer, Stream } from "effect"
import { attempt, makeBlobFiles, readIfPresent, refresh, SHARD } from "./internal/blobFiles.js"
import { type Durability, isErrno, syncDirectory, writeAtomic } from "./internal/durable.js"

export interface FsArtifactStoreOptions {
  /** The store's directory; created if missing. */
  readonly directory: string
  /** `fsync` (default) flushes each blob and its directory; see `Durability`. */
  readonly durability?: Durability
}

export const make = (
  options: FsArtifactStoreOptions,
): Effect.Effect<ArtifactStoreService, ArtifactStoreError> =>
  Effect.gen(function* () {
    const durability = options.durability ?? "fsync"
    yield* attempt("open", () => {
      mkdirSync(join(options.directory, "objects"), { recursive: true })
      mkdirSync(join(options.directory, "tmp"), { recursive: true })
    })

    const files = makeBlobFiles(options.directory)
    const { temp, locate, setAside, readBlob, ensureShard, listShard } = files
    // A sweep that died with blobs set aside: put them back.
    yield* attempt("open", files.restoreSetAside)

    const service: ArtifactStoreService = {
      // Each blob is its own file: a batch gains only by overlapping the flushes, which run in the
      // thread pool (the opens, writes and renames are synchronous anyway).
      putMany: (contents) => Effect.forEach(contents, (c) => service.put(c), { concurrency: 8 }),
      getMany: (hashes) => getEach(service.get)(hashes),
      put: (content) =>
        Effect.gen(function* () {
          const hash = hashContent(content)
          const { shard, file } = yield* locate(hash, "put")
          const now = yield* Clock.currentTimeMillis
          const existing = yield* readIfPresent(file, "put")
          if (existing !== undefined && hashContent(existing) === hash && (yield* refresh(file, now))) {
            return hash
          }
          const write = Effect.zipRight(
            ensureShard(shard),
            Effect.mapError(
              writeAtomic(file, content, { mode: 0o444, tempDirectory: temp, durability, mtimeMs: now }),
              (failure) =>
                new ArtifactStoreError({ operation: "put", message: failure.message, cause: failure }),
            ),
          )
          // If the shard directory was removed behind our back, make it again and retry once.
          yield* write.pipe(
            Effect.catchIf(
              (e) => (e.cause as { code?: string } | undefined)?.code === "ENOENT",
              () =>
                Effect.zipRight(
                  Effect.sync(() => files.forgetShard(shard)),
                  write,
                ),
            ),
          )
          return hash
        }),

      get: (hash) =>
        Effect.gen(function* () {
          const { file } = yield* locate(hash, "get")
          const bytes = yield* readBlob(hash, file, "get")
          if (bytes === undefined) return yield* new ArtifactNotFound({ hash })
          const actual = hashContent(bytes)
          if (actual !== hash) return yield* new ArtifactCorrupt({ hash, actualHash: actual })
          return bytes
        }),

      has: (hash) =>
        Effect.flatMap(locate(hash, "has"), ({ file }) =>
          attempt("has", () => {
            try {
              return lstatSync(file).isFile()
            } catch (e) {
              if (isErrno(e, "ENOENT")) return setAside(hash) !== undefined
              throw e
            }
          }),
        ),

      delete: (hash) =>
        Effect.gen(function* () {
          const { shard, file } = yield* locate(hash, "delete")
          const removed = yield* attempt("delete", () => {
            try {
              unlinkSync(file)
              return true
            } catch (e) {
              if (isErrno(e, "ENOENT")) return false
              throw e
            }
          })
          if (removed && durability === "fsync") {
            yield* Effect.mapError(
              syncDirectory(shard),
              (failure) => new ArtifactStoreError({ operation: "delete", message: failure.message }),
            )
          }
          return removed
        }),

      list: () =>
        Stream.fromIterableEffect(
          attempt("list", () =>
            readdirSync(files.objects)
              .filter((name) => SHARD.test(name))
              .sort(),
          ),
        ).pipe(Stream.mapEffect(listShard), Stream.flattenIterables),

      stats: () =>
        Stream.runFold(service.list(), { count: 0, bytes: 0 }, (acc, info) => ({
          count: acc.count + 1,
          bytes: acc.bytes + info.size,
        })),

      now: () => Clock.currentTimeMillis,

      sweep: (request) =>
        Effect.gen(function* () {
          const cutoff = yield* sweepCutoff(request)
          const deleted: Array<SweptBlob> = []
          const touched = new Set<string>()
          for (const hash of new Set(request.candidates)) {
            const { shard, file } = yield* locate(hash, "sweep")
            const gone = yield* files.sweepOne(hash, shard, file, cutoff, touched)
            if (gone !== undefined) deleted.push(gone)
          }
          if (durability === "fsync" && touched.size > 0) {
            for (const directory of [...touched, temp]) {
              yield* Effect.mapError(
                syncDirectory(directory),
                (failure) => new ArtifactStoreError({ operation: "sweep", message: failure.message }),
              )
            }
          }
          return deleted
        }),
    }
    return service
  })

export const layer = (options: FsArtifactStoreOptions): Layer.Layer<ArtifactStore, ArtifactStoreError> =>
  Layer.effect(ArtifactStore, make(options))
