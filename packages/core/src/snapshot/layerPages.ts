/**
 * A full layer stored as pages (`layeredMaps.ts`; manifests and stat caches): a map of many
 * entries is cut, in path order, into pages of about a thousand entries, each stored as a full
 * layer of its own in the codec's form, and the map's address is that of a small index naming each
 * page by its first and last path, its address, its count of entries and of tombstones. A capture
 * that changed a few directories (`sealedCapture.ts`) then reads and inflates the pages that can
 * hold their entries instead of the whole tree's map: at babel's shape a 4.9 MB manifest inflated
 * whole at every such capture (~60 ms and ~18 MB in a cold process; ~0.3 s and ~43 MB at four
 * copies), where one or two pages are a few hundred kilobytes; and what a delta over a stat cache
 * needs of its base (depth, rules) is in the index, not in a 5.5 MB artifact.
 *
 * Invariants:
 * - the pages and the index are a function of the map alone: a page ends after a path whose hash
 *   falls on the cut (`Paging.average`), or at `Paging.most` entries, never before `minimum`; so an
 *   equal map is an equal index at an equal address (what `unchangedManifest.ts` rests on), and a
 *   change moves the cuts near it only, leaving the other pages as they were (stored once);
 * - the pages are disjoint and in order (each first path after the last page's last), and a page
 *   read whole holds exactly its count: an index or page that says otherwise is unreadable, never
 *   taken in part;
 * - every page is one of the map's layers (`Layered.layers`): what cleanup keeps while the map is a
 *   root, whichever pages a load read.
 */
import { type ContentHash, type WorkspacePath, workspacePathProblem } from "@rewind/contracts"
import { Context } from "effect"
import { isContentHash } from "../ports/ArtifactStore.js"
import { hashContent } from "../workspace/contentHash.js"

export const PAGES_FORMAT = "rewind-layer-pages/1"

/** How full maps are paged: more than `from` entries, pages of `average` on the mean, at most `most`. */
export interface Paging {
  readonly from: number
  readonly average: number
  readonly most: number
}

/**
 * The paging a store writes full maps with (what a test sets small, so that trees of a few files
 * are paged too). An index names its pages itself: a store reads any paging.
 */
export class LayerPaging extends Context.Reference<LayerPaging>()("@rewind/core/LayerPaging", {
  defaultValue: (): Paging => ({ from: 4096, average: 1024, most: 4096 }),
}) {}

/** A page as an index names it. */
export interface PageRef {
  readonly first: string
  readonly last: string
  readonly hash: ContentHash
  readonly entries: number
  readonly tombstones: number
}

