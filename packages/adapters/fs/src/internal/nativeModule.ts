/**
 * Finds and loads the native module (`native/dirscan.c`, built by `node-gyp` when this package is
 * installed), and remembers why when it cannot: the scanner and the kernel-confined file
 * operations are optional, and their absence must be reportable (`rewind doctor`), never silent.
 *
 * Where it is looked for, in order: relative to this file (`src/internal` in tests, `dist/internal`
 * in the build, both two levels under the package), then inside the `@rewind/adapter-fs` package as
 * Node resolves it from here. The second is what a bundle needs: bundled into another package's
 * file (the `rewind` CLI), this code no longer sits inside its package, but the package is still
 * installed (a dependency) and built on this machine, so its own build is the one copy that
 * matches the machine. Copying the binary beside the bundle at build time would ship the
 * builder's binary and go stale on `npm rebuild`.
 *
 * `REWIND_NO_NATIVE=1` in the environment skips it (an escape hatch should the module misbehave on
 * some system, and how tests see the fallback); the reason then says so.
 */
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

export type NativeModuleStatus =
  | { readonly loaded: true; readonly path: string }
  | { readonly loaded: false; readonly reason: string }

const RELATIVE = "build/Release/dirscan.node"

const candidates = (): Array<string> => {
  const out = [join(dirname(fileURLToPath(import.meta.url)), "..", "..", RELATIVE)]
  try {
    const main = createRequire(import.meta.url).resolve("@rewind/adapter-fs")
    // `dist/index.js` of the package: its root is one level up.
    out.push(join(dirname(main), "..", RELATIVE))
  } catch {
    // Not resolvable from here (this file is the package itself, unbundled): the first one is it.
  }
  return [...new Set(out)]
}

const loadModule = (): { readonly module: unknown; readonly status: NativeModuleStatus } => {
  if (process.env.REWIND_NO_NATIVE === "1") {
    return { module: undefined, status: { loaded: false, reason: "disabled by REWIND_NO_NATIVE=1" } }
  }
  const require = createRequire(import.meta.url)
  const failures: Array<string> = []
  for (const path of candidates()) {
    try {
      return { module: require(path), status: { loaded: true, path } }
    } catch (e) {
      const error = e as NodeJS.ErrnoException
      failures.push(
        error?.code === "MODULE_NOT_FOUND" ? `${path}: not built` : `${path}: ${String(error?.message ?? e)}`,
      )
    }
  }
  return { module: undefined, status: { loaded: false, reason: failures.join("; ") } }
}

const loaded = loadModule()

/** The loaded module (its shape is each user's to declare), or undefined. */
export const nativeModule: unknown = loaded.module

/** Whether the module loaded, from where, or why not. */
export const nativeModuleStatus: NativeModuleStatus = loaded.status
