/**
 * What is at each path of a point now, for a restore's plan (module-internal to `snapshot/`): the
 * directories holding the paths are listed once through the bulk `scanDirectories` (one `lstat`
 * per entry instead of a confined walk per path; the same listings answer the protection check's
 * stats of ignore files and `.git`), and the latest capture's stat cache vouches for unchanged
 * files, so a plan over a large point reads only what changed and stats each entry once. What the
 * plan reads may be kept (up to a budget) for the apply's rescue point, so it is not read twice.
 */
import type { ContentHash, FileKind, FileStat, WorkspacePath } from "@rewind/contracts"
import { nameOf, parentOf } from "@rewind/contracts"
import { Effect, Either, Option } from "effect"
import { type ScannedEntry, Workspace, type WorkspaceError } from "../ports/Workspace.js"
import { hashContent } from "../workspace/contentHash.js"
import type { KnownStats } from "../workspace/ignoreCheck.js"
import { sameStat } from "./capturePoint.js"
import type { StatCache } from "./pointManifest.js"

/** What is at a path now. */
export type CurrentState =
  | { readonly kind: "file"; readonly hash: ContentHash; readonly mode: number }
  | { readonly kind: "link"; readonly target: string }
  | { readonly kind: "absent" }

export const ABSENT: CurrentState = { kind: "absent" }

/**
 * What the capture's stat cache says is at a path with this `lstat`, when it can vouch for it (it
 * only holds entries outside the racy window), so a large restore reads only what changed.
 */
const vouched = (path: WorkspacePath, stat: FileStat, cache: StatCache): CurrentState | undefined => {
  const cached = cache.get(path)
  return cached !== undefined && stat.kind === "file" && sameStat(cached, stat)
    ? { kind: "file", hash: cached.hash, mode: cached.mode }
    : undefined
}

/**
 * Contents an apply's plan read, kept (up to a byte budget) so its rescue point can store them
 * without reading the files again.
 */
export interface KeptContents {
  readonly contents: Map<WorkspacePath, Uint8Array>
  bytes: number
}

/** What an apply keeps of the contents its plan read; beyond this the rescue point reads again. */
const KEEP_BYTES = 64 * 1024 * 1024

/** What is at a path whose `lstat` (and link target) is known; reads only what the cache cannot vouch for. */
const classify = (
  path: WorkspacePath,
  stat: FileStat,
  target: string | undefined,
  cache: StatCache,
  keep: KeptContents | undefined,
) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const known = vouched(path, stat, cache)
    if (known !== undefined) return known
    switch (stat.kind) {
      case "symlink":
        return {
          kind: "link",
          target: target ?? (yield* workspace.readLink(path)),
        } as CurrentState
      case "file": {
        const file = yield* workspace.read(path)
        if (Option.isNone(file)) return ABSENT
        const content = file.value.content
        if (keep !== undefined && keep.bytes + content.byteLength <= KEEP_BYTES) {
          keep.contents.set(path, content)
          keep.bytes += content.byteLength
        }
        return { kind: "file", hash: hashContent(content), mode: file.value.mode } as CurrentState
      }
      default:
        return { notRegular: stat.kind } satisfies NotRegular
    }
  })

/** A kind a point never holds (a directory, a FIFO, a socket, a device) standing at a path. */
export interface NotRegular {
  readonly notRegular: FileKind
}

/** What is at a path, or what stands there that a point never holds. */
export type Inspected = Either.Either<CurrentState | NotRegular, WorkspaceError>

/** One path on its own: a confined `lstat`, then `classify`. */
const inspect = (path: WorkspacePath, cache: StatCache, keep: KeptContents | undefined) =>
  Effect.gen(function* () {
    const stat = yield* (yield* Workspace).stat(path)
    if (Option.isNone(stat)) return ABSENT
    return yield* classify(path, stat.value, undefined, cache, keep)
  })

