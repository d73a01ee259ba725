/**
 * The stat cache's stored form since format 2: binary and columnar (one block of paths, one of
 * hashes, then a column per field), full or a delta over a base layer. A capture loads the previous
 * stat cache whole, so its decode runs over every file of the tree at every capture: the JSON form
 * (`pointManifest.ts`, still read) cost a text decode of a few MB, a parse into an array per entry
 * and three decimal strings parsed into BigInts per entry; here the paths are one text decode and
 * a split, the hashes one, and the times are read as 64-bit integers.
 *
 * Invariants: a decode checks every field as strictly as the JSON decoder does (a path that is not
 * a workspace path, a hash that is not 64 lowercase hex digits, a size or mode that is not finite,
 * a truncated or over-long artifact all make it unreadable: `undefined`), so a damaged artifact
 * never vouches for a file. The encoder refuses (returns `undefined`, and the caller stores JSON)
 * what this form cannot hold exactly: a path with a NUL (never a valid workspace path) or a time or
 * inode outside 0..2^64-1. Every artifact starts with a NUL byte, which no JSON text does, so the
 * two forms cannot be confused.
 */
import { type ContentHash, type WorkspacePath, workspacePathProblem } from "@rewind/contracts"
import { isContentHash } from "../ports/ArtifactStore.js"
import type { Wanted } from "./layeredMaps.js"
import { parentAmong } from "./parentBytes.js"

/** What a stat cache remembers of a file whose hash is known (see `pointManifest.ts`). */
export interface StatCacheEntry {
  readonly size: number
  readonly mtimeNs: bigint
  /** Absent in a cache written before ctime was kept: such an entry never vouches (read once). */
  readonly ctimeNs?: bigint
  readonly inode: bigint
  readonly mode: number
  readonly hash: ContentHash
}

/** One stored layer: a full cache (no base) or a delta of changed entries and removed paths. */
export interface StatCacheLayer<Entries> {
  readonly base: ContentHash | undefined
  /** 0 for a full cache. */
  readonly depth: number
  readonly rules: string | undefined
  readonly entries: Entries
  readonly removed: ReadonlyArray<WorkspacePath>
}

/** What the encoder takes: the entries in the order to store them (sorted, for canonical bytes). */
export type StatCacheLayerToEncode = StatCacheLayer<ReadonlyArray<readonly [WorkspacePath, StatCacheEntry]>>

/** What the decoder gives. */
export type DecodedStatCacheLayer = StatCacheLayer<Map<WorkspacePath, StatCacheEntry>>

const MAGIC = [0x00, 0x52, 0x57, 0x53] // NUL "RWS"
const VERSION = 2
const HASH_LENGTH = 64
const U64_LIMIT = 1n << 64n

const utf8 = new TextEncoder()
// `fatal`: invalid UTF-8 is a malformed artifact, not text with replacement characters.
const text = new TextDecoder("utf-8", { fatal: true })

/** Whether `bytes` is in this form (it may still be malformed). */
export const isBinaryStatCache = (bytes: Uint8Array): boolean =>
  bytes.length >= MAGIC.length && MAGIC.every((b, i) => bytes[i] === b)

const fitsU64 = (n: bigint) => n >= 0n && n < U64_LIMIT

