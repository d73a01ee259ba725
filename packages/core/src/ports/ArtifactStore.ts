/**
 * The ArtifactStore port: a content-addressed blob store. A blob's address is the SHA-256 of its
 * bytes, so a put is idempotent and two writers of the same content agree. Every read re-hashes
 * the bytes: a blob that does not match its address fails with `ArtifactCorrupt` and is never
 * handed out as data.
 *
 * `putMany` and `getMany` are the bulk forms a capture or a restore of many files uses: an adapter
 * with transactions stores a batch in one (one commit instead of one per blob); one without them
 * may use `putEach` / `getEach`, which are the single operations in order.
 */
import type { ArtifactCorrupt, ArtifactNotFound, ArtifactStoreError, ContentHash } from "@rewind/contracts"
import { Context, Effect, type Stream } from "effect"

export interface ArtifactInfo {
  readonly hash: ContentHash
  readonly size: number
  /** When the blob was last written (milliseconds); GC uses it for its grace window. */
  readonly storedAt: number
}

export interface ArtifactStats {
  readonly count: number
  readonly bytes: number
}

export interface ArtifactStoreService {
  /** Stores the bytes (once) and returns their address. Safe to call concurrently for the same content. */
  readonly put: (content: Uint8Array) => Effect.Effect<ContentHash, ArtifactStoreError>
  /**
   * Stores every content (once each) and returns their addresses in order. All of them are stored
   * when it succeeds; when it fails, some may be stored (left for GC), none is half-written.
   */
  readonly putMany: (
    contents: ReadonlyArray<Uint8Array>,
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
}

export class ArtifactStore extends Context.Tag("@rewind/core/ArtifactStore")<
  ArtifactStore,
  ArtifactStoreService
>() {}

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
