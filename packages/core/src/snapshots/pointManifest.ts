/**
 * The manifest of a point: path → file (content hash + mode) | link (target) | tombstone (recorded
 * as absent). It is stored as an artifact of canonical JSON (paths sorted, fixed key order), so
 * equal workspaces give byte-equal manifests with equal addresses and an unchanged workspace
 * reuses the previous manifest. Also the stat cache, stored the same way.
 */
import { type ContentHash, type WorkspacePath, workspacePathProblem } from "@rewind/contracts"
import { Effect, Schema } from "effect"
import { ArtifactStore } from "../ports/ArtifactStore.js"

export type ManifestEntry =
  | { readonly kind: "file"; readonly hash: ContentHash; readonly mode: number; readonly size: number }
  | { readonly kind: "link"; readonly target: string }
  | { readonly kind: "tombstone" }

export type Manifest = ReadonlyMap<WorkspacePath, ManifestEntry>

const MANIFEST_FORMAT = "rewind-manifest/1"
const STAT_CACHE_FORMAT = "rewind-stat-cache/1"

const encoder = new TextEncoder()
const decoder = new TextDecoder()

const sortedPaths = <V>(map: ReadonlyMap<WorkspacePath, V>) =>
  [...map.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))

export const encodeManifest = (manifest: Manifest): Uint8Array => {
  const entries = sortedPaths(manifest).map((path) => {
    const e = manifest.get(path)!
    switch (e.kind) {
      case "file":
        return [path, "f", e.hash, e.mode, e.size]
      case "link":
        return [path, "l", e.target]
      default:
        return [path, "t"]
    }
  })
  return encoder.encode(JSON.stringify({ format: MANIFEST_FORMAT, entries }))
}

const HASH = /^[0-9a-f]{64}$/

/** Decodes a manifest, checking every field; a malformed one is `undefined` (treated as unreadable). */
export const decodeManifest = (bytes: Uint8Array): Manifest | undefined => {
  try {
    const parsed = JSON.parse(decoder.decode(bytes)) as { format?: unknown; entries?: unknown }
    if (parsed.format !== MANIFEST_FORMAT || !Array.isArray(parsed.entries)) return undefined
    const out = new Map<WorkspacePath, ManifestEntry>()
    for (const raw of parsed.entries as Array<Array<unknown>>) {
      const [path, kind] = raw
      if (typeof path !== "string" || workspacePathProblem(path) !== undefined) return undefined
      const p = path as WorkspacePath
      if (kind === "f") {
        const [, , hash, mode, size] = raw
        if (typeof hash !== "string" || !HASH.test(hash)) return undefined
        if (typeof mode !== "number" || typeof size !== "number") return undefined
        out.set(p, { kind: "file", hash: hash as ContentHash, mode, size })
      } else if (kind === "l") {
        if (typeof raw[2] !== "string") return undefined
        out.set(p, { kind: "link", target: raw[2] })
      } else if (kind === "t") out.set(p, { kind: "tombstone" })
      else return undefined
    }
    return out
  } catch {
    return undefined
  }
}

/** What the stat cache remembers of a file whose hash is known. */
export interface StatCacheEntry {
  readonly size: number
  readonly mtimeNs: bigint
  readonly inode: bigint
  readonly mode: number
  readonly hash: ContentHash
}

export type StatCache = ReadonlyMap<WorkspacePath, StatCacheEntry>

export const encodeStatCache = (cache: StatCache): Uint8Array =>
  encoder.encode(
    JSON.stringify({
      format: STAT_CACHE_FORMAT,
      entries: sortedPaths(cache).map((path) => {
        const e = cache.get(path)!
        return [path, e.size, e.mtimeNs.toString(), e.inode.toString(), e.mode, e.hash]
      }),
    }),
  )

export const decodeStatCache = (bytes: Uint8Array): StatCache | undefined => {
  try {
    const parsed = JSON.parse(decoder.decode(bytes)) as { format?: unknown; entries?: unknown }
    if (parsed.format !== STAT_CACHE_FORMAT || !Array.isArray(parsed.entries)) return undefined
    const out = new Map<WorkspacePath, StatCacheEntry>()
    for (const [path, size, mtime, inode, mode, hash] of parsed.entries as Array<Array<unknown>>) {
      if (typeof path !== "string" || typeof hash !== "string" || !HASH.test(hash)) return undefined
      if (typeof size !== "number" || typeof mode !== "number") return undefined
      if (typeof mtime !== "string" || typeof inode !== "string") return undefined
      out.set(path as WorkspacePath, {
        size,
        mtimeNs: BigInt(mtime),
        inode: BigInt(inode),
        mode,
        hash: hash as ContentHash,
      })
    }
    return out
  } catch {
    return undefined
  }
}

/** Reads and decodes a manifest artifact; fails with a message when it is missing or malformed. */
export const loadManifest = (hash: ContentHash) =>
  Effect.gen(function* () {
    const artifacts = yield* ArtifactStore
    const bytes = yield* artifacts.get(hash)
    const manifest = decodeManifest(bytes)
    if (manifest === undefined) {
      return yield* new ManifestUnreadable({ hash, message: `artifact ${hash} is not a Rewind manifest` })
    }
    return manifest
  })

/** A manifest or stat-cache artifact that is not what it should be: treated as unreadable, never as empty. */
export class ManifestUnreadable extends Schema.TaggedError<ManifestUnreadable>()("ManifestUnreadable", {
  hash: Schema.String,
  message: Schema.String,
}) {}

/** The content hashes a manifest refers to (GC marks them). */
export const manifestBlobs = (manifest: Manifest): ReadonlyArray<ContentHash> => {
  const out: Array<ContentHash> = []
  for (const e of manifest.values()) if (e.kind === "file") out.push(e.hash)
  return out
}
