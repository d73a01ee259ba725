// The shared conformance suites, file-rewind and redo properties, run on the memory adapters.

import {
  MemoryArtifactStore,
  MemoryFileSystem,
  MemoryOperationJournal,
  MemorySessionStore,
  MemoryWorkspace,
} from "@rewind/adapter-memory"
import type { ContentHash } from "@rewind/contracts"
import {
  artifactStoreConformance,
  fileRewindProperties,
  redoProperties,
  workspaceConformance,
} from "@rewind/testkit"
import { Effect, Layer } from "effect"

artifactStoreConformance("memory", {
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

const ROOT = "/home/dev/project"
const OUTSIDE = "/home/dev/outside"

const memoryFixture = () => {
  const fs = new MemoryFileSystem()
  fs.writeFile(`${OUTSIDE}/secret.txt`, "do not touch\n")
  const workspace = MemoryWorkspace.make({ fs, root: ROOT })
  const inside = (path: string) => `${ROOT}/${path}`
  return {
    fs,
    fixture: {
      workspace,
      plantFile: (path: string, content: string, mode?: number) =>
        Effect.sync(() => fs.writeFile(inside(path), content, mode)),
      plantDirectory: (path: string) => Effect.sync(() => fs.mkdirp(inside(path))),
      plantSymlink: (path: string, target: string) => Effect.sync(() => fs.symlink(inside(path), target)),
      plantFifo: (path: string) => Effect.sync(() => fs.fifo(inside(path))),
      removeRaw: (path: string) => Effect.sync(() => fs.remove(inside(path))),
      readRaw: (path: string) =>
        Effect.sync(() => {
          const node = fs.node(inside(path))
          return node?.kind === "file" ? new TextDecoder().decode(node.content) : undefined
        }),
      outside: OUTSIDE,
      outsideFromRoot: "../outside",
      outsideFingerprint: () => Effect.sync(() => JSON.stringify(fs.describe(OUTSIDE))),
      outsideAccesses: () =>
        fs.accesses.map((a) => a.path).filter((p) => p !== ROOT && !p.startsWith(`${ROOT}/`)),
    },
  }
}

workspaceConformance("memory", { make: Effect.sync(() => memoryFixture().fixture) })

fileRewindProperties("memory workspace + memory stores", {
  make: Effect.sync(() => ({
    ...memoryFixture().fixture,
    stores: Layer.mergeAll(MemorySessionStore.layer, MemoryArtifactStore.layer, MemoryOperationJournal.layer),
  })),
})

redoProperties("memory workspace + memory stores + memory journal", {
  make: Effect.sync(() => ({
    workspace: memoryFixture().fixture.workspace,
    stores: Layer.mergeAll(MemorySessionStore.layer, MemoryArtifactStore.layer, MemoryOperationJournal.layer),
  })),
})
