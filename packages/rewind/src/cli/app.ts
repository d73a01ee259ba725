/**
 * The `rewind` command line: the root command over `commands`, and how a run ends — exit 0 ok,
 * 1 partial, 2 failed, 3 usage (bad arguments; @effect/cli has already printed the help).
 *
 * Two things @effect/cli does not do for us are done here, before and around its parser:
 * - path values are passed through untouched. Its parser trims the values of a repeated option and
 *   drops empty ones, so `--path " lead.txt"` would name `lead.txt` and `--path ""` would vanish;
 *   `--path` values are therefore handed to it JSON-quoted (trimming cannot reach inside the
 *   quotes) and unquoted by the option's own Schema (`pathValue` in snapshotCommands.ts);
 * - its help and usage text is styled with ANSI codes whatever the stream; with colour off (not a
 *   terminal, or `NO_COLOR` set, see `colourEnabled`) the codes are stripped from what it prints.
 */
import { Command, ValidationError } from "@effect/cli"
// The module itself, not the package index: the index re-exports the HTTP and cluster modules,
// which drag undici (1 MB) into the start of every command.
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Console, Effect } from "effect"
import { mcp } from "../mcp/mcpCommand.js"
import { serve } from "../server/serveCommand.js"
import { ui } from "../ui/uiCommand.js"
import { exitCodeOf } from "./cliExit.js"
import { commands } from "./commands.js"
import { colourEnabled, type ExitCode, stripAnsi } from "./output.js"
import { VERSION } from "./version.js"

export { VERSION } from "./version.js"

const root = Command.make("rewind").pipe(
  Command.withDescription("Checkpoints, rewind and fork for AI coding agents"),
  Command.withSubcommands([...commands, serve, mcp, ui]),
)

const cli = Command.run(root, { name: "rewind", version: VERSION })

/** Repeated options whose values are paths: quoted for the parser, so it can neither trim nor drop them. */
const PATH_OPTIONS = new Set(["--path"])
/**
 * Single-valued path options: only split when written `--dir=v`, because the parser trims such an
 * argument as a whole (a trailing space of the value would go); a separate value is kept as is.
 */
const SPLIT_OPTIONS = new Set(["--dir", "--workspace"])

/**
 * `argv` with every `--path` value JSON-quoted (`--path=v` split into `--path`, `"v"`) and every
 * `--dir=v` / `--workspace=v` split into two arguments.
 */
export const quotePathValues = (argv: ReadonlyArray<string>): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === "--") {
      out.push(...argv.slice(i))
      break
    }
    const eq = arg.indexOf("=")
    const name = arg.startsWith("--") && eq > 0 ? arg.slice(0, eq) : undefined
    if (name !== undefined && PATH_OPTIONS.has(name)) {
      out.push(name, JSON.stringify(arg.slice(eq + 1)))
    } else if (name !== undefined && SPLIT_OPTIONS.has(name)) {
      out.push(name, arg.slice(eq + 1))
    } else if (PATH_OPTIONS.has(arg) && i + 1 < argv.length) {
      out.push(arg, JSON.stringify(argv[++i]!))
    } else {
      out.push(arg)
    }
  }
  return out
}

/** The default console, minus ANSI codes: @effect/cli styles its help whatever the stream. */
const plainConsole = Effect.map(
  Console.consoleWith(Effect.succeed),
  (console): Console.Console => ({
    ...console,
    log: (...args) => console.log(...args.map((a) => (typeof a === "string" ? stripAnsi(a) : a))),
    error: (...args) => console.error(...args.map((a) => (typeof a === "string" ? stripAnsi(a) : a))),
  }),
)

/** Runs the CLI on `argv` (as `process.argv`) and resolves with the exit code. */
export const runCli = async (argv: ReadonlyArray<string>): Promise<ExitCode> => {
  const json = argv.includes("--json")
  const program = cli(quotePathValues(argv)).pipe(Effect.provide(NodeContext.layer))
  const exit = await Effect.runPromiseExit(
    colourEnabled(process.stdout, process.env)
      ? program
      : Effect.flatMap(plainConsole, (console) => Effect.withConsole(program, console)),
  )
  return exitCodeOf(exit, json, ValidationError.isValidationError)
}
