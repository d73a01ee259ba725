/**
 * How a serialized value (the bytes the saver's serializer made) is kept: inline in the event
 * (base64) when it is small and the caller allows it, otherwise as a blob in the artifact store.
 *
 * A blob is framed by one leading byte saying how the rest is encoded (0: as is, 1: brotli), so a
 * store written with compression on reads back with it off and the other way round. Compression is
 * brotli at quality 1 and kept only when it saves at least an eighth; the saver turns it off over a
 * store that compresses blobs itself (the SQLite store), where a second pass would only cost time.
 * Blobs are content-addressed, so equal values (the same channel value in many threads, a
 * checkpoint put twice) are stored once — and a blob never changes, so the bytes of recently put or
 * read blobs are kept in a bounded cache (`BlobCache`) whatever other workers do: reading the
 * checkpoint just put, or the nine channels of ten that did not change, costs no store read.
 */
import { brotliCompressSync, brotliDecompressSync, constants as zlib } from "node:zlib"
import type { ContentHash, GraphValue } from "@rewind/contracts"
import { ArtifactStore } from "@rewind/core"
import { Effect } from "effect"
import { GraphValueUnreadable } from "../errors.js"

/** Values up to this many bytes may be kept inline in the event instead of a blob. */
export const INLINE_MAX_BYTES = 512

const RAW = 0
const BROTLI = 1
const COMPRESS_MIN_BYTES = 64

/** The serialized bytes of recent blobs by address, least recently used dropped past `maxBytes`. */
export class BlobCache {
  private readonly entries = new Map<ContentHash, Uint8Array>()
  private bytes = 0
  constructor(private readonly maxBytes: number) {}

  get(hash: ContentHash): Uint8Array | undefined {
    const hit = this.entries.get(hash)
    if (hit !== undefined) {
      this.entries.delete(hash)
      this.entries.set(hash, hit)
    }
    return hit
  }

  set(hash: ContentHash, value: Uint8Array): void {
    if (value.length > this.maxBytes / 4 || this.entries.has(hash)) return
    this.entries.set(hash, value)
    this.bytes += value.length
    for (const [key, old] of this.entries) {
      if (this.bytes <= this.maxBytes) break
      this.entries.delete(key)
      this.bytes -= old.length
    }
  }
}

export interface Serialized {
  readonly type: string
  readonly bytes: Uint8Array
}

const frame = (bytes: Uint8Array, compress: boolean): Uint8Array => {
  if (compress && bytes.length >= COMPRESS_MIN_BYTES) {
    const packed = brotliCompressSync(bytes, {
      params: { [zlib.BROTLI_PARAM_QUALITY]: 1, [zlib.BROTLI_PARAM_SIZE_HINT]: bytes.length },
    })
    if (packed.length <= bytes.length - bytes.length / 8) {
      const out = new Uint8Array(packed.length + 1)
      out[0] = BROTLI
      out.set(packed, 1)
      return out
    }
  }
  const out = new Uint8Array(bytes.length + 1)
  out[0] = RAW
  out.set(bytes, 1)
  return out
}

const unframe = (blob: Uint8Array, hash: string): Uint8Array => {
  const body = blob.subarray(1)
  if (blob[0] === RAW) return body
  if (blob[0] === BROTLI) return new Uint8Array(brotliDecompressSync(body))
  throw new Error(`blob ${hash} is not a graph value (unknown frame ${String(blob[0])})`)
}

const toBase64 = (bytes: Uint8Array) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")

/**
 * Stores the values that need a blob (in one `putMany`) and answers each value's reference, in
 * order. `inline[i]` says whether value i may stay inline when small.
 */
export const storeValues = (
  values: ReadonlyArray<Serialized>,
  inline: ReadonlyArray<boolean>,
  compress: boolean,
  cache: BlobCache,
) =>
  Effect.gen(function* () {
    const refs: Array<GraphValue | undefined> = values.map((v, i) =>
      inline[i] === true && v.bytes.length <= INLINE_MAX_BYTES
        ? { type: v.type, inline: toBase64(v.bytes) }
        : undefined,
    )
    const pending = refs.flatMap((ref, i) => (ref === undefined ? [i] : []))
    if (pending.length > 0) {
      const hashes = yield* (yield* ArtifactStore).putMany(
        pending.map((i) => frame(values[i]!.bytes, compress)),
      )
      pending.forEach((i, k) => {
        refs[i] = { type: values[i]!.type, hash: hashes[k]! }
        cache.set(hashes[k]!, values[i]!.bytes)
      })
    }
    return refs as ReadonlyArray<GraphValue>
  })

/** The serialized bytes of each reference, in order (blobs not in the cache fetched with one `getMany`). */
export const loadValues = (refs: ReadonlyArray<GraphValue>, cache: BlobCache) =>
  Effect.gen(function* () {
    const missing: Array<ContentHash> = []
    for (const ref of refs) if ("hash" in ref && cache.get(ref.hash) === undefined) missing.push(ref.hash)
    const blobs = missing.length === 0 ? [] : yield* (yield* ArtifactStore).getMany(missing)
    const fetched = new Map<ContentHash, Uint8Array>()
    yield* Effect.try({
      try: () => {
        missing.forEach((hash, i) => {
          const bytes = unframe(blobs[i]!, hash)
          fetched.set(hash, bytes)
          cache.set(hash, bytes)
        })
      },
      catch: (cause) =>
        new GraphValueUnreadable({ message: cause instanceof Error ? cause.message : String(cause) }),
    })
    return refs.map(
      (ref): Serialized =>
        "inline" in ref
          ? { type: ref.type, bytes: new Uint8Array(Buffer.from(ref.inline, "base64")) }
          : { type: ref.type, bytes: fetched.get(ref.hash) ?? cache.get(ref.hash)! },
    )
  })
