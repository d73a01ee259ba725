/**
 * The ArtifactStore in the session store's own SQLite database (table `blobs`, migration 0003):
 * checkpoint and point content lives in the same file, on the same connection, as the events
 * that refer to it.
 *
 * Why here rather than one file per blob: a put is an insert into the WAL, and a batch
 * (`putMany`, what a capture uses) is one transaction, so a 10,000-file capture is one commit
 * instead of 10,000 temp-file + rename pairs, and small blobs share pages instead of each taking a
 * filesystem block. Blobs are compressed when that saves at least an eighth, with brotli at
 * quality 1 (migration 0005; about 1.6× the speed of deflate level 1 on source text for ~3% more
 * bytes; quality 3 for a batch's smaller contents on the compression thread, below); rows written
 * before it hold raw deflate and read back as they are. A flag per row says which.
 *
 * Durability is the store's `synchronous` setting, the same as for events: with `NORMAL` (the
 * default) a committed put survives a crash of the process and the last commits may be lost on a
 * power cut; with `FULL` every commit is flushed before it returns. Either way WAL commits reach
 * the disk in order, so a checkpoint or point event that survived implies the blobs put before it
 * survived too — the store never holds a reference to content it lost.
 *
 * Every read inflates and re-hashes (`ArtifactCorrupt` on a mismatch); a put of content already
 * stored re-checks the stored copy and rewrites a damaged one (except a copy this connection wrote
 * or checked itself while no other connection committed: see `vouched`), and refreshes its
 * `stored_at` (the GC grace window counts from the last put).
 */
import { brotliCompressSync, brotliDecompressSync, inflateRawSync, constants as zlib } from "node:zlib"
import { ArtifactCorrupt, ArtifactNotFound, ArtifactStoreError, type ContentHash } from "@rewind/contracts"
import {
  type ArtifactInfo,
  type ArtifactStoreService,
  hashContent,
  isContentHash,
  requireContentHash,
  type SweptBlob,
  sweepCutoff,
} from "@rewind/core"
import type Database from "better-sqlite3"
import { Chunk, Clock, Effect, Option, Stream } from "effect"
import { compressAhead, makeStoredLookup } from "./compressAhead.js"
import type { CompressionThread, Encoded } from "./compressionThread.js"
import { Busy, isBusy, retryBusy } from "./sqliteErrors.js"

/** Rows per page of `list`. */
const PAGE = 1_000
/** Below this a blob is stored as is: the codec's framing would eat the saving. */
export const COMPRESS_FROM_BYTES = 64
const ENCODING_RAW = 0
/** Written before migration 0005; still read. */
const ENCODING_DEFLATE = 1
export const ENCODING_BROTLI = 2

interface BlobRow {
  readonly encoding: number
  readonly size: number
  readonly content: Buffer
}

/** The store's one connection and its permit (see storeService.ts): every call runs under it. */
export interface SqliteConnection {
  readonly db: Database.Database
  readonly exclusive: <A, E>(effect: Effect.Effect<A, E>) => Effect.Effect<A, E>
  /** Where large batches are compressed; without it, everything is compressed in the call. */
  readonly compression?: CompressionThread
  /** Told how many bytes each put wrote (the store's checkpoints follow the WAL's growth). */
  readonly noteWritten?: (bytes: number) => void
  /**
   * How long a call waits in all for another connection's lock. SQLite itself waits only briefly
   * (its wait blocks the event loop); the rest is waited between attempts (`retryBusy`).
   */
  readonly busyTimeoutMillis?: number
}

const asBytes = (b: Buffer): Uint8Array => new Uint8Array(b.buffer, b.byteOffset, b.byteLength)
const keyOf = (hash: string): Buffer => Buffer.from(hash, "hex")

/** Brotli quality 1: the speed-first setting that still finds matches across the whole window. */
export const BROTLI_QUALITY = 1
/**
 * On the compression thread, beside a capture's reads, contents below THREAD_LARGE_FROM_BYTES get
 * quality 3: on source text (node_modules' effect + typescript, 2,854 files, 57 MB) the store came
 * out 8.6% smaller than at quality 1 (13.67 -> 12.49 MB; 1% on babel's shape, whose generated
 * content is random letters) for ~150 ms more of the thread's CPU, which runs beside the reads.
 * Larger contents (and the point's manifest and stat cache, which the capture waits for) keep
 * quality 1. Any quality is decoded the same way: the stored encoding does not change.
 */
