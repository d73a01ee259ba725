// Test helpers: a store file in a fresh temp directory (removed with the scope), and raw access to
// the file with better-sqlite3 for what the adapter itself refuses to do.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import Database from "better-sqlite3"
import { Effect } from "effect"

export const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "rewind-sqlite-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })),
)

export const tempStorePath = Effect.map(tempDir, (dir) => path.join(dir, "store.db"))

/** Runs `f` on a separate raw connection to the file, closed afterwards. */
export const withRawDatabase = <A>(file: string, f: (db: Database.Database) => A): A => {
  const db = new Database(file)
  try {
    db.pragma("busy_timeout = 5000")
    return f(db)
  } finally {
    db.close()
  }
}
