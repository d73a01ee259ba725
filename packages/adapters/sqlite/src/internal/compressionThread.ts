/**
 * Compression on a worker thread, for large batches of blobs (a capture stores thousands of files in
 * batches of up to 8 MiB). Compression is most of what a first capture costs on the main thread;
 * here it runs on the other core while the caller reads its next batch.
 *
 * A batch crosses as one buffer each way (contents packed back to back, moved rather than copied
 * into the thread; results packed the same way), so a batch of a thousand small files is two
 * transfers, not two thousand clones. The thread starts on the first batch and is unref'd; when it
 * cannot start or dies, every pending and later batch answers `undefined` and the caller
 * compresses on its own thread as before.
 */
import type { Worker } from "node:worker_threads"
import { endWorker, startEvalWorker } from "./evalWorker.js"

/** How a blob is stored: 0 as is, else `CompressionSettings.encoding` (see artifactStore.ts). */
export interface Encoded {
  readonly encoding: number
  readonly bytes: Uint8Array
}

export interface CompressionThread {
  /**
   * Whether the thread is up and waiting for work. Unless `start` is false, the first call starts
   * it. A start costs ~55 ms: a caller with a little work compresses it itself meanwhile.
   */
  readonly ready: (start?: boolean) => boolean
  /**
   * The stored forms of `contents`, or `undefined` when the thread is unavailable. Starts the
   * thread if need be; work sent while it starts waits for it.
   */
  readonly encode: (contents: ReadonlyArray<Uint8Array>) => Promise<Array<Encoded> | undefined>
  /** Packing buffers the thread handed back and that are kept for the next batches. */
  readonly spareBuffers: () => number
  readonly close: () => Promise<void>
}

export interface CompressionSettings {
  /** Contents below this many bytes are stored as they are. */
  readonly compressFromBytes: number
  /** Brotli quality. */
  readonly quality: number
  /** Contents of at least this many bytes are compressed at `largeQuality` instead (default: none). */
  readonly largeFromBytes?: number
  readonly largeQuality?: number
  /** The encoding a compressed content is stored under. */
  readonly encoding: number
  /** How long packing buffers are kept once batches stop (default 1 s). */
  readonly spareKeepMs?: number
}

