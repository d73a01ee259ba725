/**
 * An in-memory ArtifactStore. Bytes are copied in and out, so a caller mutating its buffer cannot
 * change a stored blob, and every read re-hashes like a disk store would. `MemoryArtifactData` can
 * outlive one layer (a "reopen") and lets tests damage a blob to check corruption handling.
 * The store's clock is Effect's `Clock`; a put of content already stored refreshes its `storedAt`,
 * and a sweep checks and deletes each blob in one synchronous step, so no put can fall between.
 */
import {
  ArtifactCorrupt,
  ArtifactNotFound,
  type ArtifactStoreError,
  type ContentHash,
} from "@rewind/contracts"
import {
  ArtifactStore,
  type ArtifactStoreService,
  getEach,
  hashContent,
  putEach,
  requireContentHash,
  type SweptBlob,
  sweepCutoff,
} from "@rewind/core"
import { Clock, Effect, Layer, Stream } from "effect"

export interface MemoryArtifactData {
  readonly blobs: Map<ContentHash, { bytes: Uint8Array; storedAt: number }>
}

export const makeMemoryArtifactData = (): MemoryArtifactData => ({ blobs: new Map() })

export const makeMemoryArtifactStore = (
  data: MemoryArtifactData = makeMemoryArtifactData(),
): ArtifactStoreService => {
  const service: ArtifactStoreService = {
    putMany: (contents) => putEach(service.put)(contents),
    getMany: (hashes) => getEach(service.get)(hashes),
    put: (content) =>
      Effect.gen(function* () {
        const hash = hashContent(content)
        const now = yield* Clock.currentTimeMillis
        const existing = data.blobs.get(hash)
        // A damaged copy is replaced; an intact one keeps its bytes and only becomes young again.
        if (existing !== undefined && hashContent(existing.bytes) === hash) {
          existing.storedAt = Math.max(existing.storedAt, now)
          return hash
        }
        data.blobs.set(hash, { bytes: content.slice(), storedAt: now })
        return hash
      }),
    get: (hash) =>
      Effect.flatMap(
        requireContentHash(hash, "get"),
        (): Effect.Effect<Uint8Array, ArtifactNotFound | ArtifactCorrupt | ArtifactStoreError> => {
          const blob = data.blobs.get(hash)
          if (blob === undefined) return Effect.fail(new ArtifactNotFound({ hash }))
          const actual = hashContent(blob.bytes)
          if (actual !== hash) return Effect.fail(new ArtifactCorrupt({ hash, actualHash: actual }))
          return Effect.succeed(blob.bytes.slice())
        },
      ),
    has: (hash) => Effect.sync(() => data.blobs.has(hash)),
    delete: (hash) => Effect.sync(() => data.blobs.delete(hash)),
    list: () =>
      Stream.suspend(() =>
        Stream.fromIterable(
          [...data.blobs].map(([hash, blob]) => ({
            hash,
            size: blob.bytes.byteLength,
            storedAt: blob.storedAt,
          })),
        ),
      ),
    stats: () =>
      Effect.sync(() => {
        let bytes = 0
        for (const blob of data.blobs.values()) bytes += blob.bytes.byteLength
        return { count: data.blobs.size, bytes }
      }),
    now: () => Clock.currentTimeMillis,
    sweep: (request) =>
      Effect.map(sweepCutoff(request), (cutoff) => {
        const deleted: Array<SweptBlob> = []
        for (const hash of new Set(request.candidates)) {
          const blob = data.blobs.get(hash)
          if (blob === undefined || blob.storedAt >= cutoff) continue
          data.blobs.delete(hash)
          deleted.push({ hash, size: blob.bytes.byteLength })
        }
        return deleted
      }),
  }
  return service
}

/** A fresh, empty memory artifact store. */
export const layer: Layer.Layer<ArtifactStore> = Layer.sync(ArtifactStore, () => makeMemoryArtifactStore())

/** A memory artifact store over existing data. */
export const layerFrom = (data: MemoryArtifactData): Layer.Layer<ArtifactStore> =>
  Layer.sync(ArtifactStore, () => makeMemoryArtifactStore(data))
