/**
 * A repeat capture of a tree where nothing changed, without decoding the previous manifest: at
 * 27.7k files, decoding it (a few MB of JSON into an object per path, every one kept to the end of
 * the capture) was the largest piece of a cold capture's own work after the scan.
 *
 * The capture defers the manifest when its base point had no tombstones and a stat cache entry for
 * every file (`mayDeferManifest`: a cheap guess from the point's counts; it proves nothing). After
 * the scan, `matchBaseManifest` builds the manifest the full path would build from what it has
 * (every scanned entry a link, or a file the stat cache vouches for, and the stat cache holding no
 * other path) and hashes its canonical encoding (`encodeManifest`'s text, in pieces, never whole).
 * The stored manifest must be a full layer whose address is that hash (for one stored as pages,
 * `layerPages.ts`: the index of pages whose addresses are those of the pieces' encodings): then its
 * bytes are that encoding and decode to exactly that manifest, the full path would build the very
 * same one and find it unchanged (a full layer has no delta below it), and the point is the base's
 * manifest.
 * Anything else, and the capture takes the full path, with the bytes it read. The manifest is read
 * (and so checked) either way: a missing or damaged one fails the capture as the full path does.
 */
import type { ContentHash, PointCaptured, WorkspacePath } from "@rewind/contracts"
import { Effect } from "effect"
import { ArtifactStore } from "../ports/ArtifactStore.js"
import { hashContent, hashPieces } from "../workspace/contentHash.js"
import { cutPages, encodePageIndex, isPageIndex, LayerPaging } from "./layerPages.js"
import { MANIFEST_FORMAT } from "./manifestCodec.js"
import { sameStat } from "./pointBuild.js"
import type { StatCache } from "./pointManifest.js"
import type { ScanResult } from "./workspaceScan.js"

/** Whether the base point may have a manifest this capture can match without decoding it. */
export const mayDeferManifest = (base: PointCaptured, statCache: StatCache): boolean =>
  base.tombstones === 0 && base.files === statCache.size

export type BaseMatch =
  /** The tree is the base point's: its manifest (`manifest`: the bytes read), its counts. */
  | {
      readonly _tag: "Same"
      readonly files: number
      readonly links: number
      readonly bytes: number
      readonly manifest: Uint8Array
    }
  /** Decode the base manifest; `bytes`: its top layer, when it was read. */
  | { readonly _tag: "Differs"; readonly bytes?: Uint8Array }

const HEAD = `{"format":${JSON.stringify(MANIFEST_FORMAT)},"entries":[`
const TAIL = "]}"

/**
 * Whether the scan is the manifest stored at `manifestHash` (see the header). `statCache` is the
 * base point's; `maxFileBytes` as the capture's settings say (a file over it is not taken as is).
 */
export const matchBaseManifest = (
  scan: ScanResult,
  statCache: StatCache,
  manifestHash: ContentHash,
  maxFileBytes: number,
) =>
  Effect.gen(function* () {
    const differs: BaseMatch = { _tag: "Differs" }
    // The manifest the full path builds: a vouched file keeps the cache's hash, mode and size; a
    // link its target. Anything else (changed, new, over the size limit, not a regular file) is work
    // the full path does. Stops at the first such entry.
    // Every scanned path is a workspace path: the scan reports any other name as
    // `unsupported_name` and leaves it out (scanState.ts), so the encoding below is the decoder's.
    let links: Array<WorkspacePath> | undefined
    for (const [path, { stat, target }] of scan.entries) {
      if (stat.kind === "symlink" && target !== undefined) {
        if (links === undefined) links = []
        links.push(path)
        continue
      }
      if (stat.kind !== "file" || stat.size > maxFileBytes) return differs
      const cached = statCache.get(path)
      if (cached === undefined || !sameStat(cached, stat)) return differs
    }
    const linkCount = links?.length ?? 0
    // Every cached path scanned (each vouched file is a cached path, and the counts agree).
    if (scan.entries.size - linkCount !== statCache.size) return differs
    // Read (and so checked) as the full path reads it: a missing or damaged manifest fails both.
    const bytes = yield* (yield* ArtifactStore).get(manifestHash)
    const paged = isPageIndex(bytes)
    if (!paged && !startsWith(bytes, HEAD_BYTES)) return { _tag: "Differs", bytes } satisfies BaseMatch
    const paths = sortedPathsOf(statCache, links)
    let fileBytes = 0
    for (const cached of statCache.values()) fileBytes += cached.size
    // The text `encodeManifest` writes for the rows `start` to `end`, hashed a few kilobytes at a
    // time (whole rows, so a piece never ends inside a character).
    const textAddress = (start: number, end: number) =>
      hashPieces((put) => {
        let text = HEAD
        for (let i = start; i < end; i++) {
          const path = paths[i]!
          const cached = statCache.get(path)
          if (i > start) text += ","
          if (cached === undefined) text += JSON.stringify([path, "l", scan.entries.get(path)!.target])
          // What JSON.stringify gives for this row: a hash is hex and the numbers are finite (the
          // stat cache's decoders check both), so only the path needs escaping.
          else text += `[${JSON.stringify(path)},"f","${cached.hash}",${cached.mode},${cached.size}]`
          if (text.length >= PIECE) {
            put(text)
            text = ""
          }
        }
        put(text + TAIL)
      })
    // A paged manifest (`layerPages.ts`): each page's text by its address, then the index's (a
    // paging other than the store's gives another address: the full path then decides).
    const address = paged
      ? hashContent(
          encodePageIndex(
            cutPages(paths, yield* LayerPaging, (start, end) => ({
              hash: textAddress(start, end),
              tombstones: 0,
            })),
            undefined,
          ),
        )
      : textAddress(0, paths.length)
    // The same address: the same bytes (what every content address in the store rests on).
    if (address !== manifestHash) return { _tag: "Differs", bytes } satisfies BaseMatch
    return {
      _tag: "Same",
      files: statCache.size,
      links: linkCount,
      bytes: fileBytes,
      manifest: bytes,
    } satisfies BaseMatch
  })

/** The manifest's paths in its encoding's order (code unit order, as `sortedPaths`). */
const sortedPathsOf = (statCache: StatCache, links: ReadonlyArray<WorkspacePath> | undefined) => {
  const paths: Array<WorkspacePath> = [...statCache.keys()]
  if (links !== undefined) for (const l of links) paths.push(l)
  // A cache decoded whole is already in order (it is stored sorted); a delta appends out of order.
  for (let i = 1; i < paths.length; i++) if (!(paths[i - 1]! < paths[i]!)) return paths.sort()
  return paths
}

const HEAD_BYTES = new TextEncoder().encode(HEAD)
const PIECE = 1 << 16

const startsWith = (bytes: Uint8Array, head: Uint8Array) => {
  if (bytes.length < head.length) return false
  for (let i = 0; i < head.length; i++) if (bytes[i] !== head[i]) return false
  return true
}
