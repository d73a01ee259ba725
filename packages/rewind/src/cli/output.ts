/**
 * How the CLI speaks: human output (aligned tables, colour only on a TTY, progress on stderr) or,
 * with `--json`, JSON Lines on stdout where every line carries the format version `v`.
 * Also the exit codes and the failure that carries one.
 */
import type { DiffSide } from "@rewind/core"
import { Data, Effect } from "effect"
import { inertProgressBar, makeProgressBar, type ProgressBar } from "./progressBar.js"

/** The JSON Lines format version; bump when a line's shape changes incompatibly. */
export const JSON_FORMAT_VERSION = 1

export const ExitCode = { ok: 0, partial: 1, failed: 2, usage: 3 } as const
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode]

/** Ends a command with a non-zero exit code; `message` goes to stderr (and as a JSON line). */
export class CliFailure extends Data.TaggedError("CliFailure")<{
  readonly code: ExitCode
  readonly message: string
  /** A refusal kind or error tag, for `--json` consumers. */
  readonly reason: string
  /** The refusal's details (e.g. the files in conflict), added to the `--json` error line. */
  readonly details?: unknown
}> {}

/** Colour only on a terminal, and never when `NO_COLOR` is set to anything but "" (no-color.org). */
export const colourEnabled = (
  stream: { readonly isTTY?: boolean },
  env: Readonly<Record<string, string | undefined>>,
): boolean => stream.isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === "")

const colour = (code: string) => (s: string) =>
  colourEnabled(process.stdout, process.env) ? `\x1b[${code}m${s}\x1b[0m` : s
export const bold = colour("1")
export const dim = colour("2")
export const red = colour("31")
export const green = colour("32")
export const yellow = colour("33")

// biome-ignore lint/suspicious/noControlCharactersInRegex: a path's control characters, to show them escaped
const CONTROL = /[\x00-\x1f\x7f-\x9f]/g
/**
 * A workspace path for a terminal line: its control characters as `\xNN`, so a hostile name (one
 * a capture leaves out as `unsupported_name`) is shown, not obeyed by the terminal.
 */
