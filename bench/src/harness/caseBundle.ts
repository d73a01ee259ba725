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
 * Bundles `src/runCase.ts` (its entry file and one chunk per case). The files are written under
 * `bench/node_modules/.cache` so that the external packages resolve exactly as they do for the
 * sources.
 */
export const bundleCaseRunner = async (): Promise<CaseBundle> => {
  const dir = join(BENCH_DIR, "node_modules", ".cache", "rewind-bench", String(process.pid))
  mkdirSync(dir, { recursive: true })
  await build({
    entryPoints: { runCase: join(BENCH_DIR, "src", "runCase.ts") },
    outdir: dir,
    outExtension: { ".js": ".mjs" },
    // One chunk per case module (caseLoaders.ts imports each lazily), so a case process loads
    // only its own case's dependencies: without splitting, esbuild hoists every external import
    // of every case to the top of the one file.
    splitting: true,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    plugins: [ownImportMetaUrl],
    logLevel: "error",
  })
  return { file: join(dir, "runCase.mjs"), remove: () => rmSync(dir, { recursive: true, force: true }) }
}
