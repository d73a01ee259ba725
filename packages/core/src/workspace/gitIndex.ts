/**
 * The files git tracks, read from a repository's index (found by `repository.ts`). Git
 * applies ignore rules only to files it does not track — a file added with `git add -f`, or a
 * fixture under a `node_modules` the rules exclude, is still the repository's file — so Rewind
 * does the same: the ignore rules and the skip list never exclude a tracked file (`ignoreRules.ts`
 * states the rule; the scan and the ignore check apply it). Protection by name (`.git`, the store)
 * and nested repositories are not rules: a tracked path there stays out.
 *
 * The index is input Rewind does not control: refused over `MAX_INDEX_BYTES` (by `repository.ts`,
 * which also reads it again only when its stat changed), and parsed defensively: an unknown version, a split index (whose entries live
 * in another file), a truncated or inconsistent file give no tracked set at all, and the rules
 * alone decide, as they did before this module. Only regular files and symlinks count: a
 * submodule's entry (a gitlink), a sparse directory entry and a skip-worktree entry name nothing
 * git keeps in the working tree; names that are not valid UTF-8 cannot be workspace paths.
 */
import { Either } from "effect"
import { endsWithDigest, hashContent } from "./contentHash.js"

/** An index larger than this is not read (about 4 million entries' worth). */
export const MAX_INDEX_BYTES = 256 * 1024 * 1024

/** The files git tracks, as workspace paths. */
export interface TrackedFiles {
  readonly has: (path: string) => boolean
  /** The tracked paths that are `path` or lie below it as a directory ("" for all), in index order. */
  readonly atOrBelow: (path: string) => ReadonlyArray<string>
  /** A hash of the tracked paths: equal identities, equal sets. */
  readonly identity: string
  /**
   * Each directory holding tracked paths (the parent of one, "" for the top) with the names
   * tracked directly in it, in index order (by bytes), one directory at a time: for a digest per
   * directory (`snapshot/scanSeal.ts`) without every path as a string at once.
   */
  readonly byDirectory: (visit: (directory: string, names: ReadonlyArray<string>) => void) => void
}

const SIGNATURE = 0x44495243 // "DIRC"
const TYPE_MASK = 0o170000
const REGULAR = 0o100000
const SYMLINK = 0o120000
const EXTENDED = 0x4000
const SKIP_WORKTREE = 0x4000
const NAME_MASK = 0xfff
const STAGE_MASK = 0x3000

const SPLIT_INDEX = "a split index (its entries live in a shared index file)"

const utf8 = new TextDecoder("utf-8", { fatal: true })
const encoder = new TextEncoder()

/**
 * The names, as bytes: each is `joined[starts[i] .. starts[i + 1] - 1)` (a NUL follows each). Kept
 * as bytes in the index's order (sorted, as git sorts them: byte by byte), so a lookup is a binary
 * search and only the names a caller asks for are ever decoded — decoding them all costs more than
 * the rest of reading the index.
 */
interface Names {
  readonly joined: Uint8Array
  readonly starts: Int32Array
  readonly count: number
}

/**
 * The regular files and symlinks an index names, or why it cannot be used. The object-name length
 * is not recorded in the file; its trailer, a digest of everything before it, tells: SHA-1's (20
 * bytes) or SHA-256's (32). A trailer of zeros (git's `index.skipHash`) tells nothing: 20 is tried
 * first, then 32, and the one under which the whole file parses consistently is taken. Any other
 * trailer is a file read while git rewrote it, or not an index: refused.
 */
export const parseGitIndex = (bytes: Uint8Array): Either.Either<TrackedFiles, string> => {
  if (bytes.byteLength < 12) return Either.left("the index is too short")
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (view.getUint32(0) !== SIGNATURE) return Either.left("the index does not start with DIRC")
  const version = view.getUint32(4)
  if (version < 2 || version > 4) return Either.left(`index version ${version} is not one Rewind reads`)
  if (endsWithDigest(bytes, "sha1")) return Either.map(parseEntries(bytes, view, version, 20), trackedFilesOf)
  if (endsWithDigest(bytes, "sha256"))
    return Either.map(parseEntries(bytes, view, version, 32), trackedFilesOf)
  if (bytes.subarray(bytes.byteLength - 20).some((b) => b !== 0))
    return Either.left("the index's trailing checksum does not match its content")
  // A split index parses whole as SHA-1 before it is refused: that answer stands.
  const sha1 = parseEntries(bytes, view, version, 20)
  const parsed =
    Either.isRight(sha1) || sha1.left === SPLIT_INDEX
      ? sha1
      : Either.orElse(parseEntries(bytes, view, version, 32), () => sha1)
  return Either.map(parsed, trackedFilesOf)
}

