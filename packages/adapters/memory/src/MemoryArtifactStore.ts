/**
 * An in-memory ArtifactStore. Bytes are copied in and out, so a caller mutating its buffer cannot
 * change a stored blob, and every read re-hashes like a disk store would. `MemoryArtifactData` can
 * outlive one layer (a "reopen") and lets tests damage a blob to check corruption handling.
 */
import { ArtifactCorrupt, ArtifactNotFound, ArtifactStoreError, type ContentHash } from "@rewind/contracts"
import { ArtifactStore, type ArtifactStoreService, getEach, hashContent, putEach } from "@rewind/core"
import { Clock, Effect, Layer, Stream } from "effect"

const HASH = /^[0-9a-f]{64}$/

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
        const existing = data.blobs.get(hash)
        // A damaged copy is replaced; an intact one is left alone (idempotent put).
        if (existing !== undefined && hashContent(existing.bytes) === hash) return hash
        const storedAt = yield* Clock.currentTimeMillis
        data.blobs.set(hash, { bytes: content.slice(), storedAt })
        return hash
      }),
    get: (hash) =>
      Effect.suspend(
        (): Effect.Effect<Uint8Array, ArtifactNotFound | ArtifactCorrupt | ArtifactStoreError> => {
          if (!HASH.test(hash)) {
            return Effect.fail(
              new ArtifactStoreError({
                operation: "get",
                message: `${JSON.stringify(hash)} is not a content hash`,
              }),
            )
          }
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
  }
  return service
}

/** A fresh, empty memory artifact store. */
export const layer: Layer.Layer<ArtifactStore> = Layer.sync(ArtifactStore, () => makeMemoryArtifactStore())

/** A memory artifact store over existing data. */
export const layerFrom = (data: MemoryArtifactData): Layer.Layer<ArtifactStore> =>
  Layer.sync(ArtifactStore, () => makeMemoryArtifactStore(data))