/** The bytes of `layer`, or `undefined` when this form cannot hold it exactly. */
export const encodeStatCacheLayer = (layer: StatCacheLayerToEncode): Uint8Array | undefined => {
  const { entries, removed } = layer
  const count = entries.length
  for (const [path, e] of entries) {
    if (path.includes("\0") || !Number.isFinite(e.size) || !Number.isFinite(e.mode)) return undefined
    if (!fitsU64(e.mtimeNs) || !fitsU64(e.inode) || (e.ctimeNs !== undefined && !fitsU64(e.ctimeNs)))
      return undefined
    if (!isContentHash(e.hash)) return undefined
  }
  if (removed.some((p) => p.includes("\0"))) return undefined
  const paths = utf8.encode(entries.map(([p]) => p).join("\0"))
  const removedPaths = utf8.encode(removed.join("\0"))
  const rules = layer.rules === undefined ? undefined : utf8.encode(layer.rules)
  const size =
    MAGIC.length +
    2 +
    (layer.base === undefined ? 0 : HASH_LENGTH + 4) +
    1 +
    (rules === undefined ? 0 : 4 + rules.length) +
    8 +
    paths.length +
    count * (HASH_LENGTH + 8 + 8 + 8 + 8 + 1 + 8) +
    8 +
    removedPaths.length
  const out = new Uint8Array(size)
  const view = new DataView(out.buffer)
  let at = 0
  const bytes = (b: Uint8Array) => {
    out.set(b, at)
    at += b.length
  }
  const u8 = (n: number) => {
    out[at++] = n
  }
  const u32 = (n: number) => {
    view.setUint32(at, n, true)
    at += 4
  }
  const ascii = (s: string) => {
    for (let i = 0; i < s.length; i++) out[at++] = s.charCodeAt(i)
  }
  bytes(Uint8Array.from(MAGIC))
  u8(VERSION)
  u8(layer.base === undefined ? 0 : 1)
  if (layer.base !== undefined) {
    if (!isContentHash(layer.base)) return undefined
    ascii(layer.base)
    u32(layer.depth)
  }
  u8(rules === undefined ? 0 : 1)
  if (rules !== undefined) {
    u32(rules.length)
    bytes(rules)
  }
  u32(count)
  u32(paths.length)
  bytes(paths)
  for (const [, e] of entries) ascii(e.hash)
  const f64 = (n: number) => {
    view.setFloat64(at, n, true)
    at += 8
  }
  const u64 = (n: bigint) => {
    view.setBigUint64(at, n, true)
    at += 8
  }
  for (const [, e] of entries) f64(e.size)
  for (const [, e] of entries) f64(e.mode)
  for (const [, e] of entries) u64(e.mtimeNs)
  for (const [, e] of entries) u64(e.inode)
  for (const [, e] of entries) u8(e.ctimeNs === undefined ? 0 : 1)
  for (const [, e] of entries) u64(e.ctimeNs ?? 0n)
  u32(removed.length)
  u32(removedPaths.length)
  bytes(removedPaths)
  return out
}

/** Thrown inside the decoder only; the decode answers `undefined`. */
class Malformed extends Error {}

const malformed = (): never => {
  throw new Malformed()
}

/**
 * `count` workspace paths from one NUL-separated text, every one checked; with `wanted`, only the
 * wanted ones are in the answer (the rest are holes) and checked. With `wanted.parents`, a path is
 * chosen on its bytes (its parent directory's bytes are one of theirs), and only the chosen ones are
 * decoded: a capture of one directory of a large tree then makes a handful of strings, not one per
 * file of the tree.
 */
const pathsOf = (raw: Uint8Array, count: number, wanted?: Wanted): Array<WorkspacePath> => {
  if (count === 0) return raw.length === 0 ? [] : malformed()
  if (wanted?.parents !== undefined) return chosenPaths(raw, count, wanted.parents)
  const paths = text.decode(raw).split("\0")
  if (paths.length !== count) malformed()
  // Each path asked of the test once: the answer holds only the wanted ones (holes elsewhere).
  const out: Array<WorkspacePath> = wanted === undefined ? (paths as Array<WorkspacePath>) : []
  paths.forEach((p, i) => {
    if (wanted !== undefined && !wanted(p, false)) return
    if (workspacePathProblem(p) !== undefined) malformed()
    out[i] = p as WorkspacePath
  })
  return out
}

const findByte = Uint8Array.prototype.indexOf

/** `pathsOf` for a test by parent directory, on the bytes (a sparse array: holes where not wanted). */
const chosenPaths = (raw: Uint8Array, count: number, parents: ReadonlyArray<string>) => {
  const childOf =
    parents.length === 0
      ? undefined
      : parentAmong(parents.map((p) => (p === "" ? new Uint8Array(0) : utf8.encode(`${p}/`))))
  // Sparse: only the chosen indices are set (no backing store for the rest).
  const paths: Array<WorkspacePath> = []
  let from = 0
  for (let i = 0; i < count; i++) {
    // The typed array's own `indexOf` (a Buffer's allocates per call: 27.7k calls at babel 1x).
    let to = findByte.call(raw, 0, from)
    if (to < 0) to = raw.length
    if (i === count - 1 ? to !== raw.length : to === raw.length) malformed()
    if (childOf?.(raw, from, to) === true) {
      const path = text.decode(raw.subarray(from, to))
      if (workspacePathProblem(path) !== undefined) malformed()
      paths[i] = path as WorkspacePath
    }
    from = to + 1
  }
  return paths
}

const HEX_TEXT = /^[0-9a-f]*$/

/** Whether `bytes[from, from + length)` is all lowercase hex digits. */
const allHex = (bytes: Uint8Array, from: number, length: number) => {
  for (let i = from; i < from + length; i++) {
    const c = bytes[i]!
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false
  }
  return true
}

/**
 * Decodes a layer in this form; `undefined` when it is malformed in any way (or not this form).
 * `maxDepth` bounds a delta's depth, as for the JSON form. With `wanted`, only the entries (and
 * removed paths) at the paths it wants are decoded and checked: what a capture of a few
 * directories needs of a whole tree's cache (`sealedCapture.ts`).
 */
