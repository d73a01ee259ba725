/**
 * The stat cache's full-map codec: what a capture remembers of each file whose hash is known.
 * Written binary and columnar (`statCacheBinary.ts`), or as JSON (format 1) for the rare cache the
 * binary form cannot hold exactly; the JSON form is still read so a store written before keeps
 * working, and a delta may sit on a layer of either form. A decode checks every field; anything malformed is `undefined`, never a partial map.
 */
import { type ContentHash, type WorkspacePath, workspacePathProblem } from "@rewind/contracts"
import { isContentHash } from "../ports/ArtifactStore.js"
import { type FullMap, MAX_DEPTH, sortedPaths } from "./layeredMaps.js"
import {
  decodeStatCacheLayer,
  encodeStatCacheLayer,
  isBinaryStatCache,
  type StatCacheEntry,
} from "./statCacheBinary.js"

export type { StatCacheEntry } from "./statCacheBinary.js"

const STAT_CACHE_FORMAT = "rewind-stat-cache/1"

const encoder = new TextEncoder()
const decoder = new TextDecoder()

export type StatCache = ReadonlyMap<WorkspacePath, StatCacheEntry>

export const statCacheRow = (path: WorkspacePath, e: StatCacheEntry): Array<unknown> => [
  path,
  e.size,
  e.mtimeNs.toString(),
  e.inode.toString(),
  e.mode,
  e.hash,
  ...(e.ctimeNs === undefined ? [] : [e.ctimeNs.toString()]),
]

/**
 * The full (not delta) encoding of a stat cache. `rules` is the identity of the ignore rules the
 * capture's scan decided under (`workspaceScan.ts`), kept so the next capture may reuse its
 * decisions; a cache without it offers none. Binary (`statCacheBinary.ts`), or JSON for the rare
 * cache that form cannot hold exactly.
 */
export const encodeStatCache = (cache: StatCache, rules?: string): Uint8Array =>
  encodeStatCacheLayer({
    base: undefined,
    depth: 0,
    rules,
    entries: sortedPaths(cache).map((path) => [path, cache.get(path)!] as const),
    removed: [],
  }) ?? encodeStatCacheJson(cache, rules)

const encodeStatCacheJson = (cache: StatCache, rules: string | undefined): Uint8Array =>
  encoder.encode(
    JSON.stringify({
      format: STAT_CACHE_FORMAT,
      ...(rules === undefined ? {} : { rules }),
      entries: sortedPaths(cache).map((path) => statCacheRow(path, cache.get(path)!)),
    }),
  )

/** Whether `s` is a non-empty run of ASCII digits (what `BigInt` is then sure to read as decimal). */
const isDigits = (s: string): boolean => {
  if (s.length === 0) return false
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 48 || c > 57) return false
  }
  return true
}

// Run for every file of the tree when a capture loads the previous stat cache: one object per
// entry (no spread of a first one), digits checked without a regex.
export const statCacheEntryOf = (raw: Array<unknown>): StatCacheEntry | undefined => {
  const [path, size, mtime, inode, mode, hash, ctime] = raw
  if (typeof path !== "string" || workspacePathProblem(path) !== undefined) return undefined
  if (typeof hash !== "string" || !isContentHash(hash)) return undefined
  if (typeof size !== "number" || typeof mode !== "number") return undefined
  if (typeof mtime !== "string" || typeof inode !== "string") return undefined
  if (!isDigits(mtime) || !isDigits(inode)) return undefined
  if (ctime === undefined)
    return { size, mtimeNs: BigInt(mtime), inode: BigInt(inode), mode, hash: hash as ContentHash }
  if (typeof ctime !== "string" || !isDigits(ctime)) return undefined
  return {
    size,
    mtimeNs: BigInt(mtime),
    inode: BigInt(inode),
    mode,
    hash: hash as ContentHash,
    ctimeNs: BigInt(ctime),
  }
}

export const decodeStatCache = (bytes: Uint8Array): StatCache | undefined =>
  decodeStatCacheWithRules(bytes)?.map

export const decodeStatCacheWithRules = (bytes: Uint8Array): FullMap<StatCacheEntry> | undefined => {
  if (isBinaryStatCache(bytes)) {
    const layer = decodeStatCacheLayer(bytes, MAX_DEPTH)
    if (layer === undefined || layer.base !== undefined) return undefined
    return layer.rules === undefined ? { map: layer.entries } : { map: layer.entries, rules: layer.rules }
  }
  try {
    const parsed = JSON.parse(decoder.decode(bytes)) as {
      format?: unknown
      entries?: unknown
      rules?: unknown
    }
    if (parsed.format !== STAT_CACHE_FORMAT || !Array.isArray(parsed.entries)) return undefined
    if (parsed.rules !== undefined && typeof parsed.rules !== "string") return undefined
    const out = new Map<WorkspacePath, StatCacheEntry>()
    for (const raw of parsed.entries as Array<Array<unknown>>) {
      const entry = Array.isArray(raw) ? statCacheEntryOf(raw) : undefined
      if (entry === undefined) return undefined
      out.set(raw[0] as WorkspacePath, entry)
    }
    return parsed.rules === undefined ? { map: out } : { map: out, rules: parsed.rules }
  } catch {
    return undefined
  }
}

export const sameStatCacheEntry = (a: StatCacheEntry, b: StatCacheEntry | undefined): boolean =>
  a === b ||
  (b !== undefined &&
    a.size === b.size &&
    a.mtimeNs === b.mtimeNs &&
    a.inode === b.inode &&
    a.mode === b.mode &&
    a.hash === b.hash)
