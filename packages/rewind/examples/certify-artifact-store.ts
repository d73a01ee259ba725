// Certifying an ArtifactStore: run the testkit's conformance suite from a vitest test file.
// The harness makes a fresh store per test and can damage a blob behind the store's back.

import { MemoryArtifactStore } from "@rewind/adapter-memory"
import type { ContentHash } from "@rewind/contracts"
import { artifactStoreConformance } from "@rewind/testkit"
import { Effect } from "effect"

artifactStoreConformance("memory (docs example)", {
  make: Effect.sync(() => {
    const data = MemoryArtifactStore.makeMemoryArtifactData()
    return {
      store: MemoryArtifactStore.makeMemoryArtifactStore(data),
      corrupt: (hash: ContentHash) =>
        Effect.sync(() => {
          const blob = data.blobs.get(hash)!
          blob.bytes = blob.bytes.map((b, i) => (i === 0 ? b ^ 0xff : b))
        }),
    }
  }),
})
