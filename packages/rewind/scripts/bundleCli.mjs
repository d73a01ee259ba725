// Bundles the compiled `rewind` executable (dist/cli/bin.js) into dist/cli/rewind.mjs, the
// package's `bin`, and its chunks (dist/cli/chunks/). Code splitting keeps the start small: the
// bin decides from its arguments what to load (cli/bin.ts), so `rewind hook <agent>` evaluates the
// hook client's few modules and `--version` nothing, and each command's heavy parts (the MCP SDK,
// the server, the store adapters) are chunks loaded by dynamic `import()` when that command runs. Unbundled, every start resolves and links several hundred ES modules
// (Effect, @effect/cli, Kysely, ...), which took 2-3 s on a loaded 2-core machine; the bundle
// starts in about half that. better-sqlite3 stays external (a native addon), and a `require` is
// provided for the CommonJS dependencies esbuild inlines. The fs adapter's native module
// (dirscan.node) is not copied here: bundled, the adapter's loader no longer sits in its package,
// so it resolves the installed @rewind/adapter-fs at run time and loads that package's own build
// (the one compiled on this machine at install); `rewind doctor` reports which was loaded, or why
// none was.
import { rmSync } from "node:fs"
import { build } from "esbuild"

// Chunk names carry content hashes: stale ones of an earlier build are removed first.
rmSync("dist/cli/chunks", { recursive: true, force: true })

await build({
  entryPoints: { rewind: "dist/cli/bin.js" },
  outdir: "dist/cli",
  outExtension: { ".js": ".mjs" },
  chunkNames: "chunks/[name]-[hash]",
  splitting: true,
  metafile: process.env.REWIND_BUNDLE_META !== undefined,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  external: ["better-sqlite3"],
  // jsonc-parser's `main` is a UMD build whose factory requires its own files by computed paths,
  // which a bundle cannot follow; its ESM build (the package's `module`) bundles like any other.
  alias: { "jsonc-parser": "jsonc-parser/lib/esm/main.js" },
  banner: {
    js: "import { createRequire as __rewindRequire } from 'node:module'; const require = __rewindRequire(import.meta.url);",
  },
  logLevel: "warning",
}).then(async (result) => {
  if (result.metafile !== undefined) {
    const { writeFileSync } = await import("node:fs")
    writeFileSync(process.env.REWIND_BUNDLE_META, JSON.stringify(result.metafile))
  }
})
