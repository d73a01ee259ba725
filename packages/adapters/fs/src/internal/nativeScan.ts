/**
 * The native directory scanner (`native/dirscan.c`, built by `node-gyp` when the package is
 * installed): `readdir` + `lstat` + `readlink` of many directories in one call, on a few threads;
 * a workspace's confined listings are taken on a thread of libuv's pool (`scanBeneathAsync`), so a
 * scan takes in one wave of directories on the main thread while the next is listed.
 * A repeat capture of a large workspace is almost all stat calls, and through `node:fs` each one
 * costs a JavaScript call and a Stats object on top of the system call. Optional: where the
 * module was not built (no compiler at install time, an unsupported platform), `makeNativeScanners`
 * is undefined and the JavaScript scanner is used; both give the same answers.
 *
 * Each set of scanners keeps the last listing of every directory it listed, with that listing's
 * bytes. The module compares a new listing with those bytes and answers "the same" when nothing
 * in the directory changed (no name, size, mtime, inode, mode or link target), and the scanner then
 * hands back the very array it built last time: a repeat scan of a tree where little changed
 * builds almost nothing, and callers can recognise an unchanged directory by identity.
 */
import { availableParallelism } from "node:os"
import type { FileKind } from "@rewind/contracts"
import { LISTING_CHECK_BYTES, type ListingSeal, type ScannedEntry, type StatFree } from "@rewind/core"
import { Either } from "effect"
import { type ErrnoFailure, errnoFailure } from "./durable.js"
import { escapedName } from "./names.js"
import { nativeModule } from "./nativeModule.js"

interface NativeListing {
  /** A name that is not UTF-8 comes as a Buffer of its bytes. */
  readonly names: ReadonlyArray<string | Uint8Array>
  /** kind, size, mode per entry. */
  readonly numbers: Float64Array
  /** mtimeNs, ctimeNs per entry. */
  readonly times: BigInt64Array
  readonly inodes: BigUint64Array
  /** A symlink's target at its index. */
  readonly targets: ReadonlyArray<string | undefined>
  /** The whole listing as bytes, to hand back with the next scan of the directory. */
  readonly blob?: ArrayBuffer
}

interface NativeFailure {
  readonly errno: number
  readonly syscall: string
  readonly path: string
}

/** `true`: byte for byte the listing whose bytes were passed as `previous`. */
type NativeAnswer = NativeListing | NativeFailure | true

type Previous = ReadonlyArray<ArrayBuffer | undefined>

interface DirScanModule {
  readonly scan: (
    paths: ReadonlyArray<string>,
    threads: number,
    previous?: Previous,
  ) => ReadonlyArray<NativeAnswer>
  /**
   * Linux only: directories relative to `root`, opened by `openat2` beneath it, no symlinks; null
   * when the root itself cannot be opened.
   */
  readonly scanBeneath?: BeneathCall<BeneathAnswer>
  /** Linux only: `scanBeneath` taken on a thread of libuv's pool, answered by a promise. */
  readonly scanBeneathAsync?: BeneathCall<Promise<BeneathAnswer>>
  /**
   * Linux only: each sealed listing's check of directories relative to `root` (opened as
   * `scanBeneath` opens them), the newest ctime of an entry counted with its stat per directory, and
   * the indices of the directories that could not be listed; null when the root itself cannot be
   * opened.
   */
  readonly sealBeneath?: (
    root: string,
    relatives: ReadonlyArray<string>,
    threads: number,
    statFreeNames: ReadonlyArray<string>,
    statFreePaths: ReadonlyArray<string>,
  ) => NativeSeal | null
}

/**
 * `scanBeneath(root, relatives, threads, previous?, statFreeNames?, statFreePaths?)`: with the
 * stat-free names and paths, each listing is sealed too and the answer is `SealedListings`; null
 * when the root itself cannot be opened.
 */
type BeneathCall<A> = (
  root: string,
  relatives: ReadonlyArray<string>,
  threads: number,
  previous?: Previous,
  statFreeNames?: ReadonlyArray<string>,
  statFreePaths?: ReadonlyArray<string>,
) => A

type BeneathAnswer = ReadonlyArray<NativeAnswer> | SealedListings | null

/** A sealing `scanBeneath`'s answer: the listings, and their seal. */
type SealedListings = NativeSeal & { readonly listings: ReadonlyArray<NativeAnswer> }

/** A seal as the module answers it (`sealBeneath`, a sealing `scanBeneath`). */
interface NativeSeal {
  readonly checks: ArrayBuffer
  readonly failed?: ReadonlyArray<number>
  readonly newestByDirectory: ArrayBuffer
}

const KINDS: ReadonlyArray<FileKind> = ["file", "directory", "symlink", "other"]

/** Below this many directories in a call, helper threads cost more than they save. */
const THREADED_FROM = 16
const THREADS = Math.max(1, Math.min(4, availableParallelism()))
const threadsFor = (count: number) => (count >= THREADED_FROM ? THREADS : 1)

