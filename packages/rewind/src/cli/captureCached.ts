/**
 * `rewind capture` in this process, from the capture bundle with its V8 code cache: the bin
 * (bin.ts) runs this when the hand-over to a running server (captureClient.ts) did not take the
 * command. The capture path (captureFast.ts and all it loads: Effect, the core, the adapters) is
 * also bundled as one script (`dist/cli/chunks/captureBundle.cjs`, scripts/bundleCli.mjs), so a cold
 * process deserialises its compiled code (codeCache.ts) instead of parsing and compiling about
 * 3 MB of JavaScript on every turn. Loads only Node built-ins until it has decided.
 *
 * Invariants:
 * - the program is captureFast's, bundled from the same compiled modules as the ESM chunks: same
 *   point, same output, same exit code; the bundle only changes how the code is loaded;
 * - what captureFast would leave to the full CLI (a command line that is not plain,
 *   `REWIND_CAPTURE_FAST=off`) is left to it before the bundle is loaded, so such a command does
 *   not load Effect twice;
 * - no cache directory to use (`REWIND_CODE_CACHE=off`, codeCache.ts), no bundle (an unbundled
 *   `dist/cli/bin.js`) or one that fails to load: captureFast's ESM module runs the capture
 *   instead, as before the bundle (nothing of the capture has run yet then);
 * - the cache is written only after a capture that succeeded (a run that failed early compiled
 *   little of the capture path; the next run writes a fuller one).
 */
import { plainCaptureArgs } from "./plainCaptureArgs.js"

type Env = Readonly<Record<string, string | undefined>>
type CaptureFast = (args: ReadonlyArray<string>, env?: Env, cwd?: string) => Promise<number | undefined>

/** The bundle's place beside the bin's chunks: relative lookups from it are theirs (nativeModule.ts). */
export const CAPTURE_BUNDLE = "chunks/captureBundle.cjs"

/**
 * Runs `capture` with `args` (after `capture`) from the bundle `file`: the exit code, or undefined
 * for the full CLI.
 */
export const captureCached = async (
  args: ReadonlyArray<string>,
  file: string,
  env: Env = process.env,
  cwd: string = process.cwd(),
): Promise<number | undefined> => {
  if (env.REWIND_CAPTURE_FAST === "off" || plainCaptureArgs(args, cwd) === undefined) return undefined
  const bundle = (await import("./codeCache.js")).bundleExport<CaptureFast>(file, "captureFast", env)
  const run = bundle?.run ?? (await import("./captureFast.js")).captureFast
  const code = await run(args, env, cwd)
  if (code === 0) bundle?.saveCache()
  return code
}
