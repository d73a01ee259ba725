// Test helper: run a Node script in a separate OS process (the built adapter, a fresh runtime) and
// collect what it printed.
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

export const fixture = (name: string) => path.join(packageDir, "test", "fixtures", name)

export interface NodeRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs `node <script> ...args`; the scripts import the package's `dist`, so it must be built. */
export const runNode = (script: string, args: ReadonlyArray<string>): Effect.Effect<NodeRun> =>
  Effect.async<NodeRun>((resume) => {
    if (!fs.existsSync(path.join(packageDir, "dist", "index.js"))) {
      resume(
        Effect.dieMessage("packages/adapters/postgres is not built: run `npm run build` before these tests"),
      )
      return
    }
    const child = execFile(
      process.execPath,
      [script, ...args],
      { cwd: packageDir, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
        resume(Effect.succeed({ code, stdout, stderr }))
      },
    )
    return Effect.sync(() => child.kill())
  })