export const THREAD_BROTLI_QUALITY = 3
export const THREAD_LARGE_FROM_BYTES = 1024 * 1024

/** The stored form of a content: brotli when that saves at least an eighth. */
const encode = (content: Uint8Array): Encoded => {
  if (content.byteLength >= COMPRESS_FROM_BYTES) {
    const compressed = brotliCompressSync(content, {
      params: {
        [zlib.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
        [zlib.BROTLI_PARAM_SIZE_HINT]: content.byteLength,
      },
    })
    if (compressed.byteLength <= content.byteLength - (content.byteLength >> 3)) {
      return { encoding: ENCODING_BROTLI, bytes: compressed }
    }
  }
  return { encoding: ENCODING_RAW, bytes: content }
}

/** Vouches kept at most (see `vouched`): about 100 bytes each. */
const MAX_VOUCHED = 1_000_000

/**
 * The output buffer of a row's decompression: its recorded size, plus one byte so that zlib sees
 * room left and does not ask for a second buffer. By default zlib fills 16 KiB buffers and joins
 * them, a copy and a buffer per 16 KiB: in a cold process, the 23 MB stat cache and 20 MB manifest
 * of a 4× babel point inflated in 206–253 ms instead of 273–369 ms, and 16 MB lighter. Bounded so
 * that a damaged size cannot ask for a huge buffer (a larger content comes in pieces of the bound,
 * joined as before); the result is checked against the hash whatever the size said.
 */
const MAX_INFLATE_BUFFER = 64 * 1024 * 1024
const inflateOptions = (row: BlobRow) => ({
  chunkSize: Math.min(Math.max(row.size + 1, 64 * 1024), MAX_INFLATE_BUFFER),
})

/** The content of a row, or `undefined` when the row cannot be decoded (treated as corrupt). */
const decode = (row: BlobRow): Uint8Array | undefined => {
  if (row.encoding === ENCODING_RAW) return asBytes(row.content)
  try {
    if (row.encoding === ENCODING_BROTLI)
      return asBytes(brotliDecompressSync(row.content, inflateOptions(row)))
    if (row.encoding === ENCODING_DEFLATE) return asBytes(inflateRawSync(row.content, inflateOptions(row)))
    return undefined
  } catch {
    return undefined
  }
}

const storeError = (operation: string) => (cause: unknown) =>
  new ArtifactStoreError({
    operation,
    message: `SQLite artifact store: ${cause instanceof Error ? cause.message : String(cause)}`,
    cause,
  })

export const makeSqliteArtifactStore = (connection: SqliteConnection): ArtifactStoreService => {
  const { db, exclusive } = connection
  const statements = {
    get: db.prepare<[Buffer], BlobRow>("select encoding, size, content from blobs where hash = ?"),
    has: db.prepare<[Buffer], number>("select 1 from blobs where hash = ?").pluck(),
    touch: db.prepare<[number, Buffer]>("update blobs set stored_at = max(stored_at, ?) where hash = ?"),
    upsert: db.prepare<[Buffer, number, number, number, Uint8Array]>(
      `insert into blobs (hash, size, encoding, stored_at, content) values (?, ?, ?, ?, ?)
       on conflict (hash) do update set size = excluded.size, encoding = excluded.encoding,
         stored_at = excluded.stored_at, content = excluded.content`,
    ),
    // A content the lookup before the transaction found unstored: inserted without looking first.
    insertNew: db.prepare<[Buffer, number, number, number, Uint8Array]>(
      `insert into blobs (hash, size, encoding, stored_at, content) values (?, ?, ?, ?, ?)
       on conflict (hash) do nothing`,
    ),
    remove: db.prepare<[Buffer]>("delete from blobs where hash = ?"),
    // The age test and the delete are one statement, so a put committed before it keeps the blob.
    sweepOne: db.prepare<[Buffer, number], { size: number }>(
      "delete from blobs where hash = ? and stored_at < ? returning size",
    ),
    page: db.prepare<[Buffer, number], { hash: Buffer; size: number; stored_at: number }>(
      "select hash, size, stored_at from blobs where hash > ? order by hash limit ?",
    ),
    stats: db.prepare<[], { count: number; bytes: number | null }>(
      "select count(*) as count, sum(size) as bytes from blobs",
    ),
  }

  // A statement that found the database locked is retried as a whole (a `BEGIN IMMEDIATE`
  // transaction fails before it writes anything), asynchronously, within the busy budget.
  const run = <A>(operation: string, body: () => A) =>
    retryBusy(
      exclusive(
        Effect.try({
          try: body,
          catch: (cause) => (isBusy(cause) ? new Busy({ operation, cause }) : storeError(operation)(cause)),
        }),
      ),
      connection.busyTimeoutMillis,
    ).pipe(Effect.catchTag("StoreError", (error) => Effect.fail(storeError(operation)(error.cause ?? error))))

  const checked = requireContentHash

  /**
   * Contents whose stored row this connection wrote or verified, while no other connection has
   * committed since (`PRAGMA data_version` unchanged): a put finding such a row refreshes it
   * without decoding and re-hashing it again. A first capture of a tree with copies met every copy
   * after the first as a stored row, and verified each (a quarter of the put's time at 4× babel);
   * so does every new session's first capture in a long-lived process. Nothing but this module
   * writes blob rows on this connection, and it writes only verified content, so such a row can
   * differ from the content only by damage on the disk, which every read still detects. Only the
   * bytes are taken on trust: that the row exists is looked up at every put, as before.
   */
  const vouched = new Set<string>()
  let vouchedVersion: unknown
  const dataVersion = db.prepare("pragma data_version").pluck()
  /** At the start of a put's transaction: another connection's commit voids every vouch. */
  const checkVouched = () => {
    const version = dataVersion.get()
    if (version !== vouchedVersion || vouched.size >= MAX_VOUCHED) {
      vouched.clear()
      vouchedVersion = version
    }
  }

  /**
   * Whether the row of `hash` holds it: a vouched row is only looked up (its bytes are not even
   * read from the database), any other is decoded and re-hashed.
   */
  const storedIntact = (key: Buffer, hash: ContentHash): boolean => {
    if (vouched.has(hash)) return statements.has.get(key) !== undefined
    const row = statements.get.get(key)
    const stored = row === undefined ? undefined : decode(row)
    return stored !== undefined && hashContent(stored) === hash
  }

  /**
   * Stores one content (its hash computed already) inside the caller's transaction; the stored copy
   * is verified, not trusted (unless this connection vouches for it, above). `unstored`: the lookup
   * before the transaction found no row for it; `encoded` is its stored form when it was
   * compressed ahead.
   */
  const putOne = (
    content: Uint8Array,
    hash: ContentHash,
    key: Buffer,
    now: number,
    unstored: boolean,
    encoded?: Encoded,
  ): ContentHash => {
    let form = encoded
    // Found unstored a moment ago: most likely still new, so inserted without a look at its row
    // first. A row that appeared meanwhile (no change) is verified below as any stored row is.
    if (unstored) {
      form ??= encode(content)
      if (statements.insertNew.run(key, content.byteLength, form.encoding, now, form.bytes).changes === 1) {
        connection.noteWritten?.(form.bytes.byteLength)
        vouched.add(hash)
        return hash
      }
    }
    if (storedIntact(key, hash)) {
      statements.touch.run(now, key)
      vouched.add(hash)
      return hash
    }
    const { encoding, bytes } = form ?? encode(content)
    statements.upsert.run(key, content.byteLength, encoding, now, bytes)
    connection.noteWritten?.(bytes.byteLength)
    vouched.add(hash)
    return hash
  }

  const storedLookup = makeStoredLookup(db)
  const ahead = {
    thread: connection.compression,
    compressFromBytes: COMPRESS_FROM_BYTES,
    storedAmong: (keys: ReadonlyArray<Buffer>) => run("put", () => storedLookup(keys)),
  }

  const putBatch = (
    contents: ReadonlyArray<Uint8Array>,
    single: boolean,
    given?: ReadonlyArray<ContentHash | undefined>,
  ) =>
    Effect.gen(function* () {
      // Hashed outside the store's permit: the hashes say which contents need compressing at all.
      // A hash the reader computed over these very bytes (the port's contract) is taken as is.
      const hashes = contents.map((c, i) => given?.[i] ?? hashContent(c))
      const keys = hashes.map(keyOf)
      const found = yield* compressAhead(ahead, contents, hashes, keys, single)
      const now = yield* Clock.currentTimeMillis
      return yield* run("put", () =>
        db
          .transaction(() => {
            checkVouched()
            return contents.map((c, i) =>
              putOne(c, hashes[i]!, keys[i]!, now, found?.unstored.has(i) ?? false, found?.encoded?.get(i)),
            )
          })
          .immediate(),
      )
    })

  /** Reads and verifies one blob; the failure for a missing or damaged one. */
  const getOne = (hash: ContentHash): Uint8Array | ArtifactNotFound | ArtifactCorrupt => {
    const row = statements.get.get(keyOf(hash))
    if (row === undefined) return new ArtifactNotFound({ hash })
    const bytes = decode(row)
    const actual = bytes === undefined ? "undecodable" : hashContent(bytes)
    if (bytes === undefined || actual !== hash) {
      // Damaged since it was vouched for: the next put of the content verifies, and rewrites it.
      vouched.delete(hash)
      return new ArtifactCorrupt({ hash, actualHash: actual })
    }
    return bytes
  }

  const getBatch = (hashes: ReadonlyArray<ContentHash>) =>
    Effect.gen(function* () {
      for (const hash of hashes) yield* checked(hash, "get")
      const results = yield* run("get", () => db.transaction(() => hashes.map(getOne)).deferred())
      const out: Array<Uint8Array> = []
      for (const r of results) {
        if (r instanceof ArtifactNotFound || r instanceof ArtifactCorrupt) return yield* Effect.fail(r)
        out.push(r)
      }
      return out
    })

  const service: ArtifactStoreService = {
    put: (content) => Effect.map(putBatch([content], true), (hashes) => hashes[0]!),
    putMany: (contents, hashes) => putBatch(contents, false, hashes),
    get: (hash) => Effect.map(getBatch([hash]), (bytes) => bytes[0]!),
    getMany: getBatch,
    has: (hash) =>
      Effect.zipRight(
        checked(hash, "has"),
        run("has", () => statements.has.get(keyOf(hash)) !== undefined),
      ),
    delete: (hash) =>
      Effect.zipRight(
        checked(hash, "delete"),
        run("delete", () => {
          const removed = statements.remove.run(keyOf(hash)).changes > 0
          // A removal rewrites pages too (the row's leaf, the freed pages' list): counted, so the
          // WAL a GC leaves behind is checkpointed when the store next goes idle (connection.ts).
          if (removed) connection.noteWritten?.(4096)
          return removed
        }),
      ),
    list: () =>
      Stream.paginateChunkEffect(Buffer.alloc(0) as Buffer, (after) =>
        Effect.map(
          run("list", () => statements.page.all(after, PAGE)),
          (rows) => {
            const infos: Array<ArtifactInfo> = rows.map((r) => ({
              hash: r.hash.toString("hex") as ContentHash,
              size: r.size,
              storedAt: r.stored_at,
            }))
            const last = rows.at(-1)
            return [
              Chunk.unsafeFromArray(infos),
              rows.length < PAGE || last === undefined ? Option.none() : Option.some(last.hash),
            ] as const
          },
        ),
      ),
    stats: () =>
      run("stats", () => {
        const row = statements.stats.get()!
        return { count: row.count, bytes: row.bytes ?? 0 }
      }),
    // Every process on the machine shares this clock, and stored_at is written from it.
    now: () => Clock.currentTimeMillis,
    sweep: (request) =>
      Effect.gen(function* () {
        const cutoff = yield* sweepCutoff(request)
        const candidates = [...new Set(request.candidates)].filter(isContentHash)
        return yield* run("sweep", () =>
          db
            .transaction(() => {
              const deleted: Array<SweptBlob> = []
              for (const hash of candidates) {
                const row = statements.sweepOne.get(keyOf(hash), cutoff)
                if (row !== undefined) deleted.push({ hash, size: row.size })
              }
              return deleted
            })
            .immediate(),
        )
      }),
  }
  return service
}
