/**
 * What `rewind capture` does once its arguments are parsed: the session to capture into (the
 * newest, or the CLI's own in an empty store), the point, and its report (a `point` JSON line with
 * `"via":"process"`, or a human line, and the paths left out). Shared by the @effect/cli command
 * (snapshotCommands.ts) and the capture fast path (captureFast.ts), so both produce the same point
 * and the same output; nothing here loads the option parser.
 */
import { randomBytes } from "node:crypto"
import type { PointCaptured, SessionId, TurnId } from "@rewind/contracts"
import { Effect, Option } from "effect"
import { bold, bytes, CliFailure, dim, ExitCode, iso, leftOutLine, type Output, yellow } from "./output.js"
import { pointRecord, scanRecord } from "./pointRecord.js"
import { type CliRewind, type CommonOptions, expect, withRewind } from "./storeAccess.js"

/** `capture`'s arguments, parsed and checked (`--path` values normalised and valid). */
export interface CaptureArgs extends CommonOptions {
  readonly session: Option.Option<SessionId>
  readonly turn: Option.Option<TurnId>
  readonly paths: ReadonlyArray<string>
  readonly maxFiles: Option.Option<number>
}

const warnSkipped = (out: Output, p: PointCaptured) =>
  Effect.forEach(p.skipped, (s) => out.human(`${yellow("left out")} ${leftOutLine(s)}`), { discard: true })

/** A turn id for a capture a person asked for: sortable by time, unique per call. */
const manualTurnId = (): TurnId => {
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z")
  return `manual-${stamp}-${randomBytes(3).toString("hex")}` as TurnId
}

/**
 * The id of the session `capture` creates in an empty store. Fixed, so captures racing on an empty
 * store (several processes at once) all create, or find, the same one: the store admits one
 * `SessionCreated` per id (the first append at version 0 wins), and the others use it.
 */
export const CLI_CAPTURE_SESSION_ID = "ses_rewind_cli_captures" as SessionId

/** The session to capture into: `--session`, the newest, or (in an empty store) the CLI's own. */
export const captureSession = (rewind: CliRewind, out: Output, session: Option.Option<SessionId>) =>
  Effect.gen(function* () {
    if (Option.isSome(session)) return session.value
    const all = yield* expect(rewind.listSessions())
    if (all[0] !== undefined) return all[0].sessionId
    const created = yield* rewind.createSession({
      sessionId: CLI_CAPTURE_SESSION_ID,
      title: "rewind CLI captures",
      cwd: rewind.workspaceRoot,
    })
    // Refused `conflict`: another capture created it between our read and our append.
    if (!created.ok) {
      if (created.refusal.kind === "conflict") return CLI_CAPTURE_SESSION_ID
      return yield* new CliFailure({
        code: ExitCode.failed,
        message: created.refusal.message,
        reason: created.refusal.kind,
      })
    }
    yield* out.record("session_created", { sessionId: created.value.id, title: created.value.title })
    yield* out.human(dim(`the store had no session: created ${created.value.id} for captures`))
    return created.value.id
  })

/** Captures a point of the workspace and reports it. */
export const runCapture = (o: CaptureArgs) =>
  withRewind(o, false, (rewind, out) =>
    Effect.gen(function* () {
      const sessionId = yield* captureSession(rewind, out, o.session)
      const turnId = Option.getOrElse(o.turn, manualTurnId)
      const bar = out.captureBar()
      const result = yield* expect(
        rewind.capturePoint(sessionId, turnId, {
          declaredPaths: o.paths,
          onProgress: bar.update,
          ...Option.match(o.maxFiles, {
            onNone: () => ({}),
            onSome: (maxFiles) => ({ settings: { maxFiles } }),
          }),
        }),
      ).pipe(Effect.ensuring(Effect.sync(bar.done)))
      if (result._tag === "NotCaptured") {
        return yield* new CliFailure({
          code: ExitCode.failed,
          message: result.reason,
          reason: "not_captured",
        })
      }
      const p = result.point
      // `via`: this process made it (cli/captureClient.ts hands it to a running server instead).
      yield* out.record("point", {
        ...pointRecord(sessionId, p),
        existing: result.existing,
        ...scanRecord(result.scan),
        via: "process",
      })
      yield* out.human(
        result.existing
          ? `turn ${p.turnId} already has point ${bold(p.pointId)} (captured ${iso(p.capturedAt)})`
          : `captured point ${bold(p.pointId)} for turn ${p.turnId}: ${p.files} file(s)${p.links > 0 ? `, ${p.links} symlink(s)` : ""}, ${bytes(p.bytes)}, ${p.tombstones} tombstone(s)${howFound(p.reusedManifest, result.scan)}`,
      )
      yield* warnSkipped(out, p)
    }),
  )

/** The human line's note on how a new point was found (see `scanRecord`). */
const howFound = (
  reusedManifest: boolean,
  scan: { readonly by: string; readonly rescanned?: number } | undefined,
): string => {
  const listed =
    scan?.rescanned === undefined
      ? undefined
      : `${scan.rescanned} director${scan.rescanned === 1 ? "y" : "ies"} scanned, the last point's seal held for the rest`
  if (!reusedManifest) return listed === undefined ? "" : dim(` (${listed})`)
  const how = scan?.by !== "seal" ? "" : listed === undefined ? ": its seal held, no scan" : `; ${listed}`
  return dim(` (nothing changed since the last point${how})`)
}