/**
 * Entries kept across scans, over all directories (about 250 bytes each). Past it the cache is
 * dropped whole and refilled by the next scan: only speed depends on it.
 */
const MAX_CACHED_ENTRIES = 262_144

const failureOf = ({ errno, syscall, path }: NativeFailure): ErrnoFailure =>
  errnoFailure(errno, syscall, path)

const byName = (a: ScannedEntry, b: ScannedEntry) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

/** The entries of a listing, sorted by name (the order a workspace answers in). */
const entriesOf = (listing: NativeListing): ReadonlyArray<ScannedEntry> => {
  const { names, numbers, times, inodes, targets } = listing
  const out: Array<ScannedEntry> = new Array(names.length)
  for (let i = 0; i < names.length; i++) {
    const stat = {
      kind: KINDS[numbers[3 * i]!]!,
      size: numbers[3 * i + 1]!,
      mode: numbers[3 * i + 2]!,
      mtimeNs: times[2 * i]!,
      ctimeNs: times[2 * i + 1]!,
      inode: inodes[i]!,
    }
    const target = targets[i]
    const raw = names[i]!
    const name = typeof raw === "string" ? raw : escapedName(raw)
    const entry: ScannedEntry = target === undefined ? { name, stat } : { name, stat, target }
    out[i] = typeof raw === "string" ? entry : { ...entry, unsupportedName: true }
  }
  return out.sort(byName)
}

export type NativeScanner = (
  absolutes: ReadonlyArray<string>,
) => Array<Either.Either<ReadonlyArray<ScannedEntry>, ErrnoFailure>>

/**
 * Lists directories given relative to `root` (`""` is the root), each opened by the kernel beneath
 * the root with no symlink anywhere on its path. A listing is `undefined` for a directory that
 * could not be listed that way, for any reason (a symlink on the path, gone, unreadable): the
 * caller lists it the checked way, which gives the answer and the error a workspace owes. Given
 * `statFree`, it also seals each listing it takes, as `NativeSealer` would seal the same
 * directories: one listing serves the scan and the capture's seal. `seal` is undefined without
 * `statFree` or when the module cannot tell (then the caller lists again to seal); a directory
 * whose listing is `undefined`, or was not sealed, is in its `failed`.
 */
export type NativeScannerBeneath = (
  root: string,
  relatives: ReadonlyArray<string>,
  statFree?: StatFree,
) => Promise<{
  readonly listings: Array<ReadonlyArray<ScannedEntry> | undefined>
  readonly seal: ListingSeal | undefined
}>

/**
 * The workspace's `sealListings` (see `sealBeneath` in dirscan.c): each sealed listing's check of
 * directories relative to `root`, the newest ctime counted in each, and the directories that could not be
 * listed; undefined when the root could not be opened.
 */
export type NativeSealer = (
  root: string,
  relatives: ReadonlyArray<string>,
  statFree: StatFree,
) => ListingSeal | undefined

export interface NativeScanners {
  readonly scan: NativeScanner
  /** Undefined where the system has no `openat2` (not Linux). */
  readonly scanBeneath: NativeScannerBeneath | undefined
  /** Undefined where the system has no `openat2` (not Linux). */
  readonly sealBeneath: NativeSealer | undefined
}

interface Cached {
  readonly blob: ArrayBuffer
  readonly entries: ReadonlyArray<ScannedEntry>
}

