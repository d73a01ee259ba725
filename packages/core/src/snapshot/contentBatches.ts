/**
 * The read-and-store step of a manifest build (`pointBuild.ts`): files are read in groups and their
 * content stored in batches, bounded in bytes and files, with a few batches being stored while the
 * next group is read. Files are offered one by one (`feedReads`): from a list (`readAndStore`)
 * or, while a scan is still listing, as the scan takes them (`pointBuild.ts`'s `readDuringScan`);
 * either way each file's outcome is told as it is known. Applied to a build (`applyOutcome`), a stored file gets its
 * entry and enters the stat cache only outside the racy window and when its stat still matches
 * what was read; a file that cannot be read keeps its previous entry (unreadable is never absent);
 * one gone since the scan becomes a tombstone.
 */
import type { ArtifactStoreError, ContentHash, FileStat, SkippedPath, WorkspacePath } from "@rewind/contracts"
import { Effect, Either, Fiber, Option, Queue } from "effect"
import { ArtifactStore } from "../ports/ArtifactStore.js"
import { Workspace } from "../ports/Workspace.js"
import type { ManifestEntry, StatCacheEntry } from "./pointManifest.js"

/** A capture stores what it read in batches of at most this many bytes or files. */
const BATCH_BYTES = 8 * 1024 * 1024
const BATCH_FILES = 1_024
/** Files read by one `readMany`. */
const READ_GROUP_FILES = 1_024
/**
 * Batches being stored at once; with the group being taken in and the next one being read, a
 * capture holds at most about 5 × BATCH_BYTES.
 */
const STORES_IN_FLIGHT = 3

/** Files to read together, each with the stat the scan saw. */
type ReadGroup = ReadonlyArray<readonly [WorkspacePath, FileStat]>

/** What reading one file came to. */
export type ReadOutcome =
  | { readonly _tag: "Stored"; readonly hash: ContentHash; readonly mode: number; readonly size: number }
  | { readonly _tag: "Unreadable"; readonly skipped: SkippedPath }
  | { readonly _tag: "Gone" }

/** What a build accumulates; each step adds to it. */
export interface BuildInto {
  readonly manifest: Map<WorkspacePath, ManifestEntry>
  readonly statCache: Map<WorkspacePath, StatCacheEntry>
  readonly skipped: Array<SkippedPath>
  /** Keeps the previous manifest's entry for a path that could not be read this time. */
  readonly keepPrevious: (path: WorkspacePath) => void
}

/** Tells a build what reading a file came to (see the header). */
export const applyOutcome =
  (into: BuildInto, racyFromNs: bigint) =>
  (path: WorkspacePath, stat: FileStat, outcome: ReadOutcome): void => {
    if (outcome._tag === "Unreadable") {
      into.skipped.push(outcome.skipped)
      into.keepPrevious(path)
      return
    }
    if (outcome._tag === "Gone") {
      // Gone between the scan and the read: absent now.
      into.manifest.set(path, { kind: "tombstone" })
      return
    }
    const { hash, mode, size } = outcome
    into.manifest.set(path, { kind: "file", hash, mode, size })
    // The racy rule: an mtime this close to now may not change on the next edit, so the stat
    // cannot vouch for the content next time; such a file is read again.
    if (stat.mtimeNs < racyFromNs && stat.size === size && stat.mode === mode) {
      into.statCache.set(path, {
        size: stat.size,
        mtimeNs: stat.mtimeNs,
        ctimeNs: stat.ctimeNs,
        inode: stat.inode,
        mode: stat.mode,
        hash,
      })
    }
  }

/**
 * Reads and stores files offered one by one, in groups of at most READ_GROUP_FILES files or, by the
 * sizes the scan saw, about BATCH_BYTES, on a fiber in the caller's scope (ended early, the scope
 * stops it); each file's outcome is `told`, and `onHashed` hears how many were told of how many
 * offered (every 256, and around `finish`). `finish`: no more offers; waits for every outcome.
 */
export const feedReads = (
  told: (path: WorkspacePath, stat: FileStat, outcome: ReadOutcome) => void,
  onHashed?: (hashed: number, offered: number) => void,
) =>
  Effect.gen(function* () {
    const groups = yield* Queue.unbounded<ReadGroup | undefined>()
    let offered = 0
    let hashed = 0
    const reading = yield* Effect.forkScoped(
      readGroups(Queue.take(groups), (path, stat, outcome) => {
        told(path, stat, outcome)
        if (++hashed % 256 === 0) onHashed?.(hashed, offered)
      }),
    )
    let pending: Array<readonly [WorkspacePath, FileStat]> = []
    let pendingBytes = 0
    const send = () => {
      if (pending.length === 0) return
      Queue.unsafeOffer(groups, pending)
      pending = []
      pendingBytes = 0
    }
    return {
      offer: (path: WorkspacePath, stat: FileStat) => {
        pending.push([path, stat])
        offered++
        pendingBytes += stat.size
        if (pending.length >= READ_GROUP_FILES || pendingBytes >= BATCH_BYTES) send()
      },
      finish: Effect.suspend(() => {
        send()
        Queue.unsafeOffer(groups, undefined)
        onHashed?.(hashed, offered)
        return Effect.tap(Fiber.join(reading), () => onHashed?.(hashed, offered))
      }),
    }
  })

