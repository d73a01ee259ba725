/**
 * What a batch put does before its transaction (artifactStore.ts): which of its contents are stored
 * already, looked up a few hundred keys per statement, and the stored forms of the others, made on
 * the compression thread while the caller goes on (a capture reads its next files meanwhile).
 * Which are stored is only a hint: the transaction verifies a row stored meanwhile as ever, and
 * compresses in the call a content whose row went meanwhile.
 */
import type { ContentHash } from "@rewind/contracts"
import type Database from "better-sqlite3"
import { Effect } from "effect"
import type { CompressionThread, Encoded } from "./compressionThread.js"

/**
 * A batch whose contents to compress come to at least this many bytes is compressed on the
 * compression thread before its transaction (and outside the store's permit). Smaller puts stay
 * on the caller's thread, where the round trip would cost more than it saves.
 */
const THREAD_FROM_BYTES = 64 * 1024
/**
 * A single `put` (a checkpoint's one file, a capture's seal: its caller waits for it) uses the
 * thread from here, once a batch has started it. A lone put never starts it: it would not wait for
 * the start anyway, and in a short process (a cold `rewind capture` whose only large put is its
 * seal) the start was all the thread ever did: a V8 isolate's ~55 ms of a core and ~15 MB of
 * memory, then its shutdown before the process could exit.
 */
const THREAD_FROM_BYTES_SINGLE = 256 * 1024
/**
 * A batch (`putMany`) at least this large waits for a thread that is still starting (~55 ms)
 * rather than being compressed in the call: a capture's first batch held 8 MiB, and compressing it
 * in the call took the core its reads run on, while waiting costs that core nothing (the capture
 * reads on). A smaller one, or a single put, is compressed in the call while the thread starts.
 */
const THREAD_START_FROM_BYTES = 1024 * 1024
/** Keys per lookup statement: one statement per few hundred contents, not one each. */
const LOOKUP_KEYS = 256

/**
 * The hashes (hex) among `keys` that have a row. The statement always takes LOOKUP_KEYS keys; a
 * short last group repeats its first key (a duplicate in `in (…)` changes nothing).
 */
export const makeStoredLookup = (db: Database.Database) => {
  const placeholders = Array.from({ length: LOOKUP_KEYS }, () => "?").join(", ")
  const lookup = db
    .prepare<Array<Buffer>, Buffer>(`select hash from blobs where hash in (${placeholders})`)
    .pluck()
  return (keys: ReadonlyArray<Buffer>): Set<string> => {
    const stored = new Set<string>()
    for (let start = 0; start < keys.length; start += LOOKUP_KEYS) {
      const group = keys.slice(start, start + LOOKUP_KEYS)
      while (group.length < LOOKUP_KEYS) group.push(group[0]!)
      for (const hash of lookup.all(...group)) stored.add(hash.toString("hex"))
    }
    return stored
  }
}

export interface AheadOptions<E> {
  readonly thread: CompressionThread | undefined
  /** Below this a content is stored as it is (never worth sending). */
  readonly compressFromBytes: number
  /** `makeStoredLookup`'s answer, run under the store's permit. */
  readonly storedAmong: (keys: ReadonlyArray<Buffer>) => Effect.Effect<Set<string>, E>
}

/** What the lookup before a batch's transaction found, by index in the batch. */
export interface Ahead {
  /** Contents found unstored (a repeated content: its first occurrence only). */
  readonly unstored: ReadonlySet<number>
  /** Stored forms made on the compression thread, for some of those. */
  readonly encoded: ReadonlyMap<number, Encoded> | undefined
}

/**
 * Which of the batch's contents are not stored yet, and their stored forms made ahead on the
 * compression thread (a first capture of a tree with copies, or a repeat put, holds many contents
 * that are stored: compressing those was work thrown away); a repeated content is sent once.
 * `undefined` when the batch is too small for the thread or it cannot be used (nothing is looked up
 * then); no `encoded` when too little is left to send or the thread failed (the transaction then
 * compresses in the call). `single`: a lone `put`, which never waits for the thread to start.
 */
export const compressAhead = <E>(
  options: AheadOptions<E>,
  contents: ReadonlyArray<Uint8Array>,
  hashes: ReadonlyArray<ContentHash>,
  keys: ReadonlyArray<Buffer>,
  single: boolean,
) =>
  Effect.gen(function* () {
    const { thread } = options
    if (thread === undefined) return undefined
    let total = 0
    for (const c of contents) total += c.byteLength
    const from = single ? THREAD_FROM_BYTES_SINGLE : THREAD_FROM_BYTES
    if (total < from) return undefined
    // Asking starts the thread, unless for a lone put.
    const ready = thread.ready(!single)
    if (!ready && (single || total < THREAD_START_FROM_BYTES)) return undefined
    const candidates: Array<number> = []
    const first = new Set<string>()
    hashes.forEach((hash, i) => {
      if (first.has(hash)) return
      first.add(hash)
      candidates.push(i)
    })
    const stored = yield* options.storedAmong(candidates.map((i) => keys[i]!))
    const unstored = candidates.filter((i) => !stored.has(hashes[i]!))
    const wanted = unstored.filter((i) => contents[i]!.byteLength >= options.compressFromBytes)
    let wantedBytes = 0
    for (const i of wanted) wantedBytes += contents[i]!.byteLength
    const ahead = (encoded: ReadonlyMap<number, Encoded> | undefined): Ahead => ({
      unstored: new Set(unstored),
      encoded,
    })
    if (wantedBytes < (ready ? from : THREAD_START_FROM_BYTES)) return ahead(undefined)
    // A batch the thread cannot compress is compressed in the call instead.
    const encoded = yield* Effect.promise(() =>
      thread.encode(wanted.map((i) => contents[i]!)).catch(() => undefined),
    )
    return ahead(encoded === undefined ? undefined : new Map(wanted.map((i, j) => [i, encoded[j]!])))
  })
