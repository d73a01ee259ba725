/**
 * The full CLI in this process, from its bundle with its V8 code cache: the bin (bin.ts) runs this
 * for every command it does not answer itself or hand to the capture path. The full CLI (app.ts,
 * every command, the option parser, Effect, the core and the adapters) is bundled as one script
 * (`dist/cli/chunks/cliBundle.cjs`, scripts/bundleCli.mjs) whose heavy parts (the MCP SDK, the
 * servers, the store) stay lazily initialised as in the ESM chunks, so a cold process deserialises
 * compiled code (codeCache.ts) instead of parsing and compiling the chunks on every command.
 * Loads only Node built-ins and codeCache.ts until it has decided.
 *
 * Invariants:
 * - the program is cliBundle.ts's `fullCli` either way, bundled from the same compiled modules as
 *   the ESM chunks: same output, same exit code; the bundle only changes how the code is loaded;
 * - no cache directory to use (`REWIND_CODE_CACHE=off`), no bundle (an unbundled
 *   `dist/cli/bin.js`) or one that fails to load: main.ts's ESM modules run the command instead
 *   (nothing of the command has run yet then);
 * - the cache is written only after a command that exited 0 (one that failed early, `--help`
 *   aside, compiled little of the CLI; the next run writes a fuller one).
 */
type FullCli = (argv: ReadonlyArray<string>) => Promise<number>

/** The bundle's place beside the bin's chunks: relative lookups from it are theirs. */
export const CLI_BUNDLE = "chunks/cliBundle.cjs"

/** Runs the command line `argv` from the bundle `file`, or from the ESM modules when it cannot be used. */
export const runFullCli = async (
  file: string,
  argv: ReadonlyArray<string> = process.argv,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<void> => {
  const bundle = (await import("./codeCache.js")).bundleExport<FullCli>(file, "fullCli", env)
  if (bundle === undefined) {
    await import("./main.js")
    return
  }
  const code = await bundle.run(argv)
  process.exitCode = code
  if (code === 0) bundle.saveCache()
}