// CommonJS, evaluated in the worker. The reply packs the compressed forms back to back, with every
// entry's encoding and length; a content kept as is comes back empty (the caller has it already).
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads")
const { brotliCompressSync, constants } = require("node:zlib")
const { compressFromBytes, quality, largeFromBytes, largeQuality, encoding: compressedEncoding } = workerData
const EMPTY = new Uint8Array(0)
// Up: a flag in shared memory, readable while the host is too busy to take messages.
Atomics.store(new Int32Array(workerData.up), 0, 1)
parentPort.on("message", ({ id, buffer, lengths }) => {
  try {
    const input = new Uint8Array(buffer)
    const parts = []
    const encodings = []
    let offset = 0
    let total = 0
    for (const length of lengths) {
      const content = input.subarray(offset, offset + length)
      offset += length
      let out = EMPTY
      let encoding = 0
      if (length >= compressFromBytes) {
        const compressed = brotliCompressSync(content, {
          params: {
            [constants.BROTLI_PARAM_QUALITY]: length >= largeFromBytes ? largeQuality : quality,
            [constants.BROTLI_PARAM_SIZE_HINT]: length,
          },
        })
        if (compressed.byteLength <= length - (length >> 3)) {
          out = compressed
          encoding = compressedEncoding
        }
      }
      parts.push(out)
      encodings.push(encoding)
      total += out.byteLength
    }
    const packed = new Uint8Array(total)
    const sizes = []
    offset = 0
    for (const part of parts) {
      packed.set(part, offset)
      offset += part.byteLength
      sizes.push(part.byteLength)
    }
    // The input goes back too: the host packs its next batch into it.
    parentPort.postMessage({ id, buffer: packed.buffer, input: buffer, sizes, encodings }, [packed.buffer, buffer])
  } catch (error) {
    parentPort.postMessage({ id, error: String(error) })
  }
})
`

interface Reply {
  readonly id: number
  readonly buffer?: ArrayBuffer
  readonly input?: ArrayBuffer
  readonly sizes?: ReadonlyArray<number>
  readonly encodings?: ReadonlyArray<number>
  readonly error?: string
}

/** Packing buffers kept for the next batches, and how long they are kept once batches stop. */
const SPARE_BUFFERS = 4
const SPARE_KEEP_MS = 1_000
/** Packing buffers are sized in steps of this, so a slightly larger batch can use an earlier one. */
const BUFFER_STEP = 1024 * 1024

export const makeCompressionThread = (settings: CompressionSettings): CompressionThread => {
  let worker: Worker | undefined
  let failed = false
  let nextId = 0
  const pending = new Map<number, (reply: Reply | undefined) => void>()
  const up = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT))
  // Buffers the thread handed back. Packing into fresh memory costs its page faults, several times
  // the copy itself (a capture packs ~100 MB); reused memory costs only the copy. They are dropped
  // once no batch has come for a while, so an idle store holds none.
  const spare: Array<ArrayBuffer> = []
  // Started by the first batch (a store that never compresses a batch never has the timer).
  let dropSpare: ReturnType<typeof setTimeout> | undefined
  const packingBuffer = (total: number) => {
    dropSpare ??= setTimeout(() => {
      spare.length = 0
    }, settings.spareKeepMs ?? SPARE_KEEP_MS).unref()
    dropSpare.refresh()
    const fit = spare.findIndex((b) => b.byteLength >= total)
    if (fit !== -1) return new Uint8Array(spare.splice(fit, 1)[0]!, 0, total)
    return new Uint8Array(
      new ArrayBuffer(Math.ceil(Math.max(total, 1) / BUFFER_STEP) * BUFFER_STEP),
      0,
      total,
    )
  }
  const keepSpare = (buffer: ArrayBuffer) => {
    spare.push(buffer)
    // The largest are the most useful.
    if (spare.length > SPARE_BUFFERS)
      spare.splice(spare.indexOf(spare.reduce((a, b) => (a.byteLength <= b.byteLength ? a : b))), 1)
  }

  const fail = () => {
    failed = true
    worker = undefined
    for (const resolve of pending.values()) resolve(undefined)
    pending.clear()
  }

  const start = () => {
    const started = startEvalWorker(WORKER_SOURCE, {
      compressFromBytes: settings.compressFromBytes,
      quality: settings.quality,
      largeFromBytes: settings.largeFromBytes ?? Number.POSITIVE_INFINITY,
      largeQuality: settings.largeQuality ?? settings.quality,
      encoding: settings.encoding,
      up: up.buffer,
    })
    started.on("message", (reply: Reply) => {
      if (reply.input !== undefined) keepSpare(reply.input)
      const resolve = pending.get(reply.id)
      pending.delete(reply.id)
      resolve?.(reply)
    })
    started.on("error", fail)
    started.on("exit", fail)
    return started
  }

  const started = (): boolean => {
    if (failed) return false
    try {
      worker ??= start()
      return true
    } catch {
      fail()
      return false
    }
  }

  return {
    ready: (start = true) => (start ? started() : worker !== undefined) && Atomics.load(up, 0) === 1,
    encode: async (contents) => {
      if (!started()) return undefined
      let total = 0
      for (const c of contents) total += c.byteLength
      const packed = packingBuffer(total)
      const lengths: Array<number> = []
      let offset = 0
      for (const c of contents) {
        packed.set(c, offset)
        offset += c.byteLength
        lengths.push(c.byteLength)
      }
      const id = nextId++
      const reply = await new Promise<Reply | undefined>((resolve) => {
        pending.set(id, resolve)
        worker!.postMessage({ id, buffer: packed.buffer, lengths }, [packed.buffer])
      })
      if (reply?.buffer === undefined || reply.sizes === undefined || reply.encodings === undefined) {
        return undefined
      }
      const out = new Uint8Array(reply.buffer)
      const encoded: Array<Encoded> = []
      offset = 0
      for (let i = 0; i < reply.sizes.length; i++) {
        const size = reply.sizes[i]!
        const encoding = reply.encodings[i]!
        // A content kept as is is the caller's own buffer (the thread sent nothing back for it).
        encoded.push({ encoding, bytes: encoding === 0 ? contents[i]! : out.subarray(offset, offset + size) })
        offset += size
      }
      return encoded
    },
    spareBuffers: () => spare.length,
    close: async () => {
      const running = worker
      failed = true
      worker = undefined
      clearTimeout(dropSpare)
      spare.length = 0
      if (running !== undefined) {
        running.removeAllListeners("exit")
        await endWorker(running)
      }
      for (const resolve of pending.values()) resolve(undefined)
      pending.clear()
    },
  }
}