/** Reads and stores `toRead` into `into`; `racyFromNs` is where the racy window begins. */
export const readAndStore = (
  toRead: ReadonlyArray<readonly [WorkspacePath, FileStat]>,
  into: BuildInto,
  racyFromNs: bigint,
  onHashed: ((hashed: number, toHash: number) => void) | undefined,
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const reads = yield* feedReads(applyOutcome(into, racyFromNs), onHashed)
      for (const [path, stat] of toRead) reads.offer(path, stat)
      yield* reads.finish
    }),
  )

/**
 * Reads the groups `nextGroup` answers until it answers `undefined`, stores their contents, and
 * tells each file's outcome (in the order each group was given, a batch once it is stored).
 * Fails only as the store does: a file that cannot be read is an outcome, not a failure.
 */
const readGroups = (
  nextGroup: Effect.Effect<ReadGroup | undefined>,
  told: (path: WorkspacePath, stat: FileStat, outcome: ReadOutcome) => void,
): Effect.Effect<void, ArtifactStoreError, Workspace | ArtifactStore> =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const artifacts = yield* ArtifactStore
    // Files are read a group at a time and stored in batches (`putMany`: one transaction per batch
    // where the store has them), bounded in bytes. Up to STORES_IN_FLIGHT batches are being stored
    // while the next one is read: a store that compresses off the main thread takes longer per
    // batch than the read of one, and with a single batch in flight the reads stood waiting for it.
    const storing: Array<Fiber.RuntimeFiber<void, ArtifactStoreError>> = []
    let batch: Array<{
      readonly path: WorkspacePath
      readonly stat: FileStat
      readonly mode: number
      readonly content: Uint8Array
      readonly hash: ContentHash | undefined
    }> = []
    let batchBytes = 0
    const store = (stored: typeof batch) =>
      Effect.map(
        artifacts.putMany(
          stored.map((f) => f.content),
          stored.map((f) => f.hash),
        ),
        (hashes) => {
          stored.forEach(({ path, stat, mode, content }, i) => {
            told(path, stat, { _tag: "Stored", hash: hashes[i]!, mode, size: content.byteLength })
          })
        },
      )
    const finishStoring = Effect.suspend(() =>
      Effect.forEach(storing.splice(0), Fiber.join, { discard: true }),
    )
    const flush = Effect.gen(function* () {
      if (batch.length === 0) return
      const stored = batch
      batch = []
      batchBytes = 0
      if (storing.length >= STORES_IN_FLIGHT) yield* Fiber.join(storing.shift()!)
      storing.push(yield* Effect.fork(store(stored)))
    })
    // The next group's read is under way while this one is taken in (`readMany` checks the
    // directories a group shares once): a workspace that reads off the main thread (the fs
    // adapter's native reads) reads it meanwhile, instead of the main thread waiting. Waiting for
    // the next group (a scan still listing) is part of that fiber, so it holds nothing up either.
    const readNext = Effect.fork(
      Effect.flatMap(nextGroup, (group) =>
        group === undefined
          ? Effect.succeed(undefined)
          : Effect.map(workspace.readMany(group.map(([path]) => path)), (reads) => ({ group, reads })),
      ),
    )
    let next = yield* readNext
    for (;;) {
      const got = yield* Fiber.join(next)
      if (got === undefined) break
      next = yield* readNext
      const { group, reads } = got
      for (let i = 0; i < group.length; i++) {
        const [path, stat] = group[i]!
        const read = reads[i]!
        if (Either.isLeft(read)) {
          const changing = read.left._tag === "WorkspaceIoError" && read.left.code === "ECHANGED"
          told(path, stat, {
            _tag: "Unreadable",
            skipped: {
              path,
              reason: changing ? "changed_during_read" : "unreadable",
              detail: read.left.message,
            },
          })
          continue
        }
        if (Option.isNone(read.right)) {
          told(path, stat, { _tag: "Gone" })
          continue
        }
        const file = read.right.value
        batch.push({ path, stat, mode: file.mode, content: file.content, hash: file.hash })
        batchBytes += file.content.byteLength
        if (batchBytes >= BATCH_BYTES || batch.length >= BATCH_FILES) yield* flush
      }
    }
    yield* flush
    yield* finishStoring
  })
