/**
 * The full CLI as one function, the entry of its bundle (dist/cli/chunks/cliBundle.cjs,
 * scripts/bundleCli.mjs) and of its ESM fallback (main.ts): every command but the ones the bin
 * answers itself (bin.ts) runs through here, so both ways of loading it run the same program.
 */
import { runCli } from "./app.js"
import { endQuietlyOnBrokenPipe } from "./cliExit.js"

/** Runs the command line `argv` (as `process.argv`); resolves to its exit code. */
export const fullCli = (argv: ReadonlyArray<string>): Promise<number> => {
  endQuietlyOnBrokenPipe()
  return runCli(argv)
}
