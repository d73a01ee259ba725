/**
 * The manifest codec: path → file (content hash + mode) | link (target) | tombstone (recorded as
 * absent), stored as canonical JSON (paths sorted, fixed key order), so equal workspaces give
 * byte-equal manifests with equal addresses and an unchanged workspace reuses the previous
 * manifest. A decode checks every field; anything malformed is `undefined`, never a partial map.
 * How manifests are layered into deltas and stored is `pointManifest.ts`.
 */
import { type ContentHash, type WorkspacePath, workspacePathProblem } from "@rewind/contracts"
import { isContentHash } from "../ports/ArtifactStore.js"
import { sortedPaths } from "./layeredMaps.js"

export type ManifestEntry =
  | { readonly kind: "file"; readonly hash: ContentHash; readonly mode: number; readonly size: number }
  | { readonly kind: "link"; readonly target: string }
  | { readonly kind: "tombstone" }

export type Manifest = ReadonlyMap<WorkspacePath, ManifestEntry>

export const MANIFEST_FORMAT = "rewind-manifest/1"

const encoder = new TextEncoder()
const decoder = new TextDecoder()

export const manifestRow = (path: WorkspacePath, e: ManifestEntry): Array<unknown> => {
  switch (e.kind) {
    case "file":
      return [path, "f", e.hash, e.mode, e.size]
    case "link":
      return [path, "l", e.target]
    default:
      return [path, "t"]
  }
}

/** The full (not delta) encoding of a manifest. */
export const encodeManifest = (manifest: Manifest): Uint8Array =>
  encoder.encode(
    JSON.stringify({
      format: MANIFEST_FORMAT,
      entries: sortedPaths(manifest).map((path) => manifestRow(path, manifest.get(path)!)),
    }),
  )
export const manifestEntryOf = (raw: Array<unknown>): ManifestEntry | undefined => {
  const [path, kind] = raw
  if (typeof path !== "string" || workspacePathProblem(path) !== undefined) return undefined
  if (kind === "f") {
    const [, , hash, mode, size] = raw
    if (typeof hash !== "string" || !isContentHash(hash)) return undefined
    if (typeof mode !== "number" || typeof size !== "number") return undefined
    return { kind: "file", hash: hash as ContentHash, mode, size }
  }
  if (kind === "l") return typeof raw[2] === "string" ? { kind: "link", target: raw[2] } : undefined
  if (kind === "t") return { kind: "tombstone" }
  return undefined
}

/** Decodes a manifest, checking every field; a malformed one is `undefined` (treated as unreadable). */
export const decodeManifest = (bytes: Uint8Array): Manifest | undefined => {
  try {
    const parsed = JSON.parse(decoder.decode(bytes)) as { format?: unknown; entries?: unknown }
    if (parsed.format !== MANIFEST_FORMAT || !Array.isArray(parsed.entries)) return undefined
    const out = new Map<WorkspacePath, ManifestEntry>()
    for (const raw of parsed.entries as Array<Array<unknown>>) {
      const entry = Array.isArray(raw) ? manifestEntryOf(raw) : undefined
      if (entry === undefined) return undefined
      out.set(raw[0] as WorkspacePath, entry)
    }
    return out
  } catch {
    return undefined
  }
}

/**
 * The entries of a full manifest at the paths `wanted` wants, without parsing the rest: a capture
 * of a few directories (`sealedCapture.ts`) needs a handful of a tree's rows, and a parse of all of
 * them is most of what it would cost. Reads the canonical text `encodeManifest` writes, row by row:
 * each row's path is read as the JSON string it is, and only a wanted row is parsed, and checked
 * as `decodeManifest` checks it. Anything not in that form (another writer's spacing, a damaged
 * artifact) answers `undefined`, and the caller decodes the whole manifest, which says what is
 * wrong with it.
 */
export const decodeManifestSubset = (
  bytes: Uint8Array,
  /** Asked of each row's path, and whether the row is a tombstone (`t`). */
  wanted: (path: string, tombstone: boolean) => boolean,
): Manifest | undefined => {
  let text: string
  try {
    text = decoder.decode(bytes)
  } catch {
    return undefined
  }
  const head = `{"format":"${MANIFEST_FORMAT}","entries":[`
  if (!text.startsWith(head)) return undefined
  const out = new Map<WorkspacePath, ManifestEntry>()
  // The end of the JSON string opening at `from` (its closing quote), or -1.
  const stringEnd = (from: number) => {
    for (let i = from + 1; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (c === 92) i++
      else if (c === 34) return i
    }
    return -1
  }
  let at = head.length
  if (text.startsWith("]}", at)) return at + 2 === text.length ? out : undefined
  for (;;) {
    if (text.charCodeAt(at) !== 91 || text.charCodeAt(at + 1) !== 34) return undefined
    const pathEnd = stringEnd(at + 1)
    if (pathEnd < 0) return undefined
    // `,"k"` follows the path: the kind decides where the row ends (only a link's target is a
    // string that may hold a `]`).
    if (text.charCodeAt(pathEnd + 1) !== 44 || text.charCodeAt(pathEnd + 2) !== 34) return undefined
    const kind = text.charCodeAt(pathEnd + 3)
    let rowEnd: number
    if (kind === 108) {
      const targetEnd = stringEnd(pathEnd + 6)
      if (targetEnd < 0) return undefined
      rowEnd = targetEnd + 1
    } else rowEnd = text.indexOf("]", pathEnd)
    if (rowEnd < 0 || text.charCodeAt(rowEnd) !== 93) return undefined
    const raw = text.slice(at + 2, pathEnd)
    let path: string
    try {
      path = raw.includes("\\") ? (JSON.parse(`"${raw}"`) as string) : raw
    } catch {
      return undefined
    }
    if (wanted(path, kind === 116)) {
      let row: unknown
      try {
        row = JSON.parse(text.slice(at, rowEnd + 1))
      } catch {
        return undefined
      }
      const entry = Array.isArray(row) ? manifestEntryOf(row) : undefined
      if (entry === undefined) return undefined
      out.set(path as WorkspacePath, entry)
    }
    at = rowEnd + 1
    if (text.charCodeAt(at) === 44) {
      at++
      continue
    }
    return text.startsWith("]}", at) && at + 2 === text.length ? out : undefined
  }
}

export const sameManifestEntry = (a: ManifestEntry, b: ManifestEntry | undefined): boolean => {
  if (a === b) return true
  if (b === undefined || a.kind !== b.kind) return false
  if (a.kind === "file")
    return b.kind === "file" && a.hash === b.hash && a.mode === b.mode && a.size === b.size
  if (a.kind === "link") return b.kind === "link" && a.target === b.target
  return true
}

/** The content hashes a manifest refers to (GC marks them). */
export const manifestBlobs = (manifest: Manifest): ReadonlyArray<ContentHash> => {
  const out: Array<ContentHash> = []
  for (const e of manifest.values()) if (e.kind === "file") out.push(e.hash)
  return out
}
