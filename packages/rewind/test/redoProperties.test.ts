// Invariant 5 (rewind then redo restores files and conversation byte for byte) on the embedded
// default's adapters: a Node workspace, the fs artifact store and a SQLite session store with its
// durable operation journal, each run in a fresh temp directory.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { FsArtifactStore, NodeWorkspace } from "@rewind/adapter-fs"
import { SqliteSessionStore } from "@rewind/adapter-sqlite"
import { redoProperties } from "@rewind/testkit"
import { Effect, Layer } from "effect"

redoProperties(
  "node workspace + fs artifact store + SQLite store and journal",
  {
    make: Effect.gen(function* () {
      const base = yield* Effect.acquireRelease(
        Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "rewind-redo-"))),
        (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })),
      )
      const root = path.join(base, "ws")
      fs.mkdirSync(root)
      return {
        workspace: yield* NodeWorkspace.make(root),
        stores: Layer.mergeAll(
          FsArtifactStore.layer({ directory: path.join(base, "artifacts") }),
          SqliteSessionStore.layer({ path: path.join(base, "store.db") }),
        ),
      }
    }),
  },
  { runs: 25 },
)
