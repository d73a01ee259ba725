/**
 * The physical limits a capture or restore is held against, measured on the same machine in the
 * same run: walking the tree (readdir + lstat every entry), reading every file, SHA-256 of every
 * file's bytes in memory, reading and hashing every file, and replacing every file. Each is the
 * tightest plain single-threaded loop Node offers (one reused buffer, no per-file allocation), so a
 * capture that reads and hashes every file cannot beat `readHashAll`, and a restore that rewrites
 * every file cannot beat `replaceAll`. The page cache is warm (the tree was just generated or read).
 *
 * Files are replaced as git's checkout does it, unlink then create: overwriting in place with
 * O_TRUNC would make ext4 (auto_da_alloc) start writeback on close and measure the disk instead.
 */
import { createHash } from "node:crypto"
import {
  closeSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  unlinkSync,
  writeFileSync,
} from "node:fs"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import type { GeneratedFile, GeneratedWorkspace } from "../workspace/generator.js"

const CHUNK = 1 << 20

/** readdir + lstat of every entry under `root`; returns the number of regular files and their bytes. */
export const statWalk = (root: string): { files: number; bytes: number } => {
  let files = 0
  let bytes = 0
  const stack = [root]
  while (stack.length > 0) {
    const dir = stack.pop()!
    for (const name of readdirSync(dir)) {
      const abs = join(dir, name)
      const st = lstatSync(abs)
      if (st.isDirectory()) stack.push(abs)
      else if (st.isFile()) {
        files++
        bytes += st.size
      }
    }
  }
  return { files, bytes }
}

const eachChunk = (abs: string, buffer: Buffer, onChunk: (chunk: Buffer) => void): number => {
  const fd = openSync(abs, "r")
  try {
    let total = 0
    for (;;) {
      const n = readSync(fd, buffer, 0, buffer.length, null)
      if (n === 0) return total
      onChunk(buffer.subarray(0, n))
      total += n
    }
  } finally {
    closeSync(fd)
  }
}

/** Reads every file (bytes discarded); returns the bytes read. */
export const readAll = (root: string, files: ReadonlyArray<GeneratedFile>): number => {
  const buffer = Buffer.allocUnsafe(CHUNK)
  let bytes = 0
  for (const f of files) bytes += eachChunk(join(root, f.path), buffer, () => {})
  return bytes
}

/** Reads and SHA-256-hashes every file (one digest per file); returns the bytes hashed. */
export const readHashAll = (root: string, files: ReadonlyArray<GeneratedFile>): number => {
  const buffer = Buffer.allocUnsafe(CHUNK)
  let bytes = 0
  for (const f of files) {
    const hash = createHash("sha256")
    bytes += eachChunk(join(root, f.path), buffer, (chunk) => hash.update(chunk))
    hash.digest()
  }
  return bytes
}

/** At most this many bytes are held in memory for the in-memory hashing limit. */
export const HASH_SAMPLE_BYTES = 64 * 1024 * 1024

/**
 * The workspace's own bytes, loaded into memory for the hashing limit: the whole workspace when it
 * fits in HASH_SAMPLE_BYTES, else its first files up to that size (`scale` extrapolates to all).
 */
export const loadHashSample = (ws: GeneratedWorkspace): { buffers: Array<Buffer>; scale: number } => {
  const buffers: Array<Buffer> = []
  let loaded = 0
  for (const f of ws.files) {
    if (loaded + f.size > HASH_SAMPLE_BYTES && buffers.length > 0) break
    const b = readFileSync(join(ws.root, f.path))
    buffers.push(b)
    loaded += b.length
  }
  return { buffers, scale: ws.totalBytes / loaded }
}

/** SHA-256 of each buffer; returns the time scaled to the whole workspace (ms). */
export const hashBuffers = (sample: { buffers: ReadonlyArray<Buffer>; scale: number }): number => {
  const started = performance.now()
  for (const b of sample.buffers) createHash("sha256").update(b).digest()
  return (performance.now() - started) * sample.scale
}

/** Replaces a file: unlink (if present), then create and write. */
export const replaceFile = (abs: string, bytes: Uint8Array): void => {
  try {
    unlinkSync(abs)
  } catch {
    // absent: nothing to unlink
  }
  writeFileSync(abs, bytes)
}

/**
 * Prepares a scratch tree with the workspace's directories, and returns a writer that replaces
 * every file of the layout in it (its exact size, from one reused text buffer).
 */
export const prepareReplaceAll = (scratchRoot: string, ws: GeneratedWorkspace): (() => number) => {
  for (const d of ws.directories) mkdirSync(join(scratchRoot, d), { recursive: true })
  const maxSize = ws.files.reduce((m, f) => Math.max(m, f.size), 0)
  const text = Buffer.alloc(maxSize, "const value = state.next(entry)\n")
  return () => {
    let bytes = 0
    for (const f of ws.files) {
      replaceFile(join(scratchRoot, f.path), text.subarray(0, f.size))
      bytes += f.size
    }
    return bytes
  }
}
