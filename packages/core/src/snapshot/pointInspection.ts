/**
 * What is at each path of a point now, for a restore's plan (module-internal to `snapshot/`):
 * directories holding several of the paths are listed once through the bulk `scanDirectories`
 * (one `lstat` per entry instead of a confined walk per path), and the latest capture's stat cache
 * vouches for unchanged files, so a plan over a large point reads only what changed. What the plan
 * reads may be kept (up to a budget) for the apply's rescue point, so it is not read twice.
 */
import type { ContentHash, FileStat, WorkspacePath } from "@rewind/contracts"
import { Effect, Either, Option } from "effect"
import { type ScannedEntry, Workspace, type WorkspaceError } from "../ports/Workspace.js"
import { hashContent } from "../workspace/contentHash.js"
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
        return `a ${stat.kind}` as const
    }
  })

export type Inspected = Either.Either<CurrentState | `a ${string}`, WorkspaceError>

/** One path on its own: a confined `lstat`, then `classify`. */
const inspect = (path: WorkspacePath, cache: StatCache, keep: KeptContents | undefined) =>
  Effect.gen(function* () {
    const stat = yield* (yield* Workspace).stat(path)
    if (Option.isNone(stat)) return ABSENT
    return yield* classify(path, stat.value, undefined, cache, keep)
  })

/** Below this many paths in one directory, stat them one by one rather than list the directory. */
const SCAN_FROM_PATHS = 8

const parentOf = (path: string) => {
  const slash = path.lastIndexOf("/")
  return slash < 0 ? "" : path.slice(0, slash)
}

/**
 * Inspects every path: directories holding several of them are listed once with their `lstat`s;
 * a directory that cannot be listed (missing, a file, refused) falls back to per-path inspection,
 * which gives each path its own answer (absent, or its own error).
 */
export const inspectAll = (
  paths: Iterable<WorkspacePath>,
  cache: StatCache,
  keep: KeptContents | undefined,
) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const byDirectory = new Map<string, Array<WorkspacePath>>()
    for (const path of paths) {
      const dir = parentOf(path)
      const group = byDirectory.get(dir)
      if (group === undefined) byDirectory.set(dir, [path])
      else group.push(path)
    }
    const out = new Map<WorkspacePath, Inspected>()
    // Directories holding enough paths are listed together in one bulk call (one `lstat` per
    // entry, overlapped where the workspace can); the rest are inspected path by path.
    const listedDirectories = [...byDirectory].filter(([, group]) => group.length >= SCAN_FROM_PATHS)
    const listings = yield* workspace.scanDirectories(
      listedDirectories.map(([dir]) => (dir === "" ? undefined : (dir as WorkspacePath))),
    )
    const listedBy = new Map<string, ReadonlyMap<string, ScannedEntry>>()
    listedDirectories.forEach(([dir], i) => {
      const scan = listings[i]!
      if (Either.isRight(scan)) listedBy.set(dir, new Map(scan.right.map((e) => [e.name, e])))
    })
    for (const [dir, group] of byDirectory) {
      const listed = listedBy.get(dir)
      for (const path of group) {
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
