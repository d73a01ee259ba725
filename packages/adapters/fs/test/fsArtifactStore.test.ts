import { execFile } from "node:child_process"
import { promises as fsp } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "@effect/vitest"
import type { ContentHash } from "@rewind/contracts"
import { hashContent } from "@rewind/core"
import { Effect } from "effect"
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
