/**
 * The `rewind` command line: the root command over `commands`, and how a run ends — exit 0 ok,
 * 1 partial, 2 failed, 3 usage (bad arguments; @effect/cli has already printed the help).
 */
import { Command, ValidationError } from "@effect/cli"
import { NodeContext } from "@effect/platform-node"
import { Cause, Effect, Exit } from "effect"
import { commands } from "./commands.js"
import { CliFailure, ExitCode, JSON_FORMAT_VERSION, red } from "./output.js"

export const VERSION = "0.1.0"

const root = Command.make("rewind").pipe(
  Command.withDescription("Checkpoints, rewind and fork for AI coding agents"),
  Command.withSubcommands(commands),
)

const cli = Command.run(root, { name: "rewind", version: VERSION })

const report = (failure: CliFailure, json: boolean) => {
  process.stderr.write(`${red("error")}: ${failure.message}\n`)
  if (json) {
    process.stdout.write(
      `${JSON.stringify({
        v: JSON_FORMAT_VERSION,
        type: "error",
        code: failure.code,
        reason: failure.reason,
        message: failure.message,
        ...(failure.details === undefined ? {} : { details: failure.details }),
      })}\n`,
    )
  }
}

/** Runs the CLI on `argv` (as `process.argv`) and resolves with the exit code. */
export const runCli = async (argv: ReadonlyArray<string>): Promise<ExitCode> => {
  const json = argv.includes("--json")
  const exit = await Effect.runPromiseExit(cli(argv).pipe(Effect.provide(NodeContext.layer)))
  if (Exit.isSuccess(exit)) return ExitCode.ok
  const error = Cause.squash(exit.cause)
  if (error instanceof CliFailure) {
    report(error, json)
    return error.code
  }
  if (ValidationError.isValidationError(error)) return ExitCode.usage
  report(
    new CliFailure({
      code: ExitCode.failed,
      message: error instanceof Error ? error.message : String(error),
      reason: "defect",
    }),
    json,
  )
  return ExitCode.failed
}
