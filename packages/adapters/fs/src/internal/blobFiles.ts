/**
 * The on-disk layout of the file artifact store and the steps on its files: `objects/ab/cdef…`
 * (the SHA-256 split after two hex digits), temp files and set-aside blobs under `tmp/`. A blob's
 * `storedAt` is its file's modification time. A sweep sets a blob aside by renaming it into
 * `tmp/sweep-<hash>-<uuid>`; while it is there, reads find it there, and a store opening puts
 * every set-aside blob back (a blob kept by mistake is only garbage; one lost would be data).
 */
import { randomUUID } from "node:crypto"
import {
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  unlinkSync,
  utimesSync,
} from "node:fs"
import { join } from "node:path"
import { ArtifactStoreError, type ContentHash } from "@rewind/contracts"
import { type ArtifactInfo, requireContentHash, type SweptBlob } from "@rewind/core"
import { Effect } from "effect"
import { errnoOf, isErrno } from "./durable.js"

export const SHARD = /^[0-9a-f]{2}$/
const REST = /^[0-9a-f]{62}$/
const SET_ASIDE = /^sweep-([0-9a-f]{64})-[0-9a-f-]+$/

// Times are set in milliseconds but stored in nanoseconds through a float of seconds: round back.
export const storedAtOf = (mtimeMs: number) => Math.round(mtimeMs)

export const attempt = <A>(operation: string, run: () => A) =>
  Effect.try({
    try: run,
    catch: (cause) => new ArtifactStoreError({ operation, message: errnoOf(cause).message, cause }),
  })

const asBytes = (b: Buffer): Uint8Array => new Uint8Array(b.buffer, b.byteOffset, b.byteLength)

export const readIfPresent = (file: string, operation: string) =>
  attempt(operation, () => {
    // A missing blob is the common case of a put: ask without paying for an exception.
    if (lstatSync(file, { throwIfNoEntry: false }) === undefined) return undefined
    try {
      return asBytes(readFileSync(file))
    } catch (e) {
      if (isErrno(e, "ENOENT")) return undefined
      throw e
    }
  })

/** Puts a set-aside blob back unless a put has stored it anew meanwhile; then drops the copy. */
const restore = (aside: string, file: string) => {
  try {
    linkSync(aside, file)
  } catch (e) {
    if (!isErrno(e, "EEXIST") && !isErrno(e, "ENOENT")) throw e
  }
  try {
    unlinkSync(aside)
  } catch (e) {
    if (!isErrno(e, "ENOENT")) throw e
  }
}

/**
 * Makes an intact stored blob young again. False when it is gone (a sweep took it) or cannot
 * be touched (another user's file): then the put writes it anew.
 */
export const refresh = (file: string, now: number) =>
  attempt("put", () => {
    try {
      if (storedAtOf(lstatSync(file).mtimeMs) >= now) return true
      utimesSync(file, now / 1000, now / 1000)
      return true
    } catch (e) {
      if (isErrno(e, "ENOENT") || isErrno(e, "EPERM") || isErrno(e, "EACCES")) return false
      throw e
    }
  })

/**
 * The store's files under `directory`: where a blob lives, reading it (or its set-aside copy),
 * refreshing its age, its shard directories and their listings, and the sweep's take-aside. Every
 * path is derived from a hash `locate` has checked first.
 */
export const makeBlobFiles = (directory: string) => {
  const objects = join(directory, "objects")
  const temp = join(directory, "tmp")

  // A hash that is not 64 hex digits could name a path outside the store: refuse it first.
  const locate = (hash: string, operation: string) =>
    Effect.map(requireContentHash(hash, operation), (valid) => ({
      shard: join(objects, valid.slice(0, 2)),
      file: join(objects, valid.slice(0, 2), valid.slice(2)),
    }))

  /** A blob a sweep has set aside (renamed into `tmp/`) while it decides; undefined when none. */
  const setAside = (hash: string): string | undefined => {
    const prefix = `sweep-${hash}-`
    const name = readdirSync(temp).find((n) => n.startsWith(prefix))
    return name === undefined ? undefined : join(temp, name)
  }

  /** Reads a blob, or its set-aside copy while a sweep holds it (the same bytes). */
  const readBlob = (hash: string, file: string, operation: string) =>
    Effect.flatMap(readIfPresent(file, operation), (bytes) =>
      bytes !== undefined
        ? Effect.succeed(bytes)
        : Effect.flatMap(
            attempt(operation, () => setAside(hash)),
            (aside) => (aside === undefined ? Effect.succeed(undefined) : readIfPresent(aside, operation)),
          ),
    )

  // Shard directories are only ever added, so one that exists once exists for good.
  const knownShards = new Set<string>()
  const ensureShard = (shard: string) =>
    Effect.suspend(() =>
      knownShards.has(shard)
        ? Effect.void
        : attempt("put", () => {
            mkdirSync(shard, { recursive: true })
            knownShards.add(shard)
          }),
    )

  const listShard = (shard: string) =>
    attempt("list", () => {
      const infos: Array<ArtifactInfo> = []
      for (const name of readdirSync(join(objects, shard))) {
        if (!REST.test(name)) continue
        try {
          const stat = lstatSync(join(objects, shard, name))
          if (stat.isFile()) {
            infos.push({
              hash: (shard + name) as ContentHash,
              size: stat.size,
              storedAt: storedAtOf(stat.mtimeMs),
            })
          }
        } catch (e) {
          // Deleted between the listing and the stat: not in the store any more.
          if (!isErrno(e, "ENOENT")) throw e
        }
      }
      return infos
    })

  /** Every set-aside blob put back (a sweep that died with blobs set aside). */
  const restoreSetAside = () => {
    for (const name of readdirSync(temp)) {
      const match = SET_ASIDE.exec(name)
      if (match === null) continue
      const hash = match[1]!
      mkdirSync(join(objects, hash.slice(0, 2)), { recursive: true })
      restore(join(temp, name), join(objects, hash.slice(0, 2), hash.slice(2)))
    }
  }

  /**
   * The sweep of one blob: taken out of `objects/` into `tmp/` (one atomic step: no put can touch
   * it there), then deleted when older than `cutoff`, else put back. Undefined when it is kept or
   * gone already; `touched` collects the shard directories changed.
   */
  const sweepOne = (hash: ContentHash, shard: string, file: string, cutoff: number, touched: Set<string>) =>
    attempt("sweep", (): SweptBlob | undefined => {
      const aside = join(temp, `sweep-${hash}-${randomUUID()}`)
      try {
        renameSync(file, aside)
      } catch (e) {
        if (isErrno(e, "ENOENT")) return undefined
        throw e
      }
      touched.add(shard)
      // Set aside, the blob's age can no longer change: a put now finds it missing.
      let stat: ReturnType<typeof lstatSync>
      try {
        stat = lstatSync(aside)
      } catch (e) {
        // Put back by a store opening meanwhile (crash recovery): kept.
        if (isErrno(e, "ENOENT")) return undefined
        throw e
      }
      if (storedAtOf(stat.mtimeMs) >= cutoff) {
        restore(aside, file)
        return undefined
      }
      try {
        unlinkSync(aside)
      } catch (e) {
        if (isErrno(e, "ENOENT")) return undefined
        throw e
      }
      return { hash, size: stat.size }
    })

  return {
    objects,
    temp,
    locate,
    setAside,
    readBlob,
    ensureShard,
    forgetShard: (shard: string) => knownShards.delete(shard),
    listShard,
    restoreSetAside,
    sweepOne,
  }
}
