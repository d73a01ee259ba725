// The snapshot engine's properties on the fs adapters: a real temp-dir workspace and a real
// artifact store (memory session store), each run in its own directories, removed afterwards.
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { MemoryOperationJournal, MemorySessionStore } from "@rewind/adapter-memory"
import { IdGenerators } from "@rewind/core"
import {
  protectionProperties,
  type SnapshotHarness,
  snapshotGcProperty,
  snapshotProperties,
} from "@rewind/testkit"
import { Layer } from "effect"
import { FsArtifactStore, NodeWorkspace } from "../src/index.js"

const tree = (root: string): Map<string, string> => {
  const out = new Map<string, string>()
  const walk = (dir: string, rel: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name)
      const r = rel === "" ? name : `${rel}/${name}`
      const s = lstatSync(p)
      if (s.isDirectory()) walk(p, r)
      else if (s.isSymbolicLink()) out.set(r, `link ${readlinkSync(p)}`)
      else out.set(r, `file ${(s.mode & 0o7777).toString(8)} ${readFileSync(p, "utf8")}`)
    }
  }
  walk(root, "")
  return out
}

const harness: SnapshotHarness = {
  open: () => {
    const base = mkdtempSync(join(tmpdir(), "rewind-snapshots-"))
    const root = join(base, "workspace")
    mkdirSync(root)
    const at = (path: string) => join(root, path)
    return {
      layer: Layer.mergeAll(
        Layer.orDie(NodeWorkspace.layer(root, { durability: "atomic" })),
        Layer.orDie(FsArtifactStore.layer({ directory: join(base, "store"), durability: "atomic" })),
        MemorySessionStore.layer,
        MemoryOperationJournal.layer,
        IdGenerators.layerSequential("s"),
      ),
      write: (path, content, mode) => {
        mkdirSync(dirname(at(path)), { recursive: true })
        writeFileSync(at(path), content)
        chmodSync(at(path), mode)
      },
      symlink: (path, target) => {
        mkdirSync(dirname(at(path)), { recursive: true })
        symlinkSync(target, at(path))
      },
      remove: (path) => rmSync(at(path), { force: true }),
      removeTree: (path) => rmSync(at(path), { force: true, recursive: true }),
      tree: () => tree(root),
      dispose: () => rmSync(base, { recursive: true, force: true }),
    }
  },
}

snapshotProperties("fs", harness, { runs: 25 })
snapshotGcProperty("fs", harness, { runs: 20 })
protectionProperties("fs", harness, { runs: 30 })