const parseEntries = (
  bytes: Uint8Array,
  view: DataView,
  version: number,
  hashSize: number,
): Either.Either<Names, string> => {
  const count = view.getUint32(8)
  const end = bytes.byteLength - hashSize
  const fixed = 40 + hashSize + 2
  // In versions 2 and 3 every name and its NUL lie in the file, so the joined names fit in its
  // size: one allocation, of which only what is written is ever touched (growing by copies touched
  // fresh memory three times over, a third of the parse of a 20 MB index). Version 4's names are
  // compressed and may outgrow it.
  let joined = new Uint8Array(bytes.byteLength)
  const starts = new Int32Array(count + 1)
  let kept = 0
  let used = 0
  let previous: Uint8Array = new Uint8Array(0)
  let o = 12
  for (let i = 0; i < count; i++) {
    if (o + fixed > end) return Either.left("the index is truncated")
    const mode = view.getUint32(o + 24)
    const flags = view.getUint16(o + 40 + hashSize)
    let p = o + fixed
    let skipWorktree = false
    if ((flags & EXTENDED) !== 0) {
      if (version < 3) return Either.left("an extended entry in a version 2 index")
      if (p + 2 > end) return Either.left("the index is truncated")
      skipWorktree = (view.getUint16(p) & SKIP_WORKTREE) !== 0
      p += 2
    }
    let name: Uint8Array
    if (version === 4) {
      // The name is the previous one less `strip` bytes, then the bytes up to a NUL.
      if (p >= end) return Either.left("the index is truncated")
      let c = bytes[p++]!
      let strip = c & 127
      while ((c & 128) !== 0) {
        if (p >= end) return Either.left("the index is truncated")
        c = bytes[p++]!
        strip = ((strip + 1) << 7) | (c & 127)
      }
      if (strip > previous.byteLength) return Either.left("an entry strips more than its predecessor's name")
      const nul = bytes.indexOf(0, p)
      if (nul === -1 || nul >= end) return Either.left("the index is truncated")
      const suffix = bytes.subarray(p, nul)
      name = new Uint8Array(previous.byteLength - strip + suffix.byteLength)
      name.set(previous.subarray(0, previous.byteLength - strip))
      name.set(suffix, previous.byteLength - strip)
      o = nul + 1
    } else {
      const length = flags & NAME_MASK
      const nul = length < NAME_MASK ? p + length : bytes.indexOf(0, p)
      if (nul === -1 || nul >= end || bytes[nul] !== 0)
        return Either.left("an entry's name is not terminated")
      name = bytes.subarray(p, nul)
      // Padded with 1 to 8 NULs to a multiple of eight bytes from the entry's start.
      o += (p - o + (nul - p) + 8) & ~7
      if (o > end) return Either.left("the index is truncated")
    }
    previous = name
    const type = mode & TYPE_MASK
    if ((type !== REGULAR && type !== SYMLINK) || skipWorktree) continue
    // A conflicted path has an entry per stage (1 to 3, none at 0), next to each other: kept once.
    // Only those are compared, not every name with the one before it.
    if ((flags & STAGE_MASK) !== 0 && kept > 0 && sameAs(joined, starts[kept - 1]!, used - 1, name)) continue
    if (used + name.byteLength + 1 > joined.byteLength) {
      const grown = new Uint8Array(Math.max(joined.byteLength * 2, used + name.byteLength + 1))
      grown.set(joined.subarray(0, used))
      joined = grown
    }
    starts[kept++] = used
    joined.set(name, used)
    used += name.byteLength
    joined[used++] = 0
  }
  starts[kept] = used
  // Extensions follow the entries: each a 4-byte signature and a 4-byte length.
  while (o < end) {
    if (o + 8 > end) return Either.left("an extension is truncated")
    const signature = String.fromCharCode(bytes[o]!, bytes[o + 1]!, bytes[o + 2]!, bytes[o + 3]!)
    const length = view.getUint32(o + 4)
    if (signature === "link") return Either.left(SPLIT_INDEX)
    o += 8 + length
  }
  if (o !== end) return Either.left("the index's extensions overrun its checksum")
  return Either.right({ joined: joined.subarray(0, used), starts, count: kept })
}

