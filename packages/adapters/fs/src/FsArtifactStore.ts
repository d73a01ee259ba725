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
 * there; a sweep that crashed with blobs set aside is undone when the store is next opened.
 */
import { randomUUID } from "node:crypto"
import {
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  unlinkSync,
  utimesSync,
} from "node:fs"
import { join } from "node:path"
import { ArtifactCorrupt, ArtifactNotFound, ArtifactStoreError, type ContentHash } from "@rewind/contracts"
import {
  type ArtifactInfo,
  ArtifactStore,
  type ArtifactStoreService,
  getEach,
  hashContent,
  requireContentHash,
  type SweptBlob,
  sweepCutoff,
} from "@rewind/core"
import { Clock, Effect, Layer, Stream } from "effect"
import { type Durability, errnoOf, isErrno, syncDirectory, writeAtomic } from "./internal/durable.js"

const SHARD = /^[0-9a-f]{2}$/
const REST = /^[0-9a-f]{62}$/
const SET_ASIDE = /^sweep-([0-9a-f]{64})-[0-9a-f-]+$/

// Times are set in milliseconds but stored in nanoseconds through a float of seconds: round back.
const storedAtOf = (mtimeMs: number) => Math.round(mtimeMs)

export interface FsArtifactStoreOptions {
  /** The store's directory; created if missing. */
  readonly directory: string
  /** `fsync` (default) flushes each blob and its directory; see `Durability`. */
  readonly durability?: Durability
}

const attempt = <A>(operation: string, run: () => A) =>
  Effect.try({
    try: run,
    catch: (cause) => new ArtifactStoreError({ operation, message: errnoOf(cause).message, cause }),
  })

const asBytes = (b: Buffer): Uint8Array => new Uint8Array(b.buffer, b.byteOffset, b.byteLength)

export const make = (
  options: FsArtifactStoreOptions,
): Effect.Effect<ArtifactStoreService, ArtifactStoreError> =>
  Effect.gen(function* () {
    const durability = options.durability ?? "fsync"
    const objects = join(options.directory, "objects")
    const temp = join(options.directory, "tmp")
    yield* attempt("open", () => {
      mkdirSync(objects, { recursive: true })
      mkdirSync(temp, { recursive: true })
    })

    // A hash that is not 64 hex digits could name a path outside the store: refuse it first.
    const locate = (hash: string, operation: string) =>
      Effect.map(requireContentHash(hash, operation), (valid) => ({
        shard: join(objects, valid.slice(0, 2)),
        file: join(objects, valid.slice(0, 2), valid.slice(2)),
      }))

    const readIfPresent = (file: string, operation: string) =>
      attempt(operation, () => {
        // A missing blob is the common case of a put: ask without paying for an exception.
        if (lstatSync(file, { throwIfNoEntry: false }) === undefined) return undefined
        try {
          return asBytes(readFileSync(file))
        } catch (e) {
          if (isErrno(e, "ENOENT")) return undefined
          throw e
        }
      })

    /** A blob a sweep has set aside (renamed into `tmp/`) while it decides; undefined when none. */
    const setAside = (hash: string): string | undefined => {
      const prefix = `sweep-${hash}-`
      const name = readdirSync(temp).find((n) => n.startsWith(prefix))
      return name === undefined ? undefined : join(temp, name)
    }

    /** Reads a blob, or its set-aside copy while a sweep holds it (the same bytes). */
    const readBlob = (hash: string, file: string, operation: string) =>
      Effect.flatMap(readIfPresent(file, operation), (bytes) =>
        bytes !== undefined
          ? Effect.succeed(bytes)
          : Effect.flatMap(
              attempt(operation, () => setAside(hash)),
              (aside) => (aside === undefined ? Effect.succeed(undefined) : readIfPresent(aside, operation)),
            ),
      )

    /** Puts a set-aside blob back unless a put has stored it anew meanwhile; then drops the copy. */
    const restore = (aside: string, file: string) => {
      try {
        linkSync(aside, file)
      } catch (e) {
        if (!isErrno(e, "EEXIST") && !isErrno(e, "ENOENT")) throw e
      }
      try {
        unlinkSync(aside)
      } catch (e) {
        if (!isErrno(e, "ENOENT")) throw e
      }
    }

    // A sweep that died with blobs set aside: put them back (a blob kept by mistake is only garbage
    // for the next collection; one lost would be data).
    yield* attempt("open", () => {
      for (const name of readdirSync(temp)) {
        const match = SET_ASIDE.exec(name)
        if (match === null) continue
        const hash = match[1]!
        mkdirSync(join(objects, hash.slice(0, 2)), { recursive: true })
        restore(join(temp, name), join(objects, hash.slice(0, 2), hash.slice(2)))
      }
    })

    /**
     * Makes an intact stored blob young again. False when it is gone (a sweep took it) or cannot
     * be touched (another user's file): then the put writes it anew.
     */
    const refresh = (file: string, now: number) =>
      attempt("put", () => {
        try {
          if (storedAtOf(lstatSync(file).mtimeMs) >= now) return true
          utimesSync(file, now / 1000, now / 1000)
          return true
        } catch (e) {
          if (isErrno(e, "ENOENT") || isErrno(e, "EPERM") || isErrno(e, "EACCES")) return false
          throw e
        }
      })

    // Shard directories are only ever added, so one that exists once exists for good.
    const knownShards = new Set<string>()
    const ensureShard = (shard: string) =>
      Effect.suspend(() =>
        knownShards.has(shard)
          ? Effect.void
          : attempt("put", () => {
              mkdirSync(shard, { recursive: true })
              knownShards.add(shard)
            }),
      )

    const listShard = (shard: string) =>
      attempt("list", () => {
        const infos: Array<ArtifactInfo> = []
        for (const name of readdirSync(join(objects, shard))) {
          if (!REST.test(name)) continue
          try {
            const stat = lstatSync(join(objects, shard, name))
            if (stat.isFile()) {
              infos.push({
                hash: (shard + name) as ContentHash,
                size: stat.size,
                storedAt: storedAtOf(stat.mtimeMs),
              })
            }
          } catch (e) {
            // Deleted between the listing and the stat: not in the store any more.
            if (!isErrno(e, "ENOENT")) throw e
          }
        }
        return infos
      })

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
                  Effect.sync(() => knownShards.delete(shard)),
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
            readdirSync(objects)
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
            const gone = yield* attempt("sweep", () => {
              const aside = join(temp, `sweep-${hash}-${randomUUID()}`)
              try {
                renameSync(file, aside)
              } catch (e) {
                if (isErrno(e, "ENOENT")) return undefined
                throw e
              }
              touched.add(shard)
              // Set aside, the blob's age can no longer change: a put now finds it missing.
              let stat: ReturnType<typeof lstatSync>
              try {
                stat = lstatSync(aside)
              } catch (e) {
                // Put back by a store opening meanwhile (crash recovery): kept.
                if (isErrno(e, "ENOENT")) return undefined
                throw e
              }
              if (storedAtOf(stat.mtimeMs) >= cutoff) {
                restore(aside, file)
                return undefined
              }
              try {
                unlinkSync(aside)
              } catch (e) {
                if (isErrno(e, "ENOENT")) return undefined
                throw e
              }
              return { hash, size: stat.size }
            })
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
