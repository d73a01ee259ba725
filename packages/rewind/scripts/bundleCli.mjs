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
//
// The capture path (cli/captureFast.ts and what it loads; entry cli/captureBundle.ts) is bundled
// a second time, alone, as one script (dist/cli/chunks/captureBundle.cjs) that the bin runs with a
// V8 code cache (cli/captureCached.ts, cli/codeCache.ts): the repeat capture before every model
// request then skips parsing and compiling its ~1.8 MB of code. It is one function expression
// taking what a CommonJS module takes plus `import.meta.url` (`__importMetaUrl`), in strict mode
// as the ESM chunks are, so the same compiled modules behave the same in both. It lies beside the
// chunks so paths its modules resolve relative to themselves are the chunks' (nativeModule.ts).
//
// The full CLI (cli/cliBundle.ts) is bundled the same way a third time (dist/cli/chunks/cliBundle.cjs),
// its lazy loads kept lazy, and the bin runs it with a code cache too (cli/cliCached.ts).
//
// In all three, `fast-check` is a stub (scripts/fastCheckStub.cjs, which says why).
import { readFileSync, rmSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"

const alias = {
  // jsonc-parser's `main` is a UMD build whose factory requires its own files by computed paths,
  // which a bundle cannot follow; its ESM build (the package's `module`) bundles like any other.
  "jsonc-parser": "jsonc-parser/lib/esm/main.js",
  "fast-check": fileURLToPath(new URL("./fastCheckStub.cjs", import.meta.url)),
}

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
  alias,
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

const CAPTURE_BUNDLE = "dist/cli/chunks/captureBundle.cjs"

/**
 * The capture path's own lazy loads (`import("./x.js")` of this repository's compiled modules,
 * such as storeAccess.js's of the store layer) made static in the capture bundle. They exist so
 * the full CLI's light commands do not load the store; a capture loads all of them anyway. Left
 * dynamic, esbuild would initialise every module they reach lazily (a `__esm` wrapper per module,
 * all of Effect's among them), which made the bundle's code a third larger and its start slower.
 */
const staticImports = {
  name: "capture-static-imports",
  setup(build) {
    build.onLoad({ filter: /[\\/]dist[\\/].*\.js$/ }, (args) => {
      if (args.path.includes("node_modules")) return undefined
      const source = readFileSync(args.path, "utf8")
      const hoisted = []
      const contents = source.replace(/\bimport\((["'])(\.{1,2}\/[^"']+)\1\)/g, (_, quote, path) => {
        hoisted.push(`import * as __captureStatic${hoisted.length} from ${quote}${path}${quote};`)
        return `Promise.resolve(__captureStatic${hoisted.length - 1})`
      })
      return hoisted.length === 0
        ? undefined
        : { contents: `${hoisted.join("\n")}\n${contents}`, loader: "js" }
    })
  },
}

/**
 * A script codeCache.ts runs: one function expression taking what a CommonJS module takes. Its
 * whitespace and comments are left out: esbuild keeps the doc comments of object and class
 * members, a few of them not ASCII, which made V8 decode the whole script as UTF-8 into a
 * two-byte string on every start. Without them the capture bundle is 1.8 MB of ASCII instead of
 * 2.5 MB (a cold repeat capture of babel's shape ~15 ms faster and ~2.5 MB smaller); names are
 * kept, so a stack trace still names its functions.
 */
const cachedScript = {
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  external: ["better-sqlite3"],
  alias,
  define: { "import.meta.url": "__importMetaUrl" },
  banner: {
    js: '(function (exports, require, module, __filename, __dirname, __importMetaUrl) {"use strict";',
  },
  footer: { js: "})" },
  minifyWhitespace: true,
  logLevel: "warning",
}

await build({
  ...cachedScript,
  entryPoints: ["dist/cli/captureBundle.js"],
  outfile: CAPTURE_BUNDLE,
  plugins: [staticImports],
})
// vm.Script runs it without an ESM loader: a dynamic import() left in it would fail at run time.
// Nor should any module be initialised lazily (see staticImports).
const captureSource = readFileSync(CAPTURE_BUNDLE, "utf8")
if (/\bimport\s*\(/.test(captureSource)) {
  throw new Error(`${CAPTURE_BUNDLE} still has a dynamic import(): the capture bundle must be self-contained`)
}
if (/\b__esm\(/.test(captureSource)) {
  throw new Error(
    `${CAPTURE_BUNDLE} initialises modules lazily (__esm): a dynamic import the capture path reaches was not made static`,
  )
}

// The full CLI (cli/cliBundle.ts), a third time, as one script the bin runs with a V8 code cache
// (cli/cliCached.ts). Unlike the capture bundle its dynamic imports stay lazy (esbuild initialises
// the modules they reach on first use, `__esm`), so `rewind sessions` does not initialise the MCP
// SDK or the servers; esbuild turns each such `import()` into a call within the script.
const CLI_BUNDLE = "dist/cli/chunks/cliBundle.cjs"
await build({ ...cachedScript, entryPoints: ["dist/cli/cliBundle.js"], outfile: CLI_BUNDLE })
if (/\bimport\s*\(/.test(readFileSync(CLI_BUNDLE, "utf8"))) {
  throw new Error(`${CLI_BUNDLE} still has a dynamic import(): the CLI bundle must be self-contained`)
}
