// The shared conformance suites and file-rewind properties, run on the filesystem adapters.
import { promises as fsp } from "node:fs"
import { join } from "node:path"
import { MemoryOperationJournal, MemorySessionStore } from "@rewind/adapter-memory"
import type { ContentHash } from "@rewind/contracts"
import { artifactStoreConformance, fileRewindProperties, workspaceConformance } from "@rewind/testkit"
import { Effect, Layer } from "effect"
import { FsArtifactStore } from "../src/index.js"
import { makeNodeFixture, makeNodeFixtureWith, tempDirectory } from "./fsFixture.js"

artifactStoreConformance("fs", {
  make: Effect.gen(function* () {
    const directory = yield* tempDirectory("blobs")
    const store = yield* FsArtifactStore.make({ directory })
    return {
      store,
      corrupt: (hash: ContentHash) =>
        Effect.promise(async () => {
          const file = join(directory, "objects", hash.slice(0, 2), hash.slice(2))
          const bytes = await fsp.readFile(file)
          bytes[0] = bytes[0]! ^ 0xff
          await fsp.chmod(file, 0o644)
          await fsp.writeFile(file, bytes)
        }),
    }
  }),
})

workspaceConformance("node fs", { make: makeNodeFixture })
// The JavaScript scanner and checked file operations, which machines without the native module
// use, must meet the same contract.
workspaceConformance("node fs, JavaScript only (no native module)", {
  make: makeNodeFixtureWith({ nativeScan: false, nativeFiles: false }),
})

fileRewindProperties(
  "node workspace + fs artifact store + memory session store",
  {
    make: Effect.gen(function* () {
      const fixture = yield* makeNodeFixture
      return {
        ...fixture,
        stores: Layer.mergeAll(
          MemorySessionStore.layer,
          FsArtifactStore.layer({ directory: join(fixture.base, "store") }),
          MemoryOperationJournal.layer,
        ),
      }
    }),
  },
  { runs: 40 },
)