/** The listed directories of a plan's paths, by directory (see `listDirectoriesOf`). */
export interface Listings {
  readonly at: bigint
  readonly paths: ReadonlyMap<string, ReadonlyArray<WorkspacePath>>
  readonly byDirectory: ReadonlyMap<string, ReadonlyMap<string, ScannedEntry>>
}

/**
 * The directories of a plan's paths and their ancestors, each listed once with its entries'
 * `lstat`s in one bulk `scanDirectories` (about the cost of a scan of them, one `lstat` per
 * entry), and the Clock just before. A directory that could not be listed (missing, a file,
 * refused) is left out: its paths are inspected one by one, and its stats taken the usual way.
 */
export const listDirectoriesOf = (paths: Iterable<WorkspacePath>) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const byPath = new Map<string, Array<WorkspacePath>>()
    for (const path of paths) {
      const dir = parentOf(path)
      const group = byPath.get(dir)
      if (group === undefined) byPath.set(dir, [path])
      else group.push(path)
    }
    // Their ancestors too: the protection check decides every directory from the root down.
    const directories = new Set<string>()
    for (let dir of byPath.keys())
      while (!directories.has(dir)) {
        directories.add(dir)
        if (dir === "") break
        dir = parentOf(dir)
      }
    const at = (yield* Effect.clock).unsafeCurrentTimeNanos()
    const listed = [...directories]
    const listings = yield* workspace.scanDirectories(
      listed.map((dir) => (dir === "" ? undefined : (dir as WorkspacePath))),
    )
    const byDirectory = new Map<string, ReadonlyMap<string, ScannedEntry>>()
    listed.forEach((dir, i) => {
      const scan = listings[i]!
      if (Either.isRight(scan)) byDirectory.set(dir, new Map(scan.right.map((e) => [e.name, e])))
    })
    return { at, paths: byPath, byDirectory } satisfies Listings
  })

/**
 * The listings as the stats a protection check would take (`KnownStats`): what is at a path of a
 * listed directory, `lstat` or nothing. A name the listing holds only in another case is left to
 * a stat of its own, which a case-insensitive filesystem may answer differently.
 */
export const knownStats = (listings: Listings): KnownStats => {
  const foldedNames = new Map<string, ReadonlySet<string>>()
  return {
    at: listings.at,
    answer: (path) => {
      const dir = parentOf(path)
      const listed = listings.byDirectory.get(dir)
      if (listed === undefined) return undefined
      const name = nameOf(path)
      const entry = listed.get(name)
      if (entry !== undefined) return Either.right(Option.some(entry.stat))
      let folded = foldedNames.get(dir)
      if (folded === undefined) {
        folded = new Set([...listed.keys()].map((n) => n.toLowerCase()))
        foldedNames.set(dir, folded)
      }
      return folded.has(name.toLowerCase()) ? undefined : Either.right(Option.none())
    },
  }
}

/**
 * Inspects every path (of `listings`' directories; `skip` leaves some out): what a listing holds
 * is decided from its entry, most of them without an effect per path; the paths of a directory
 * that could not be listed are inspected path by path, which gives each its own answer (absent, or
 * its own error).
 */
export const inspectAll = (
  listings: Listings,
  skip: (path: WorkspacePath) => boolean,
  cache: StatCache,
  keep: KeptContents | undefined,
) =>
  Effect.gen(function* () {
    const out = new Map<WorkspacePath, Inspected>()
    for (const [dir, group] of listings.paths) {
      const listed = listings.byDirectory.get(dir)
      for (const path of group) {
        if (skip(path)) continue
        if (listed === undefined) {
          out.set(path, yield* Effect.either(inspect(path, cache, keep)))
          continue
        }
        const entry = listed.get(path.slice(dir === "" ? 0 : dir.length + 1))
        // Most paths of a large point are unchanged: decided here, without an effect per path.
        const known = entry === undefined ? ABSENT : vouched(path, entry.stat, cache)
        out.set(
          path,
          known !== undefined
            ? Either.right(known)
            : yield* Effect.either(classify(path, entry!.stat, entry!.target, cache, keep)),
        )
      }
    }
    return out
  })
