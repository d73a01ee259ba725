import { execFile } from "node:child_process"
import { promises as fsp } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "@effect/vitest"
import type { ContentHash } from "@rewind/contracts"
import { hashContent } from "@rewind/core"
import { Effect, TestClock } from "effect"
import { FsArtifactStore } from "../src/index.js"
import { tempDirectory } from "./fsFixture.js"

const run = promisify(execFile)
const worker = join(import.meta.dirname, "fixtures", "putWorker.ts")

describe("fs artifact store", () => {
  it.scoped("shards blobs as objects/ab/cdef…, read-only, with no temp file left behind", () =>
    Effect.gen(function* () {
      const directory = yield* tempDirectory("blobs")
      const store = yield* FsArtifactStore.make({ directory })
      const hash = yield* store.put(new TextEncoder().encode("sharded"))
      const file = join(directory, "objects", hash.slice(0, 2), hash.slice(2))
      const stat = yield* Effect.promise(() => fsp.stat(file))
      expect(stat.mode & 0o777).toBe(0o444)
      expect(yield* Effect.promise(() => fsp.readdir(join(directory, "tmp")))).toEqual([])
      // A reopened store over the same directory has the blob.
      const reopened = yield* FsArtifactStore.make({ directory })
      expect(new TextDecoder().decode(yield* reopened.get(hash))).toBe("sharded")
    }),
  )

  it.scoped(
    "a blob a sweep has set aside is still readable, and a crashed sweep's blobs come back on open",
    () =>
      Effect.gen(function* () {
        const directory = yield* tempDirectory("blobs-aside")
        const store = yield* FsArtifactStore.make({ directory })
        const hash = yield* store.put(new TextEncoder().encode("set aside"))
        const file = join(directory, "objects", hash.slice(0, 2), hash.slice(2))
        // What a sweep does first, and what a crash right after it leaves behind.
        const aside = join(directory, "tmp", `sweep-${hash}-00000000-0000-4000-8000-000000000000`)
        yield* Effect.promise(() => fsp.rename(file, aside))
        expect(yield* store.has(hash)).toBe(true)
        expect(new TextDecoder().decode(yield* store.get(hash))).toBe("set aside")
        const reopened = yield* FsArtifactStore.make({ directory })
        expect(yield* Effect.promise(() => fsp.readdir(join(directory, "tmp")))).toEqual([])
        expect(new TextDecoder().decode(yield* Effect.promise(() => fsp.readFile(file)))).toBe("set aside")
        expect(yield* reopened.has(hash)).toBe(true)
      }),
  )

  it.scoped("a put of stored content makes it young again on the store's clock", () =>
    Effect.gen(function* () {
      const directory = yield* tempDirectory("blobs-young")
      const store = yield* FsArtifactStore.make({ directory })
      const content = new TextEncoder().encode("used again")
      const hash = yield* store.put(content)
      const file = join(directory, "objects", hash.slice(0, 2), hash.slice(2))
      const before = (yield* Effect.promise(() => fsp.stat(file))).mtimeMs
      yield* TestClock.adjust("1 hour")
      yield* store.put(content)
      const after = (yield* Effect.promise(() => fsp.stat(file))).mtimeMs
      expect(Math.round(after - before)).toBe(3_600_000)
      // Young now: a sweep marked at this time with a grace window keeps it; one far later takes it.
      const markedAt = yield* store.now()
      expect(yield* store.sweep({ candidates: [hash], markedAt, graceMs: 1 })).toEqual([])
      const later = markedAt + 10
      expect(yield* store.sweep({ candidates: [hash], markedAt: later, graceMs: 1 })).toEqual([
        { hash, size: content.byteLength },
      ])
      expect(yield* Effect.promise(() => fsp.readdir(join(directory, "tmp")))).toEqual([])
    }),
  )

  it.scoped("two processes putting the same content at once both succeed and agree", () =>
    Effect.gen(function* () {
      const directory = yield* tempDirectory("blobs2")
      const store = yield* FsArtifactStore.make({ directory })
      const shared = new Uint8Array(256 * 1024).map((_, i) => (i * 31) % 251)
      const blobs = [
        shared,
        ...Array.from({ length: 5 }, (_, i) => new TextEncoder().encode(`common blob ${i}`)),
      ]
      // A child process puts the same blobs while this one keeps deleting and re-putting them, so
      // writes of the same content from both processes race for the same names.
      let childDone = false
      const child = run(process.execPath, ["--import", "tsx", worker, directory, "24"], {
        cwd: import.meta.dirname,
      }).finally(() => {
        childDone = true
      })
      let rounds = 0
      let ours: ReadonlyArray<ContentHash> = []
      while (!childDone || rounds === 0) {
        rounds++
        ours = yield* Effect.all(
          blobs.map((b) => Effect.zipRight(store.delete(hashContent(b)), store.put(b))),
          { concurrency: "unbounded" },
        )
      }
      const theirs: Array<string> = JSON.parse((yield* Effect.promise(() => child)).stdout)
      const distinct = [...new Set(ours)].sort()
      expect([...new Set(theirs)].sort()).toEqual(distinct)
      expect(distinct).toHaveLength(6)
      for (const h of distinct) expect(hashContent(yield* store.get(h))).toBe(h)
      expect((yield* store.stats()).count).toBe(6)
      expect(yield* Effect.promise(() => fsp.readdir(join(directory, "tmp")))).toEqual([])
    }),
  )

  it.scoped("recreates a shard directory removed behind its back", () =>
    Effect.gen(function* () {
      const directory = yield* tempDirectory("blobs4")
      const store = yield* FsArtifactStore.make({ directory })
      const hash = yield* store.put(new TextEncoder().encode("first"))
      yield* Effect.promise(() => fsp.rm(join(directory, "objects", hash.slice(0, 2)), { recursive: true }))
      expect(yield* store.has(hash)).toBe(false)
      yield* store.put(new TextEncoder().encode("first"))
      expect(new TextDecoder().decode(yield* store.get(hash))).toBe("first")
    }),
  )

  it.scoped("refuses to open where a directory cannot be made", () =>
    Effect.gen(function* () {
      const directory = yield* tempDirectory("blobs3")
      yield* Effect.promise(() => fsp.writeFile(join(directory, "file"), "x"))
      const error = yield* Effect.flip(FsArtifactStore.make({ directory: join(directory, "file", "store") }))
      expect(error._tag).toBe("ArtifactStoreError")
    }),
  )
})
