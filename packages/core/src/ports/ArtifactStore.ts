/**
 * The ArtifactStore port: a content-addressed blob store. A blob's address is the SHA-256 of its
 * bytes, so a put is idempotent and two writers of the same content agree. Every read re-hashes
 * the bytes: a blob that does not match its address fails with `ArtifactCorrupt` and is never
 * handed out as data.
 */
import type { ArtifactCorrupt, ArtifactNotFound, ArtifactStoreError, ContentHash } from "@rewind/contracts"
import { Context, type Effect, type Stream } from "effect"

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
  /** The verified bytes of a blob. */
  readonly get: (
    hash: ContentHash,
  ) => Effect.Effect<Uint8Array, ArtifactNotFound | ArtifactCorrupt | ArtifactStoreError>
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