export const shownPath = (path: string) =>
  path.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`)

/** A path a command left out or could not take, and why: `path: reason (detail)`. */
export const leftOutLine = (s: {
  readonly path: string
  readonly reason: string
  readonly detail?: string | undefined
}) => `${shownPath(s.path)}: ${s.reason}${s.detail ? ` (${s.detail})` : ""}`

/**
 * A path a restore leaves alone because the protection policy keeps it (`.git`, the store, what the
 * ignore rules exclude now, a link leading out of the root): its line in a preview or a redo,
 * `kept path: kind (message)`. A preview lists
 * them so that what a restore will not put back is never silent.
 */
export const keptLine = (k: { readonly path: string; readonly kind: string; readonly message: string }) =>
  `${yellow("kept")} ${leftOutLine({ path: k.path, reason: k.kind, detail: withoutSubject(k.path, k.message) })}`

/**
 * A path the point's capture left out (a nested repository, a file over the size limit...): the
 * point holds nothing of it, so a restore leaves it as it is. Said, so that a restore is never
 * taken for more than it is.
 */
export const notInPointLine = (s: {
  readonly path: string
  readonly reason: string
  readonly detail?: string | undefined
}) => `${yellow("not in the point")} ${leftOutLine(s)}: left as it is`

/** At most this many lines of a list of paths in human output; `--json` lists every one. */
const PATHS_SHOWN = 10

/** The first few of `all` as lines, then one line saying how many more. */
const cappedLines = <A>(
  all: ReadonlyArray<A>,
  line: (a: A) => string,
  more: (n: number) => string,
): ReadonlyArray<string> =>
  all.length <= PATHS_SHOWN
    ? all.map(line)
    : [...all.slice(0, PATHS_SHOWN).map(line), more(all.length - PATHS_SHOWN)]

type Skipped = { readonly path: string; readonly reason: string; readonly detail?: string | undefined }

/** The human lines for what a point left out: the first few, then how many more. */
export const notInPointLines = (all: ReadonlyArray<Skipped>): ReadonlyArray<string> =>
  cappedLines(
    all,
    notInPointLine,
    (n) => `${yellow("not in the point")} and ${n} more path(s) (--json lists them)`,
  )

/**
 * The human lines for what a later capture left out (a name no point can record, a nested
 * repository cloned since...): no point holds it, so a restore to an earlier turn leaves it as it is.
 */
export const leftOutLaterLines = (all: ReadonlyArray<Skipped>): ReadonlyArray<string> =>
  cappedLines(
    all,
    (s) => `${yellow("left alone")} ${leftOutLine(s)}: a later capture left it out, so no point holds it`,
    (n) => `${yellow("left alone")} and ${n} more path(s) a later capture left out (--json lists them)`,
  )

/** The policy's message names the path it is about ("a.log is excluded by …"): the line already does. */
const withoutSubject = (path: string, message: string) =>
  message.startsWith(`${path} is `)
    ? message.slice(path.length + 4)
    : message.startsWith(`${path} `)
      ? message.slice(path.length + 1)
      : message

// biome-ignore lint/suspicious/noControlCharactersInRegex: stripping ANSI colour codes to measure width
const ANSI = /\x1b\[[0-9;]*m/g
const width = (s: string) => s.replace(ANSI, "").length
/** Text without its ANSI style codes (SGR sequences), for a stream that is not a colour terminal. */
export const stripAnsi = (s: string) => s.replace(ANSI, "")

/** Columns padded to their widest cell; the last column is not padded. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const all = [header.map(bold), ...rows]
  const widths = header.map((_, i) => Math.max(...all.map((r) => width(r[i] ?? ""))))
  return all
    .map((r) =>
      r
        .map((cell, i) => (i === r.length - 1 ? cell : cell + " ".repeat(widths[i]! - width(cell))))
        .join("  "),
    )
    .join("\n")
}

export interface Output {
  readonly json: boolean
  /** One JSON line (`{"v":1,"type":…}`) in `--json` mode; nothing otherwise. */
  readonly record: (type: string, fields: Record<string, unknown>) => Effect.Effect<void>
  /** Human text; nothing in `--json` mode. */
  readonly human: (text: string) => Effect.Effect<void>
  /** A progress line on stderr, overwritten in place; only on a TTY and never in `--json` mode. */
  readonly progress: (text: string) => void
  readonly endProgress: () => void
  /** A progress bar on stderr for a long capture; inert when not on a TTY or in `--json` mode. */
  readonly captureBar: () => ProgressBar
}

export const makeOutput = (json: boolean): Output => {
  const live = !json && process.stderr.isTTY === true
  return {
    captureBar: () =>
      live ? makeProgressBar({ stream: process.stderr, now: Date.now, style: dim }) : inertProgressBar,
    json,
    record: (type, fields) =>
      json
        ? Effect.sync(() =>
            process.stdout.write(`${JSON.stringify({ v: JSON_FORMAT_VERSION, type, ...fields })}\n`),
          )
        : Effect.void,
    human: (text) => (json ? Effect.void : Effect.sync(() => process.stdout.write(`${text}\n`))),
    progress: (text) => {
      if (live) process.stderr.write(`\r\x1b[2K${dim(text)}`)
    },
    endProgress: () => {
      if (live) process.stderr.write("\r\x1b[2K")
    },
  }
}

/** A timestamp as `YYYY-MM-DD hh:mm:ss` (UTC). */
/** The warning every store-opening command gives on stderr when the store cannot be written. */
export const readOnlyWarning = (reason: string) => `warning: the store is read-only: ${reason}\n`

export const iso = (millis: number) => new Date(millis).toISOString().replace("T", " ").slice(0, 19)

/** Text on one line, cut to `max` characters. */
export const oneLine = (text: string, max = 72) => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

/** A byte count for people: 1.2 MiB. */
export const bytes = (n: number): string => {
  if (n < 1024) return `${n} B`
  const units = ["KiB", "MiB", "GiB", "TiB"]
  let value = n / 1024
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${value.toFixed(1)} ${units[unit]}`
}

/** One side of a diff entry, short: absent, a link's target, or a hash prefix and the mode. */
export const describeSide = (side: DiffSide | null) =>
  side === null
    ? "(absent)"
    : side.kind === "link"
      ? `-> ${side.target}`
      : `${side.hash.slice(0, 12)} ${side.mode.toString(8)}`

/** A unified diff, coloured per line (headers bold, additions green, removals red, hunks dim). */
export const colourPatch = (patch: string) =>
  patch
    .split("\n")
    .map((line) =>
      line.startsWith("+++") || line.startsWith("---")
        ? bold(line)
        : line.startsWith("+")
          ? green(line)
          : line.startsWith("-")
            ? red(line)
            : line.startsWith("@@")
              ? dim(line)
              : line,
    )
    .join("\n")
