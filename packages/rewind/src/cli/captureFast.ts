/**
 * `rewind capture` without the option parser: the repeat capture before every model request is
 * the CLI's hottest command, and loading @effect/cli (its command tree, with YAML and TOML parsers
 * for config files) cost about as much CPU as git's whole `add -A` + `write-tree` on a 28k-file
 * tree. The bin (bin.ts) tries this after the server hand-over (captureClient.ts) and before the
 * full CLI; it runs the very program the `capture` command runs (captureRun.ts), ends as the full
 * CLI ends (cliExit.ts), and loads neither the parser nor any other command.
 *
 * Invariants:
 * - only arguments whose meaning is certain are taken: `--json`, and `--workspace`, `--dir`,
 *   `--session`, `--turn`, `--max-files` (as `--x v` or `--x=v`, each at most once) with values the
 *   full CLI would accept; anything else (`--path`, `--help`, a repeated or unknown option, a value
 *   it would refuse, one that starts with `-`) goes to the full CLI, which parses, refuses and
 *   words its usage errors as it always has;
 * - the point and the output are the full CLI's: same program, same `"via":"process"` line;
 * - `REWIND_CAPTURE_FAST=off` turns it off (the full CLI then runs every capture).
 */
import { statSync } from "node:fs"
import { resolve } from "node:path"
import { SessionId, TurnId } from "@rewind/contracts"
import { Effect, Option, Schema } from "effect"
import { type CaptureArgs, runCapture } from "./captureRun.js"
import { endQuietlyOnBrokenPipe, exitCodeOf } from "./cliExit.js"

type Env = Readonly<Record<string, string | undefined>>

const OPTIONS = new Set(["--workspace", "--dir", "--session", "--turn", "--max-files"])
/** A whole number the CLI's `--max-files` takes (1 or more), kept well inside safe integers. */
const WHOLE = /^[1-9][0-9]{0,14}$/

const decodeSession = Schema.decodeUnknownOption(SessionId)
const decodeTurn = Schema.decodeUnknownOption(TurnId)

/** The arguments after `capture`, when this path may take them; undefined otherwise. */
export const parseFastCaptureArgs = (args: ReadonlyArray<string>, cwd: string): CaptureArgs | undefined => {
  const values = new Map<string, string>()
  let json = false
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--json") {
      if (json) return undefined
      json = true
      continue
    }
    const eq = arg.indexOf("=")
    const name = eq < 0 ? arg : arg.slice(0, eq)
    if (!OPTIONS.has(name) || values.has(name)) return undefined
    const value = eq < 0 ? args[++i] : arg.slice(eq + 1)
    if (value === undefined || value === "" || value.startsWith("-")) return undefined
    values.set(name, value)
  }
  const session = Option.fromNullable(values.get("--session"))
  const turn = Option.fromNullable(values.get("--turn"))
  const maxFiles = Option.fromNullable(values.get("--max-files"))
  const sessionId = Option.flatMap(session, decodeSession)
  const turnId = Option.flatMap(turn, decodeTurn)
  if (Option.isSome(session) && Option.isNone(sessionId)) return undefined
  if (Option.isSome(turn) && Option.isNone(turnId)) return undefined
  if (Option.isSome(maxFiles) && !WHOLE.test(maxFiles.value)) return undefined
  const workspace = values.get("--workspace")
  if (workspace !== undefined) {
    try {
      // The CLI refuses a workspace that is not an existing directory: its message, not ours.
      if (!statSync(resolve(cwd, workspace)).isDirectory()) return undefined
    } catch {
      return undefined
    }
  }
  return {
    json,
    workspace: Option.fromNullable(workspace),
    dir: Option.fromNullable(values.get("--dir")),
    session: sessionId,
    turn: turnId,
    paths: [],
    maxFiles: Option.map(maxFiles, Number),
  }
}

/** Runs `capture` with `args` (after `capture`): the exit code, or undefined for the full CLI. */
export const captureFast = async (
  args: ReadonlyArray<string>,
  env: Env = process.env,
  cwd: string = process.cwd(),
): Promise<number | undefined> => {
  if (env.REWIND_CAPTURE_FAST === "off") return undefined
  const parsed = parseFastCaptureArgs(args, cwd)
  if (parsed === undefined) return undefined
  endQuietlyOnBrokenPipe()
  return exitCodeOf(await Effect.runPromiseExit(runCapture(parsed)), parsed.json)
}
