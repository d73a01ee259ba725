/**
 * `rewind capture` without the option parser: the repeat capture before every model request is
 * the CLI's hottest command, and loading @effect/cli (its command tree, with YAML and TOML parsers
 * for config files) cost about as much CPU as git's whole `add -A` + `write-tree` on a 28k-file
 * tree. The bin (bin.ts) tries this after the server hand-over (captureClient.ts) and before the
 * full CLI; it runs the very program the `capture` command runs (captureRun.ts), ends as the full
 * CLI ends (cliExit.ts), and loads neither the parser nor any other command.
 *
 * Invariants:
 * - only a plain command line is taken, read by the one reading the server hand-over uses too
 *   (plainCaptureArgs.ts); anything else goes to the full CLI, which parses, refuses and words its
 *   usage errors as it always has;
 * - the point and the output are the full CLI's: same program, same `"via":"process"` line;
 * - `REWIND_CAPTURE_FAST=off` turns it off (the full CLI then runs every capture).
 */
import { SessionId, TurnId } from "@rewind/contracts"
import { Effect, Option, Schema } from "effect"
import { type CaptureArgs, runCapture } from "./captureRun.js"
import { endQuietlyOnBrokenPipe, exitCodeOf } from "./cliExit.js"
import { plainCaptureArgs } from "./plainCaptureArgs.js"

type Env = Readonly<Record<string, string | undefined>>

const decodeSession = Schema.decodeUnknownOption(SessionId)
const decodeTurn = Schema.decodeUnknownOption(TurnId)

/** The arguments after `capture`, when this path may take them; undefined otherwise. */
export const parseFastCaptureArgs = (args: ReadonlyArray<string>, cwd: string): CaptureArgs | undefined => {
  const plain = plainCaptureArgs(args, cwd)
  if (plain === undefined) return undefined
  const session = Option.fromNullable(plain.session)
  const turn = Option.fromNullable(plain.turn)
  const sessionId = Option.flatMap(session, decodeSession)
  const turnId = Option.flatMap(turn, decodeTurn)
  if (Option.isSome(session) && Option.isNone(sessionId)) return undefined
  if (Option.isSome(turn) && Option.isNone(turnId)) return undefined
  return {
    json: plain.json,
    workspace: Option.some(plain.workspace),
    dir: Option.fromNullable(plain.dir),
    session: sessionId,
    turn: turnId,
    paths: [],
    maxFiles: Option.fromNullable(plain.maxFiles),
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
