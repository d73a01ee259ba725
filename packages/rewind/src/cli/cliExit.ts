/**
 * How a command's run ends, shared by the full CLI (app.ts) and the capture fast path
 * (captureFast.ts) so both end the same way: a `CliFailure` prints its message on stderr (and an
 * `error` JSON line with `--json`) and exits with its code; any other failure is a defect (exit 2)
 * reported the same way. Also the guard that makes a reader closing our stdout early
 * (`rewind points --json | head -1`) an ordinary end, not a crash. Nothing here loads the option
 * parser.
 */
import { Cause, type Exit } from "effect"
import { CliFailure, ExitCode, JSON_FORMAT_VERSION, red } from "./output.js"

/** Writes `failure` on stderr, and as an `error` JSON line on stdout with `--json`. */
export const reportFailure = (failure: CliFailure, json: boolean) => {
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

/**
 * The exit code of a run, its failure reported. `isUsage`: whether a failure is the parser's own
 * usage error (it has printed the help already): exit 3, nothing more said.
 */
export const exitCodeOf = (
  exit: Exit.Exit<unknown, unknown>,
  json: boolean,
  isUsage: (error: unknown) => boolean = () => false,
): ExitCode => {
  if (exit._tag === "Success") return ExitCode.ok
  const error = Cause.squash(exit.cause)
  if (error instanceof CliFailure) {
    reportFailure(error, json)
    return error.code
  }
  if (isUsage(error)) return ExitCode.usage
  reportFailure(
    new CliFailure({
      code: ExitCode.failed,
      message: error instanceof Error ? error.message : String(error),
      reason: "defect",
    }),
    json,
  )
  return ExitCode.failed
}

/** A reader that stops early (`rewind points --json | head -1`) is not an error of ours. */
export const endQuietlyOnBrokenPipe = () => {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EPIPE") process.exit(process.exitCode ?? 0)
      throw error
    })
  }
}