export const decodeStatCacheLayer = (
  bytes: Uint8Array,
  maxDepth: number,
  wanted?: Wanted,
): DecodedStatCacheLayer | undefined => {
  if (!isBinaryStatCache(bytes)) return undefined
  try {
    return decodeUnchecked(bytes, maxDepth, wanted)
  } catch (e) {
    if (e instanceof Malformed || e instanceof RangeError || e instanceof TypeError) return undefined
    throw e
  }
}

const decodeUnchecked = (bytes: Uint8Array, maxDepth: number, wanted?: Wanted): DecodedStatCacheLayer => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let at = MAGIC.length
  // Every read is bounds-checked: a short artifact is malformed, never read past its end.
  const take = (n: number) => {
    if (n < 0 || at + n > bytes.length) malformed()
    const from = at
    at += n
    return from
  }
  const u8 = () => bytes[take(1)]!
  const u32 = () => view.getUint32(take(4), true)
  if (u8() !== VERSION) malformed()
  const kind = u8()
  if (kind !== 0 && kind !== 1) malformed()
  let base: ContentHash | undefined
  let depth = 0
  if (kind === 1) {
    const from = take(HASH_LENGTH)
    if (!allHex(bytes, from, HASH_LENGTH)) malformed()
    base = text.decode(bytes.subarray(from, from + HASH_LENGTH)) as ContentHash
    depth = u32()
    if (depth < 1 || depth > maxDepth) malformed()
  }
  const hasRules = u8()
  if (hasRules > 1) malformed()
  let rules: string | undefined
  if (hasRules === 1) {
    const length = u32()
    const from = take(length)
    rules = text.decode(bytes.subarray(from, from + length))
  }
  const count = u32()
  const pathBytes = u32()
  const pathsFrom = take(pathBytes)
  const paths = pathsOf(bytes.subarray(pathsFrom, pathsFrom + pathBytes), count, wanted)
  const hashesFrom = take(count * HASH_LENGTH)
  // One string for every hash, sliced per entry: all lowercase hex digits, so one character per
  // byte (checked by one pattern over the whole text, not byte by byte in a loop).
  // (Only the wanted ones, each on its own, when a few are wanted.)
  const hashes =
    wanted === undefined ? text.decode(bytes.subarray(hashesFrom, hashesFrom + count * HASH_LENGTH)) : ""
  if (wanted === undefined && !HEX_TEXT.test(hashes)) malformed()
  const hashAt = (i: number) =>
    (wanted === undefined
      ? hashes.slice(i * HASH_LENGTH, (i + 1) * HASH_LENGTH)
      : text.decode(
          bytes.subarray(hashesFrom + i * HASH_LENGTH, hashesFrom + (i + 1) * HASH_LENGTH),
        )) as ContentHash
  const sizes = take(count * 8)
  const modes = take(count * 8)
  const mtimes = take(count * 8)
  const inodes = take(count * 8)
  const hasCtime = take(count)
  const ctimes = take(count * 8)
  const entries = new Map<WorkspacePath, StatCacheEntry>()
  for (let i = 0; i < count; i++) {
    // With `wanted`, only its paths are in `paths`.
    if (paths[i] === undefined) continue
    if (wanted !== undefined && !allHex(bytes, hashesFrom + i * HASH_LENGTH, HASH_LENGTH)) malformed()
    const size = view.getFloat64(sizes + i * 8, true)
    const mode = view.getFloat64(modes + i * 8, true)
    if (!Number.isFinite(size) || !Number.isFinite(mode)) malformed()
    const mtimeNs = view.getBigUint64(mtimes + i * 8, true)
    const inode = view.getBigUint64(inodes + i * 8, true)
    const hash = hashAt(i)
    const flag = bytes[hasCtime + i]
    const entry: StatCacheEntry =
      flag === 0
        ? { size, mtimeNs, inode, mode, hash }
        : flag === 1
          ? { size, mtimeNs, inode, mode, hash, ctimeNs: view.getBigUint64(ctimes + i * 8, true) }
          : malformed()
    entries.set(paths[i]!, entry)
  }
  const removedCount = u32()
  const removedBytes = u32()
  const removedFrom = take(removedBytes)
  const removed = pathsOf(bytes.subarray(removedFrom, removedFrom + removedBytes), removedCount, wanted)
  if (at !== bytes.length) malformed()
  if (kind === 0 && removed.length > 0) malformed()
  return {
    base,
    depth,
    rules,
    entries,
    // Without its holes.
    removed: wanted === undefined ? removed : removed.filter((p) => p !== undefined),
  }
}
