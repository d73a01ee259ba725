// The snapshot engine's properties on the memory adapters (workspace, artifacts, session store).

import {
  MemoryArtifactStore,
  MemoryFileSystem,
  MemoryOperationJournal,
  MemorySessionStore,
  MemoryWorkspace,
} from "@rewind/adapter-memory"
import { IdGenerators } from "@rewind/core"
import {
  protectionProperties,
  type SnapshotHarness,
  snapshotGcProperty,
  snapshotProperties,
} from "@rewind/testkit"
import { Layer } from "effect"

const ROOT = "/work/project"

const harness: SnapshotHarness = {
  open: () => {
    const fs = new MemoryFileSystem()
    fs.mkdirp(ROOT)
    const at = (path: string) => `${ROOT}/${path}`
    return {
      layer: Layer.mergeAll(
        MemoryWorkspace.layer({ fs, root: ROOT }),
        MemoryArtifactStore.layer,
        MemorySessionStore.layer,
        MemoryOperationJournal.layer,
        IdGenerators.layerSequential("s"),
      ),
      write: (path, content, mode) => fs.writeFile(at(path), content, mode),
      symlink: (path, target) => fs.symlink(at(path), target),
      remove: (path) => {
        if (fs.node(at(path)) !== undefined) fs.remove(at(path))
      },
      removeTree: (path) => {
        if (fs.node(at(path)) !== undefined) fs.remove(at(path))
      },
      tree: () =>
        new Map(
          fs
            .describe(ROOT)
            .filter(([, d]) => d !== "directory")
            .map(([p, d]) => [p.slice(ROOT.length + 1), d.startsWith("symlink ") ? `link ${d.slice(8)}` : d]),
        ),
      dispose: () => {},
    }
  },
}

snapshotProperties("memory", harness)
snapshotGcProperty("memory", harness)
protectionProperties("memory", harness)
