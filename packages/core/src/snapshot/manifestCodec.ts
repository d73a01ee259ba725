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
import { parentAmong } from "./parentBytes.js"

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
 * Which rows of a full manifest `decodeManifestSubset` takes: asked of each row's path and whether
 * the row is a tombstone. `parents`, when given, answers for every row that is not a tombstone:
 * wanted exactly when its parent directory is one of these (the caller's test must agree); then
 * those rows are chosen on their bytes, without a string made for each.
 */
export type ManifestRowTest = ((path: string, tombstone: boolean) => boolean) & {
  readonly parents?: ReadonlyArray<string>
}

/**
 * The entries of a full manifest at the rows `wanted` wants, without parsing the rest: a capture of
 * a few directories (`sealedCapture.ts`) needs a handful of a tree's rows, and a decode of all of
 * them is most of what it would cost. Reads the canonical bytes `encodeManifest` writes, row by
 * row (a JSON string's `"` and `\\` never occur inside a UTF-8 sequence, so a row's strings end
 * where their bytes say); only a wanted row is decoded and parsed, and checked as `decodeManifest`
 * checks it. Anything not in that form (another writer's spacing, a damaged artifact) answers
 * `undefined`, and the caller decodes the whole manifest, which says what is wrong with it.
 */
export const decodeManifestSubset = (bytes: Uint8Array, wanted: ManifestRowTest): Manifest | undefined => {
  const head = encoder.encode(`{"format":"${MANIFEST_FORMAT}","entries":[`)
  if (bytes.length < head.length + 2 || head.some((b, i) => bytes[i] !== b)) return undefined
  // Each parent as the bytes of its JSON string's inside, with the `/` a child's path goes on with.
  const parents = wanted.parents?.map((p) =>
    encoder.encode(p === "" ? "" : `${JSON.stringify(p).slice(1, -1)}/`),
  )
  const out = new Map<WorkspacePath, ManifestEntry>()
  // The end of the JSON string opening at `from` (its closing quote), or -1.
  const stringEnd = (from: number) => {
    for (let i = from + 1; i < bytes.length; i++) {
      const c = bytes[i]!
      if (c === 92) i++
      else if (c === 34) return i
    }
    return -1
  }
  const childOf = parents === undefined ? undefined : parentAmong(parents)
  const text = (from: number, to: number) => decoder.decode(bytes.subarray(from, to))
  const end = (at: number) => bytes[at] === 93 && bytes[at + 1] === 125 && at + 2 === bytes.length
  let at = head.length
  if (end(at)) return out
  try {
    for (;;) {
      if (bytes[at] !== 91 || bytes[at + 1] !== 34) return undefined
      const pathEnd = stringEnd(at + 1)
      if (pathEnd < 0) return undefined
      // `,"k"` follows the path: the kind decides where the row ends (only a link's target is a
      // string that may hold a `]`).
      if (bytes[pathEnd + 1] !== 44 || bytes[pathEnd + 2] !== 34) return undefined
      const kind = bytes[pathEnd + 3]
      let rowEnd: number
      if (kind === 108) {
        const targetEnd = stringEnd(pathEnd + 6)
        if (targetEnd < 0) return undefined
        rowEnd = targetEnd + 1
      } else rowEnd = bytes.indexOf(93, pathEnd)
      if (rowEnd < 0 || bytes[rowEnd] !== 93) return undefined
      const tombstone = kind === 116
      const take =
        childOf !== undefined && !tombstone
          ? childOf(bytes, at + 2, pathEnd)
          : wanted(JSON.parse(text(at + 1, pathEnd + 1)) as string, tombstone)
      if (take) {
        const row = JSON.parse(text(at, rowEnd + 1)) as Array<unknown>
        const entry = Array.isArray(row) ? manifestEntryOf(row) : undefined
        if (entry === undefined) return undefined
        out.set(row[0] as WorkspacePath, entry)
      }
      at = rowEnd + 1
      if (bytes[at] === 44) {
        at++
        continue
      }
      return end(at) ? out : undefined
    }
  } catch {
    return undefined
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