/** A page made to be stored: its bytes beside what the index says of it. */
export interface StoredPage extends PageRef {
  readonly bytes: Uint8Array
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()
const HEAD = encoder.encode(`{"format":"${PAGES_FORMAT}"`)

/** FNV-1a of a path's UTF-16 code units: where a page may end. */
const cutHash = (path: string) => {
  let h = 0x811c9dc5
  for (let i = 0; i < path.length; i++) {
    h ^= path.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

/** The end (exclusive) of each page over `paths` (sorted), by `paging`. */
export const pageEnds = (paths: ReadonlyArray<string>, paging: Paging): Array<number> => {
  const minimum = Math.max(1, paging.average >> 4)
  const ends: Array<number> = []
  let start = 0
  for (let i = 0; i < paths.length; i++) {
    const length = i - start + 1
    if (length >= paging.most || (length >= minimum && cutHash(paths[i]!) % paging.average === 0)) {
      ends.push(i + 1)
      start = i + 1
    }
  }
  if (start < paths.length) ends.push(paths.length)
  return ends
}

/** The index's bytes: canonical (fixed key order), so an equal map has an equal address. */
export const encodePageIndex = (pages: ReadonlyArray<PageRef>, rules: string | undefined): Uint8Array =>
  encoder.encode(
    JSON.stringify({
      format: PAGES_FORMAT,
      ...(rules === undefined ? {} : { rules }),
      pages: pages.map((p) => [p.first, p.last, p.hash, p.entries, p.tombstones]),
    }),
  )

/**
 * The pages over `paths` (sorted), cut by `paging`: each with its range and count, and what
 * `describe` says of the rows `start` to `end` (its address and tombstones; what storing it needs).
 * The one place the cuts are made into pages: a store's and the unchanged-tree shortcut's
 * (`unchangedManifest.ts`) must agree for an equal map to have an equal address.
 */
export const cutPages = <P extends Pick<PageRef, "hash" | "tombstones">>(
  paths: ReadonlyArray<string>,
  paging: Paging,
  describe: (start: number, end: number) => P,
): Array<P & PageRef> => {
  let start = 0
  return pageEnds(paths, paging).map((end) => {
    const page = {
      ...describe(start, end),
      first: paths[start]!,
      last: paths[end - 1]!,
      entries: end - start,
    }
    start = end
    return page
  })
}

/** The pages of a map: `encodePage` gives a page's bytes (a full layer of the codec's). */
export const makePages = <V>(
  map: ReadonlyMap<WorkspacePath, V>,
  paths: ReadonlyArray<WorkspacePath>,
  paging: Paging,
  encodePage: (page: ReadonlyMap<WorkspacePath, V>) => Uint8Array,
  isTombstone: (entry: V) => boolean,
): Array<StoredPage> =>
  cutPages(paths, paging, (start, end) => {
    const page = new Map<WorkspacePath, V>()
    let tombstones = 0
    for (let i = start; i < end; i++) {
      const entry = map.get(paths[i]!)!
      page.set(paths[i]!, entry)
      if (isTombstone(entry)) tombstones++
    }
    const bytes = encodePage(page)
    return { hash: hashContent(bytes), tombstones, bytes }
  })

/** Whether `bytes` claim to be a page index (a cheap look at the head). */
export const isPageIndex = (bytes: Uint8Array): boolean =>
  bytes.length > HEAD.length && HEAD.every((b, i) => bytes[i] === b)

/** An index's pages and rules, every field checked; undefined when it is not a well-formed one. */
export const decodePageIndex = (
  bytes: Uint8Array,
): { readonly pages: ReadonlyArray<PageRef>; readonly rules?: string } | undefined => {
  if (!isPageIndex(bytes)) return undefined
  try {
    const parsed = JSON.parse(decoder.decode(bytes)) as Record<string, unknown>
    if (parsed.format !== PAGES_FORMAT || !Array.isArray(parsed.pages) || parsed.pages.length === 0)
      return undefined
    if (parsed.rules !== undefined && typeof parsed.rules !== "string") return undefined
    const pages: Array<PageRef> = []
    for (const raw of parsed.pages as Array<unknown>) {
      if (!Array.isArray(raw) || raw.length !== 5) return undefined
      const [first, last, hash, entries, tombstones] = raw as Array<unknown>
      if (typeof first !== "string" || typeof last !== "string" || first > last) return undefined
      if (workspacePathProblem(first) !== undefined || workspacePathProblem(last) !== undefined)
        return undefined
      if (typeof hash !== "string" || !isContentHash(hash)) return undefined
      if (!Number.isInteger(entries) || (entries as number) < 1) return undefined
      if (
        !Number.isInteger(tombstones) ||
        (tombstones as number) < 0 ||
        (tombstones as number) > (entries as number)
      )
        return undefined
      const previous = pages.at(-1)
      if (previous !== undefined && !(previous.last < first)) return undefined
      pages.push({
        first,
        last,
        hash: hash as ContentHash,
        entries: entries as number,
        tombstones: tombstones as number,
      })
    }
    return parsed.rules === undefined ? { pages } : { pages, rules: parsed.rules as string }
  } catch {
    return undefined
  }
}

/**
 * The pages that can hold an entry a subset load wants: with `parents` (and not the root, whose
 * entries lie all through the tree), the pages whose range meets a parent's (every path below a
 * directory sorts between the directory's path with a `/` and the first path after all of them)
 * and those holding tombstones (`Wanted` asks of each tombstone on its own); else every page.
 */
export const pagesFor = (
  pages: ReadonlyArray<PageRef>,
  parents: ReadonlyArray<string> | undefined,
): ReadonlyArray<PageRef> => {
  if (parents === undefined || parents.includes("")) return pages
  const prefixes = parents.map((p) => `${p}/`)
  return pages.filter(
    (page) =>
      page.tombstones > 0 ||
      prefixes.some(
        (prefix) => page.last >= prefix && (page.first < prefix || page.first.startsWith(prefix)),
      ),
  )
}