const makeScanners = (module: DirScanModule): NativeScanners => {
  // By root ("" for absolute paths, `scan`), then by the path given: the paths are the scan's own
  // strings, so no key is built per directory.
  const cache = new Map<string, Map<string, Cached>>()
  let cachedEntries = 0

  const forget = (under: Map<string, Cached>, key: string) => {
    const old = under.get(key)
    if (old === undefined) return
    cachedEntries -= old.entries.length
    under.delete(key)
  }
  const remember = (
    under: Map<string, Cached>,
    key: string,
    listing: NativeListing,
  ): ReadonlyArray<ScannedEntry> => {
    const entries = entriesOf(listing)
    forget(under, key)
    if (listing.blob !== undefined) {
      if (cachedEntries + entries.length > MAX_CACHED_ENTRIES) {
        for (const listings of cache.values()) listings.clear()
        cachedEntries = 0
      }
      under.set(key, { blob: listing.blob, entries })
      cachedEntries += entries.length
    }
    return entries
  }

  /**
   * One call of the module over `keys` (under `root`), given the bytes cached for each when the
   * call began; `take` turns its answers into entries (or failures) and updates the cache.
   */
  const cachedCall = (root: string, keys: ReadonlyArray<string>) => {
    let under = cache.get(root)
    if (under === undefined) {
      under = new Map()
      cache.set(root, under)
    }
    const listings = under
    // What was cached when the call began: "the same" refers to these bytes, whatever an earlier
    // answer of the same call (a directory asked twice), or of another call answered meanwhile,
    // puts in the cache.
    const before = keys.map((key) => listings.get(key))
    return {
      previous: before.map((cached) => cached?.blob) as Previous,
      take: (answers: ReadonlyArray<NativeAnswer>): Array<ReadonlyArray<ScannedEntry> | NativeFailure> =>
        answers.map((answer, i) => {
          const key = keys[i]!
          if (answer === true) {
            const cached = before[i]
            // The module answers "the same" only where it was given bytes to compare with.
            if (cached === undefined)
              throw new Error(`dirscan: "unchanged" for ${key}, which it was not given`)
            return cached.entries
          }
          if ("errno" in answer) {
            forget(listings, key)
            return answer
          }
          return remember(listings, key, answer)
        }),
    }
  }

  /** The root itself could not be opened: a failure for every directory. */
  const rootFailed = (root: string, relatives: ReadonlyArray<string>): ReadonlyArray<NativeAnswer> =>
    relatives.map(() => ({ errno: 0, syscall: "open", path: root }))

  const scan: NativeScanner = (absolutes) => {
    const call = cachedCall("", absolutes)
    return call
      .take(module.scan(absolutes, threadsFor(absolutes.length), call.previous))
      .map((answer) => ("errno" in answer ? Either.left(failureOf(answer)) : Either.right(answer)))
  }

  // Listed off the main thread where the module can (a scan takes in one wave while the next is
  // listed); a module built from older sources lists on it.
  const syncBeneath = module.scanBeneath
  const asyncBeneath = module.scanBeneathAsync
  const beneath =
    syncBeneath === undefined
      ? undefined
      : (
          root: string,
          relatives: ReadonlyArray<string>,
          previous: Previous,
          statFree?: StatFree,
        ): Promise<BeneathAnswer> => {
          const threads = threadsFor(relatives.length)
          const call = <A>(f: BeneathCall<A>) =>
            statFree === undefined
              ? f(root, relatives, threads, previous)
              : f(root, relatives, threads, previous, statFree.names, statFree.paths)
          return asyncBeneath === undefined ? Promise.resolve(call(syncBeneath)) : call(asyncBeneath)
        }

  // One call, sealing or not: the listings (a failure, or a root that could not be opened, goes
  // the checked way) and, when sealing and the module could, their seal.
  const listBeneath = async (root: string, relatives: ReadonlyArray<string>, statFree?: StatFree) => {
    const call = cachedCall(root, relatives)
    const answer = await beneath!(root, relatives, call.previous, statFree)
    // A module built from older sources answers the listings alone: nothing sealed.
    const sealed = answer === null || Array.isArray(answer) ? undefined : (answer as SealedListings)
    const listings =
      answer === null
        ? rootFailed(root, relatives)
        : sealed === undefined
          ? (answer as ReadonlyArray<NativeAnswer>)
          : sealed.listings
    return {
      listings: call.take(listings).map((entries) => ("errno" in entries ? undefined : entries)),
      seal: sealed === undefined ? undefined : sealOf(sealed, relatives.length),
    }
  }

  const scanBeneath: NativeScannerBeneath | undefined = beneath === undefined ? undefined : listBeneath

  const sealer = module.sealBeneath
  const sealBeneath: NativeSealer | undefined =
    sealer === undefined
      ? undefined
      : (root, relatives, statFree) => {
          // A seal only saves a scan: whatever goes wrong here (a module built from other sources
          // than this file expects included) answers "cannot tell", and the capture scans.
          try {
            const answer = sealer(
              root,
              relatives,
              threadsFor(relatives.length),
              statFree.names,
              statFree.paths,
            )
            return answer === null ? undefined : sealOf(answer, relatives.length)
          } catch {
            return undefined
          }
        }

  return { scan, scanBeneath, sealBeneath }
}

/** The module's seal as a `ListingSeal`, or undefined when it is not the shape asked for. */
const sealOf = (answer: NativeSeal, count: number): ListingSeal | undefined => {
  if (
    !(answer.checks instanceof ArrayBuffer) ||
    answer.checks.byteLength !== LISTING_CHECK_BYTES * count ||
    !(answer.newestByDirectory instanceof ArrayBuffer) ||
    answer.newestByDirectory.byteLength !== 8 * count
  )
    return undefined
  return {
    checks: new Uint8Array(answer.checks),
    newestByDirectory: new BigInt64Array(answer.newestByDirectory),
    ...(Array.isArray(answer.failed) && answer.failed.length > 0 ? { failed: answer.failed } : {}),
  }
}

const loaded = nativeModule as DirScanModule | undefined

/**
 * A fresh set of native scanners with their own listing cache (one per workspace), or undefined
 * where the module is not built.
 */
export const makeNativeScanners: (() => NativeScanners) | undefined =
  loaded === undefined ? undefined : () => makeScanners(loaded)
