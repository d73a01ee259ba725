/**
 * Reads a store's identity (application_id and user_version) from its bytes, without SQLite.
 *
 * Opening a file with SQLite is never free of writes: the first connection rebuilds the `-shm`
 * index, and the last one to close a read-write connection checkpoints the `-wal` into the main
 * file and deletes both. A store that must be refused (written by a newer Rewind, or by another
 * application) has to be recognised before that, so this reads the header of page 1 as the main
 * file holds it and, when a `-wal` holds a newer committed page 1, as the WAL holds it: the same
 * frames SQLite's own recovery would accept (salts matching the WAL header, cumulative checksums
 * valid, up to the last commit frame). Only reads; a file it cannot make sense of answers
 * `undefined`, and SQLite's own (read-only) checks then decide.
 */
import * as fs from "node:fs"

export interface StoreHeader {
  readonly applicationId: number
  readonly userVersion: number
}

const WAL_HEADER = 32
const FRAME_HEADER = 24
const USER_VERSION_OFFSET = 60
const APPLICATION_ID_OFFSET = 68
const HEADER_BYTES = 100

/**
 * The fields, from a header that looks like SQLite wrote it (the payload fractions at bytes 21–23
 * are fixed at 64, 32, 32); a damaged header is left for SQLite to call corrupt.
 */
const fields = (page1: Buffer): StoreHeader | undefined =>
  page1[21] === 64 && page1[22] === 32 && page1[23] === 32
    ? {
        userVersion: page1.readInt32BE(USER_VERSION_OFFSET),
        applicationId: page1.readInt32BE(APPLICATION_ID_OFFSET),
      }
    : undefined

const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1

/** SQLite's WAL checksum over `data` (a multiple of 8 bytes), continuing from `s`. */
const checksum = (data: Buffer, bigEndian: boolean, s: [number, number]): [number, number] => {
  let s0 = s[0]
  let s1 = s[1]
  if (bigEndian !== LITTLE_ENDIAN_HOST && data.byteOffset % 4 === 0) {
    // The words are in this machine's order: read them as they lie (the common case, and fast).
    const words = new Uint32Array(data.buffer, data.byteOffset, data.length >>> 2)
    for (let i = 0; i + 1 < words.length; i += 2) {
      s0 = (s0 + words[i]! + s1) >>> 0
      s1 = (s1 + words[i + 1]! + s0) >>> 0
    }
    return [s0, s1]
  }
  for (let i = 0; i + 8 <= data.length; i += 8) {
    const x0 = bigEndian ? data.readUInt32BE(i) : data.readUInt32LE(i)
    const x1 = bigEndian ? data.readUInt32BE(i + 4) : data.readUInt32LE(i + 4)
    s0 = (s0 + x0 + s1) >>> 0
    s1 = (s1 + x1 + s0) >>> 0
  }
  return [s0, s1]
}

/** Frames read per system call. */
const FRAMES_PER_READ = 256

/** The first bytes of the newest committed page 1 in the WAL, or undefined when it holds none. */
const walPage1 = (fd: number): Buffer | undefined => {
  const header = Buffer.alloc(WAL_HEADER)
  if (fs.readSync(fd, header, 0, WAL_HEADER, 0) < WAL_HEADER) return undefined
  const magic = header.readUInt32BE(0)
  if (magic !== 0x377f0682 && magic !== 0x377f0683) return undefined
  const bigEndian = (magic & 1) === 1
  const pageSize = header.readUInt32BE(8)
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) return undefined
  const salt1 = header.readUInt32BE(16)
  const salt2 = header.readUInt32BE(20)
  let sum = checksum(header.subarray(0, 24), bigEndian, [0, 0])
  if (sum[0] !== header.readUInt32BE(24) || sum[1] !== header.readUInt32BE(28)) return undefined
  // A chunk of frames at a time, so a large WAL is never held in memory at once.
  const frameSize = FRAME_HEADER + pageSize
  const chunk = Buffer.alloc(frameSize * FRAMES_PER_READ)
  let pending: Buffer | undefined
  let committed: Buffer | undefined
  for (let at = WAL_HEADER; ; ) {
    const read = fs.readSync(fd, chunk, 0, chunk.length, at)
    const frames = Math.floor(read / frameSize)
    for (let n = 0; n < frames; n++) {
      const frame = chunk.subarray(n * frameSize, (n + 1) * frameSize)
      if (frame.readUInt32BE(8) !== salt1 || frame.readUInt32BE(12) !== salt2) return committed
      sum = checksum(frame.subarray(FRAME_HEADER), bigEndian, checksum(frame.subarray(0, 8), bigEndian, sum))
      if (sum[0] !== frame.readUInt32BE(16) || sum[1] !== frame.readUInt32BE(20)) return committed
      if (frame.readUInt32BE(0) === 1) {
        pending = Buffer.from(frame.subarray(FRAME_HEADER, FRAME_HEADER + HEADER_BYTES))
      }
      // A commit frame: every frame up to here is part of the database.
      if (frame.readUInt32BE(4) !== 0) committed = pending ?? committed
    }
    if (frames < FRAMES_PER_READ) return committed
    at += frames * frameSize
  }
}

const withFile = <A>(path: string, body: (fd: number) => A): A => {
  const fd = fs.openSync(path, "r")
  try {
    return body(fd)
  } finally {
    fs.closeSync(fd)
  }
}

/** The store's identity as SQLite would read it now; undefined when the bytes do not say. */
export const readStoreHeader = (path: string): StoreHeader | undefined => {
  try {
    const main = withFile(path, (fd) => {
      const buffer = Buffer.alloc(HEADER_BYTES)
      return fs.readSync(fd, buffer, 0, HEADER_BYTES, 0) < HEADER_BYTES ? undefined : buffer
    })
    if (main === undefined) return undefined
    const walPath = `${path}-wal`
    const wal = fs.existsSync(walPath) ? withFile(walPath, walPage1) : undefined
    return fields(wal ?? main)
  } catch {
    return undefined
  }
}