const sameAs = (joined: Uint8Array, from: number, to: number, name: Uint8Array) => {
  if (to - from !== name.byteLength) return false
  for (let i = 0; i < name.byteLength; i++) if (joined[from + i] !== name[i]) return false
  return true
}

/** Compares name `i` with `key` byte by byte, as git orders names; `prefix`: only key's length. */
const compareName = (names: Names, i: number, key: Uint8Array, prefix: boolean) => {
  const from = names.starts[i]!
  const length = names.starts[i + 1]! - 1 - from
  const n = Math.min(length, key.byteLength)
  for (let k = 0; k < n; k++) {
    const d = names.joined[from + k]! - key[k]!
    if (d !== 0) return d
  }
  return prefix && length >= key.byteLength ? 0 : length - key.byteLength
}

/** The first name not before `key` (compared as a prefix when `prefix`). */
const lowerBound = (names: Names, key: Uint8Array, prefix: boolean) => {
  let lo = 0
  let hi = names.count
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (compareName(names, mid, key, prefix) < 0) lo = mid + 1
    else hi = mid
  }
  return lo
}

const nameAt = (names: Names, i: number): string | undefined => {
  try {
    return utf8.decode(names.joined.subarray(names.starts[i]!, names.starts[i + 1]! - 1))
  } catch {
    return undefined // not UTF-8: not a workspace path
  }
}

const trackedFilesOf = (names: Names): TrackedFiles => {
  const has = (path: string) => {
    const key = encoder.encode(path)
    const i = lowerBound(names, key, false)
    return i < names.count && compareName(names, i, key, false) === 0
  }
  const within = (key: Uint8Array) => {
    const found: Array<string> = []
    for (let i = lowerBound(names, key, true); i < names.count; i++) {
      if (compareName(names, i, key, true) !== 0) break
      const path = nameAt(names, i)
      if (path !== undefined) found.push(path)
    }
    return found
  }
  return {
    has,
    atOrBelow: (path) => {
      if (path === "") return within(new Uint8Array(0))
      const below = within(encoder.encode(`${path}/`))
      return has(path) ? [path, ...below] : below
    },
    identity: hashContent(names.joined),
    byDirectory: (visit) => groupByDirectory(names.count, (i) => nameAt(names, i), visit),
  }
}

/**
 * `TrackedFiles.byDirectory` over the paths `pathAt(0 .. count - 1)` (undefined: not a workspace
 * path, left out), sorted by their bytes. In that order the paths below a directory are contiguous,
 * so the directories still open are a stack along one path: one leaves it, complete, when a path
 * outside it comes.
 */
const groupByDirectory = (
  count: number,
  pathAt: (i: number) => string | undefined,
  visit: (directory: string, names: ReadonlyArray<string>) => void,
) => {
  const open: Array<{ readonly directory: string; readonly names: Array<string> }> = []
  for (let i = 0; i < count; i++) {
    const path = pathAt(i)
    if (path === undefined) continue
    const slash = path.lastIndexOf("/")
    const directory = slash < 0 ? "" : path.slice(0, slash)
    let top = open[open.length - 1]
    while (
      top !== undefined &&
      top.directory !== directory &&
      top.directory !== "" &&
      !directory.startsWith(`${top.directory}/`)
    ) {
      open.pop()
      visit(top.directory, top.names)
      top = open[open.length - 1]
    }
    if (top?.directory === directory) top.names.push(path.slice(slash + 1))
    else open.push({ directory, names: [path.slice(slash + 1)] })
  }
  for (let top = open.pop(); top !== undefined; top = open.pop()) visit(top.directory, top.names)
}

/**
 * The tracked files of a workspace that lies `prefix` below its repository's top: the index's
 * paths under it, relative to the workspace root.
 */
export const trackedBelow = (files: TrackedFiles, prefix: string): TrackedFiles => {
  if (prefix === "") return files
  const at = (path: string) => (path === "" ? prefix : `${prefix}/${path}`)
  const strip = (path: string) => path.slice(prefix.length + 1)
  return {
    has: (path) => files.has(at(path)),
    atOrBelow: (path) => {
      const found = files.atOrBelow(at(path))
      return (path === "" ? found.filter((p) => p !== prefix) : found).map(strip)
    },
    identity: `${files.identity}\0${prefix}`,
    byDirectory: (visit) => {
      const below = files.atOrBelow(prefix).filter((p) => p !== prefix)
      groupByDirectory(below.length, (i) => strip(below[i]!), visit)
    },
  }
}
