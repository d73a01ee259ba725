/**
 * The CLI's snapshot commands over the service's point operations: `capture` (a point of the
 * workspace, with a progress bar on long captures), `points` (a session's points) and
 * `gc [--dry-run]` (garbage collection of the artifact store). `diff <point>` is diffCommand.ts;
 * restoring a point is `preview <point>` then `restore <point> --token`.
 */
import { Command, Options } from "@effect/cli"
import { normaliseWorkspacePath, TurnId, workspacePathProblem } from "@rewind/contracts"
import { DEFAULT_CAPTURE_SETTINGS } from "@rewind/core"
import { Effect, Option, Schema } from "effect"
import { runCapture } from "./captureRun.js"
import { bytes, CliFailure, dim, ExitCode, iso, table, yellow } from "./output.js"
import { pointRecord } from "./pointRecord.js"
import { common, expect, resolveSession, sessionOption, usage, withRewind } from "./store.js"

export { CLI_CAPTURE_SESSION_ID, captureSession } from "./captureRun.js"

/**
 * A `--path` value as the user typed it: `runCli` hands path values to the parser JSON-quoted so
 * it cannot trim or drop them (see app.ts), and they are normalised here (`./a` → `a`), never
 * trimmed: ` lead.txt` is a legal name.
 */
const pathValue = (raw: string): string => {
  let value = raw
  try {
    const parsed: unknown = JSON.parse(raw)
    if (typeof parsed === "string") value = parsed
  } catch {
    // Not quoted: the command was run without runCli's quoting; the value is as given.
  }
  return normaliseWorkspacePath(value)
}

export const capture = Command.make(
  "capture",
  {
    ...common,
    session: sessionOption,
    turn: Options.text("turn").pipe(
      Options.withSchema(TurnId),
      Options.withDescription(
        "The turn the point belongs to (one point per turn: capturing it again reports the existing point). Default: a new manual-<time> turn",
      ),
      Options.optional,
    ),
    paths: Options.text("path").pipe(
      Options.withDescription("A workspace path to track even if the scan would not reach it (repeatable)"),
      Options.repeated,
    ),
    maxFiles: Options.integer("max-files").pipe(
      Options.withSchema(
        Schema.Int.pipe(Schema.positive({ message: () => "--max-files must be a whole number, 1 or more" })),
      ),
      Options.withDescription(
        `The scan stops after this many entries and reports the rest as left out of budget (default ${DEFAULT_CAPTURE_SETTINGS.maxFiles.toLocaleString("en-US")})`,
      ),
      Options.optional,
    ),
  },
  (o) => {
    const paths = o.paths.map(pathValue)
    const bad = paths.find((p) => workspacePathProblem(p) !== undefined)
    if (bad !== undefined) {
      // Quoted only when the bare value would hide what is wrong with it (nothing, or spaces at an end).
      const shown = bad.length > 0 && bad.trim() === bad ? bad : JSON.stringify(bad)
      return usage(`--path ${shown}: ${workspacePathProblem(bad)}`)
    }
    return runCapture({ ...o, paths })
  },
).pipe(
  Command.withDescription("Capture a point: the workspace as it is now (bounded scan, ignore rules apply)"),
)

export const points = Command.make("points", { ...common, session: sessionOption }, (o) =>
  withRewind(o, false, (rewind, out) =>
    Effect.gen(function* () {
      const sessionId = yield* resolveSession(rewind, o.session)
      const all = yield* expect(rewind.listPoints(sessionId))
      for (const p of all) yield* out.record("point", pointRecord(sessionId, p))
      yield* out.human(
        all.length === 0
          ? dim(`session ${sessionId} has no point yet (rewind capture makes one)`)
          : table(
              ["POINT", "KIND", "TURN", "CAPTURED", "FILES", "SIZE", "LEFT OUT"],
              all.map((p) => [
                p.pointId,
                p.kind,
                p.turnId,
                iso(p.capturedAt),
                String(p.files),
                bytes(p.bytes),
                p.skipped.length === 0 ? "" : yellow(String(p.skipped.length)),
              ]),
            ),
      )
    }),
  ),
).pipe(Command.withDescription("List a session's points (turn captures and rescue points), oldest first"))

const count = (name: string, description: string) =>
  Options.integer(name).pipe(
    Options.withSchema(
      Schema.Int.pipe(Schema.nonNegative({ message: () => `--${name} must be a whole number, 0 or more` })),
    ),
    Options.withDescription(description),
    Options.optional,
  )

export const gc = Command.make(
  "gc",
  {
    ...common,
    dryRun: Options.boolean("dry-run").pipe(
      Options.withDescription("Report what would be deleted; delete nothing"),
    ),
    keepLast: count(
      "keep-last",
      "Keep only the newest N points of each kind per session as roots (default: all)",
    ),
    graceMinutes: count(
      "grace-minutes",
      "Never delete content younger than this, for operations in flight (default 10)",
    ),
  },
  (o) =>
    withRewind(o, false, (rewind, out) =>
      Effect.gen(function* () {
        const options = {
          ...(Option.isSome(o.keepLast) ? { retention: { keepLastPoints: o.keepLast.value } } : {}),
          ...(Option.isSome(o.graceMinutes) ? { graceMs: o.graceMinutes.value * 60_000 } : {}),
        }
        out.progress(o.dryRun ? "collecting (dry run)…" : "collecting…")
        const report = yield* expect(
          o.dryRun ? rewind.previewCleanup(options) : rewind.cleanup(options),
        ).pipe(Effect.ensuring(Effect.sync(out.endProgress)))
        yield* out.record("gc", {
          dryRun: o.dryRun,
          swept: report.swept,
          reason: report.reason ?? null,
          deleted: report.deleted.length,
          deletedBytes: report.deletedBytes,
          deletedHashes: report.deleted,
          keptYoung: report.keptYoung,
          releasedPoints: report.releasedPoints,
        })
        if (!report.swept) {
          return yield* new CliFailure({
            code: ExitCode.failed,
            message: report.reason ?? "the collection stopped; nothing was deleted",
            reason: "gc_stopped",
          })
        }
        const verb = o.dryRun ? "would delete" : "deleted"
        yield* out.human(
          `${verb} ${report.deleted.length} blob(s), ${bytes(report.deletedBytes)}; kept ${report.keptYoung} young blob(s) (grace window)`,
        )
        if (report.releasedPoints.length > 0) {
          yield* out.human(
            `${report.releasedPoints.length} point(s) released by retention (their manifests stay readable)`,
          )
        }
      }),
    ),
).pipe(
  Command.withDescription(
    "Garbage-collect the artifact store: keep what points, checkpoints, rescue points and redo entries need",
  ),
)
