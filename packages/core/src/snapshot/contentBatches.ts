/**
 * The read-and-store step of a manifest build (`pointBuild.ts`): the files whose stat the cache
 * could not vouch for are read in groups and their content stored in batches, bounded in bytes and
 * files, with a few batches being stored while the next is read. Each stored file gets its entry;
 * it enters the stat cache only outside the racy window and when its stat still matches what was
 * read. A file that cannot be read keeps its previous entry (unreadable is never absent); one gone
 * since the scan becomes a tombstone.
 */
import type { ArtifactStoreError, ContentHash, FileStat, SkippedPath, WorkspacePath } from "@rewind/contracts"
import { Effect, Either, Fiber, Option } from "effect"
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

/** What a build accumulates; each step adds to it. */
export interface BuildInto {
  readonly manifest: Map<WorkspacePath, ManifestEntry>
  readonly statCache: Map<WorkspacePath, StatCacheEntry>
  readonly skipped: Array<SkippedPath>
  /** Keeps the previous manifest's entry for a path that could not be read this time. */
  readonly keepPrevious: (path: WorkspacePath) => void
}

/** Reads and stores `toRead` into `into`; `racyFromNs` is where the racy window begins. */
export const readAndStore = (
  toRead: ReadonlyArray<readonly [WorkspacePath, FileStat]>,
  into: BuildInto,
  racyFromNs: bigint,
  onHashed: ((hashed: number, toHash: number) => void) | undefined,
) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const artifacts = yield* ArtifactStore
    const { manifest, statCache, skipped, keepPrevious } = into
    // Files are read one by one and stored in batches (`putMany`: one transaction per batch where
    // the store has them), bounded in bytes. Up to STORES_IN_FLIGHT batches are being stored while
    // the next one is read: a store that compresses off the main thread takes longer per batch than
    // the read of one, and with a single batch in flight the reads stood waiting for it.
    let hashed = 0
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
      Effect.gen(function* () {
        const hashes = yield* artifacts.putMany(
          stored.map((f) => f.content),
          stored.map((f) => f.hash),
        )
        stored.forEach(({ path, stat, mode, content }, i) => {
          const hash = hashes[i]!
          manifest.set(path, { kind: "file", hash, mode, size: content.byteLength })
          // The racy rule: an mtime this close to now may not change on the next edit, so the stat
          // cannot vouch for the content next time; such a file is read again.
          if (stat.mtimeNs < racyFromNs && stat.size === content.byteLength && stat.mode === mode) {
            statCache.set(path, {
              size: stat.size,
              mtimeNs: stat.mtimeNs,
              ctimeNs: stat.ctimeNs,
              inode: stat.inode,
              mode: stat.mode,
              hash,
            })
          }
        })
      })
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
    // Read in groups (`readMany` checks the directories they share once), each at most
    // READ_GROUP_FILES files or, by the sizes the scan saw, about BATCH_BYTES. The next group's
    // read is under way while this one is taken in: a workspace that reads off the main thread
    // (the fs adapter's native reads) reads it meanwhile, instead of the main thread waiting.
    const groups: Array<ReadonlyArray<readonly [WorkspacePath, FileStat]>> = []
    for (let start = 0; start < toRead.length; ) {
      let end = start
      let expected = 0
      while (end < toRead.length && end - start < READ_GROUP_FILES && expected < BATCH_BYTES) {
        expected += toRead[end]![1].size
        end++
      }
      groups.push(toRead.slice(start, end))
      start = end
    }
    const readGroup = (g: number) => Effect.fork(workspace.readMany(groups[g]!.map(([path]) => path)))
    let next = groups.length === 0 ? undefined : yield* readGroup(0)
    for (let g = 0; g < groups.length; g++) {
      const group = groups[g]!
      const reads = yield* Fiber.join(next!)
      next = g + 1 < groups.length ? yield* readGroup(g + 1) : undefined
      for (let i = 0; i < group.length; i++) {
        const [path, stat] = group[i]!
        const read = reads[i]!
        hashed++
        if (hashed % 256 === 0) onHashed?.(hashed, toRead.length)
        if (Either.isLeft(read)) {
          const changing = read.left._tag === "WorkspaceIoError" && read.left.code === "ECHANGED"
          skipped.push({
            path,
            reason: changing ? "changed_during_read" : "unreadable",
            detail: read.left.message,
          })
          keepPrevious(path)
          continue
        }
        if (Option.isNone(read.right)) {
          // Gone between the scan and the read: absent now.
          manifest.set(path, { kind: "tombstone" })
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
    onHashed?.(hashed, toRead.length)
  })
