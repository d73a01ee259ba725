/**
 * The one reading of a plain `rewind capture` command line, shared by the two paths that run a
 * capture before the full CLI is loaded: the hand-over to a running server (captureClient.ts) and
 * the in-process capture without the option parser (captureFast.ts). Two readings would drift
 * apart, and one of them would then take a command line the full CLI refuses or reads otherwise.
 * Only Node built-ins are loaded: the hand-over runs before anything else.
 *
 * Invariants:
 * - taken are `--json` and `--workspace`, `--dir`, `--session`, `--turn`, `--max-files` (as
 *   `--x v` or `--x=v`, each at most once), with values the full CLI would accept: not empty, not
 *   starting with `-`, ids as contracts' `ID_PATTERN`, `--max-files` a whole number from 1, a
 *   workspace that is an existing directory;
 * - anything else (`--path`, `--help`, a repeated or unknown option, a value the CLI would refuse)
 *   is undefined: the full CLI parses it, refuses it and words its usage errors as it always has.
 */
import { statSync } from "node:fs"
import { resolve } from "node:path"
import { commandWorkspace } from "../workspaceRoot.js"

/** Contracts' `ID_PATTERN` (ids.ts), copied because importing contracts loads Effect; a test pins it. */
export const PLAIN_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/
/** A whole number `--max-files` takes (1 or more), kept well inside safe integers. */
const WHOLE = /^[1-9][0-9]{0,14}$/
const OPTIONS = new Set(["--workspace", "--dir", "--session", "--turn", "--max-files"])

export interface PlainCaptureArgs {
  readonly json: boolean
  /** The workspace (absolute): as given, or found from the caller's cwd (workspaceRoot.ts). */
  readonly workspace: string
  readonly dir?: string
  readonly session?: string
  readonly turn?: string
  readonly maxFiles?: number
}

/** The arguments after `capture`, when they are plain; undefined otherwise. */
export const plainCaptureArgs = (args: ReadonlyArray<string>, cwd: string): PlainCaptureArgs | undefined => {
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
  const session = values.get("--session")
  const turn = values.get("--turn")
  const maxFiles = values.get("--max-files")
  if (session !== undefined && !PLAIN_ID.test(session)) return undefined
  if (turn !== undefined && !PLAIN_ID.test(turn)) return undefined
  if (maxFiles !== undefined && !WHOLE.test(maxFiles)) return undefined
  const workspace = values.get("--workspace")
  try {
    // The CLI refuses a workspace that is not an existing directory: its message, not ours.
    if (!statSync(resolve(cwd, workspace ?? ".")).isDirectory()) return undefined
  } catch {
    return undefined
  }
  const dir = values.get("--dir")
  // The workspace the full CLI would act on (workspaceRoot.ts): named, or found from `cwd`.
  const root = commandWorkspace(cwd, { workspace, dir })
  return {
    json,
    workspace: root,
    ...(dir === undefined ? {} : { dir }),
    ...(session === undefined ? {} : { session }),
    ...(turn === undefined ? {} : { turn }),
    ...(maxFiles === undefined ? {} : { maxFiles: Number(maxFiles) }),
  }
}
