/**
 * The case process's program, bundled once per bench run. Starting each case under tsx cost about
 * 2 s and 290 MB here (every case module compiled again in every child), which padded both the run
 * time and every case's peak RSS figure. The bundle keeps packages external (they are built
 * JavaScript already) and gives each bench module its own `import.meta.url`, so paths that modules
 * resolve from their own location (BENCH_DIR, the process-runner helper) stay what they are under
 * tsx. A bundle that cannot be built fails the run: there is no silent fallback to the slow start.
 */
import { mkdirSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { build, type Plugin } from "esbuild"
import { BENCH_DIR } from "./options.js"

const ownImportMetaUrl: Plugin = {
  name: "own-import-meta-url",
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, (args) => {
      const source = readFileSync(args.path, "utf8")
      return {
        contents: source.replaceAll("import.meta.url", JSON.stringify(pathToFileURL(args.path).href)),
        loader: "ts",
      }
    })
  },
}

export interface CaseBundle {
  readonly file: string
  readonly remove: () => void
}

/**
 * Bundles `src/runCase.ts`. The file is written under `bench/node_modules/.cache` so that the
 * external packages resolve exactly as they do for the sources.
 */
export const bundleCaseRunner = async (): Promise<CaseBundle> => {
  const dir = join(BENCH_DIR, "node_modules", ".cache", "rewind-bench")
  mkdirSync(dir, { recursive: true })
  const file = join(dir, `runCase-${process.pid}.mjs`)
  await build({
    entryPoints: [join(BENCH_DIR, "src", "runCase.ts")],
    outfile: file,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    plugins: [ownImportMetaUrl],
    logLevel: "error",
  })
  return { file, remove: () => rmSync(file, { force: true }) }
}
