/**
 * Running a Node script in a separate OS process, for tests that need a fresh runtime (several
 * writers on one store, a reopen after a migration). The scripts import a package's built `dist`,
 * so the runner refuses to start when that package has not been built.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Effect } from "effect"

export interface NodeRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

export interface NodeRunner {
  /** The path of `test/fixtures/<name>` in the package. */
  readonly fixture: (name: string) => string
  /** Runs `node <script> ...args` with the package as working directory and collects its output. */
  readonly runNode: (script: string, args: ReadonlyArray<string>) => Effect.Effect<NodeRun>
}

export const makeNodeRunner = (packageDir: string): NodeRunner => ({
  fixture: (name) => path.join(packageDir, "test", "fixtures", name),
  runNode: (script, args) =>
    Effect.async<NodeRun>((resume) => {
      if (!fs.existsSync(path.join(packageDir, "dist", "index.js"))) {
        resume(Effect.dieMessage(`${packageDir} is not built: run \`npm run build\` before these tests`))
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
    }),
})
