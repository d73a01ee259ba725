/**
 * The ArtifactStore port: a content-addressed blob store. A blob's address is the SHA-256 of its
 * bytes, so a put is idempotent and two writers of the same content agree. Every read re-hashes
 * the bytes: a blob that does not match its address fails with `ArtifactCorrupt` and is never
 * handed out as data.
 *
 * GC with many writers sharing one store. Every put, also of content already stored, refreshes the
 * blob's `storedAt` on the store's own clock (`now`). A collector reads `now` before it marks, and
 * then `sweep`s its unmarked candidates: the store deletes a candidate only if it was not put since
 * `markedAt - graceMs`, deciding that atomically per blob against any concurrent put. So a blob
 * that a writer put (again) after the mark began is never taken, whichever worker's clock is off.
 *
 * `putMany` and `getMany` are the bulk forms a capture or a restore of many files uses: an adapter
 * with transactions stores a batch in one (one commit instead of one per blob); one without them
 * may use `putEach` / `getEach`, which are the single operations in order.
 */
import {
  type ArtifactCorrupt,
  type ArtifactNotFound,
  ArtifactStoreError,
  CONTENT_HASH_PATTERN,
  type ContentHash,
} from "@rewind/contracts"
import { Context, Effect, type Stream } from "effect"

export interface ArtifactInfo {
  readonly hash: ContentHash
  readonly size: number
  /** When the blob was last put (milliseconds, on the store's clock: see `now`). */
  readonly storedAt: number
}

export interface ArtifactStats {
  readonly count: number
  readonly bytes: number
}

export interface SweepRequest {
  /** Blobs the collector found unreferenced. */
  readonly candidates: ReadonlyArray<ContentHash>
  /** The store's `now` read before the mark began. */
  readonly markedAt: number
  /** A candidate put at or after `markedAt - graceMs` is kept (in-flight operations). */
  readonly graceMs: number
}

export interface SweptBlob {
  readonly hash: ContentHash
  readonly size: number
}

export interface ArtifactStoreService {
  /** Stores the bytes (once) and returns their address. Safe to call concurrently for the same content. */
  readonly put: (content: Uint8Array) => Effect.Effect<ContentHash, ArtifactStoreError>
  /**
   * Stores every content (once each) and returns their addresses in order. All of them are stored
   * when it succeeds; when it fails, some may be stored (left for GC), none is half-written.
   * `hashes`, where given, holds `hashContent` of the content at the same index (or `undefined`),
   * computed over exactly those bytes by whoever read them (`WorkspaceFile.hash`); a store may use
   * it instead of hashing again, or ignore it.
   */
  readonly putMany: (
    contents: ReadonlyArray<Uint8Array>,
    hashes?: ReadonlyArray<ContentHash | undefined>,
  ) => Effect.Effect<ReadonlyArray<ContentHash>, ArtifactStoreError>
  /** The verified bytes of a blob. */
  readonly get: (
    hash: ContentHash,
  ) => Effect.Effect<Uint8Array, ArtifactNotFound | ArtifactCorrupt | ArtifactStoreError>
  /** The verified bytes of every blob, in order; fails as `get` does on the first bad one. */
  readonly getMany: (
    hashes: ReadonlyArray<ContentHash>,
  ) => Effect.Effect<ReadonlyArray<Uint8Array>, ArtifactNotFound | ArtifactCorrupt | ArtifactStoreError>
  /** Whether a blob is present; cheap, so it does not verify the content (`get` does). */
  readonly has: (hash: ContentHash) => Effect.Effect<boolean, ArtifactStoreError>
  /** Removes a blob; false when it was not there. */
  readonly delete: (hash: ContentHash) => Effect.Effect<boolean, ArtifactStoreError>
  /** Every blob in the store, in no particular order. */
  readonly list: () => Stream.Stream<ArtifactInfo, ArtifactStoreError>
  readonly stats: () => Effect.Effect<ArtifactStats, ArtifactStoreError>
  /** The store's clock (milliseconds): the clock `storedAt` is on, shared by every writer of the store. */
  readonly now: () => Effect.Effect<number, ArtifactStoreError>
  /**
   * Deletes each candidate whose `storedAt` is before `markedAt - graceMs`, checked and deleted as
   * one step per blob, so a put racing the sweep either refreshes the blob first (kept) or finds it
   * gone and stores it again. Returns what it deleted; missing candidates are skipped.
   */
  readonly sweep: (request: SweepRequest) => Effect.Effect<ReadonlyArray<SweptBlob>, ArtifactStoreError>
}

export class ArtifactStore extends Context.Tag("@rewind/core/ArtifactStore")<
  ArtifactStore,
  ArtifactStoreService
>() {}

/** Whether a string is a content address (SHA-256, 64 lowercase hex digits). */
export const isContentHash = (hash: string): hash is ContentHash => CONTENT_HASH_PATTERN.test(hash)

/**
 * The error every adapter gives for an address that is not a content hash: a malformed address
 * never reaches a file name, a query or a map lookup.
 */
export const requireContentHash = (
  hash: string,
  operation: string,
): Effect.Effect<ContentHash, ArtifactStoreError> =>
  isContentHash(hash)
    ? Effect.succeed(hash)
    : Effect.fail(
        new ArtifactStoreError({ operation, message: `${JSON.stringify(hash)} is not a content hash` }),
      )

/**
 * The `storedAt` a sweep's candidates must be below, for adapters: a grace window or mark time that
 * is not a finite, non-negative number fails the sweep before anything is deleted.
 */
export const sweepCutoff = (request: SweepRequest): Effect.Effect<number, ArtifactStoreError> =>
  Number.isFinite(request.markedAt) && Number.isFinite(request.graceMs) && request.graceMs >= 0
    ? Effect.succeed(request.markedAt - request.graceMs)
    : Effect.fail(
        new ArtifactStoreError({
          operation: "sweep",
          message: `a sweep needs a finite mark time and a non-negative grace window, got markedAt ${request.markedAt} and graceMs ${request.graceMs}`,
        }),
      )

/** `putMany` by single puts in order, for adapters that have no cheaper bulk path. */
export const putEach =
  (put: ArtifactStoreService["put"]): ArtifactStoreService["putMany"] =>
  (contents) =>
    Effect.forEach(contents, put)

/** `getMany` by single gets in order, for adapters that have no cheaper bulk path. */
export const getEach =
  (get: ArtifactStoreService["get"]): ArtifactStoreService["getMany"] =>
  (hashes) =>
    Effect.forEach(hashes, get)
