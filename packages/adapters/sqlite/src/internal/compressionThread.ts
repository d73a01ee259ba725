/**
 * Deflate on a worker thread, for large batches of blobs (a capture stores thousands of files in
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

/** How a blob is stored: 0 as is, 1 raw deflate (see artifactStore.ts). */
export interface Encoded {
  readonly encoding: number
  readonly bytes: Uint8Array
}

export interface CompressionThread {
  /**
   * Whether the thread is up and waiting for work; the first call starts it. A caller with work
   * now compresses it itself while the thread starts (a start costs ~55 ms, more than a batch).
   */
  readonly ready: () => boolean
  /** The stored forms of `contents`, or `undefined` when the thread is unavailable. */
  readonly encode: (contents: ReadonlyArray<Uint8Array>) => Promise<Array<Encoded> | undefined>
  readonly close: () => Promise<void>
}

export interface CompressionSettings {
  /** Contents below this many bytes are stored as they are. */
  readonly compressFromBytes: number
  readonly level: number
}

// CommonJS, evaluated in the worker. The reply packs the deflated forms back to back, with every
// entry's encoding and length; a content kept as is comes back empty (the caller has it already).
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads")
const { deflateRawSync } = require("node:zlib")
const { compressFromBytes, level } = workerData
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
        const deflated = deflateRawSync(content, { level })
        if (deflated.byteLength <= length - (length >> 3)) {
          out = deflated
          encoding = 1
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
    parentPort.postMessage({ id, buffer: packed.buffer, sizes, encodings }, [packed.buffer])
  } catch (error) {
    parentPort.postMessage({ id, error: String(error) })
  }
})
`

interface Reply {
  readonly id: number
  readonly buffer?: ArrayBuffer
  readonly sizes?: ReadonlyArray<number>
  readonly encodings?: ReadonlyArray<number>
  readonly error?: string
}

export const makeCompressionThread = (settings: CompressionSettings): CompressionThread => {
  let worker: Worker | undefined
  let failed = false
  let nextId = 0
  const pending = new Map<number, (reply: Reply | undefined) => void>()
  const up = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT))

  const fail = () => {
    failed = true
    worker = undefined
    for (const resolve of pending.values()) resolve(undefined)
    pending.clear()
  }

  const start = () => {
    const started = startEvalWorker(WORKER_SOURCE, { ...settings, up: up.buffer })
    started.on("message", (reply: Reply) => {
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
    ready: () => started() && Atomics.load(up, 0) === 1,
    encode: async (contents) => {
      if (!started()) return undefined
      let total = 0
      for (const c of contents) total += c.byteLength
      const packed = new Uint8Array(total)
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
    close: async () => {
      const running = worker
      failed = true
      worker = undefined
      if (running !== undefined) {
        running.removeAllListeners("exit")
        await endWorker(running)
      }
      for (const resolve of pending.values()) resolve(undefined)
      pending.clear()
    },
  }
}
