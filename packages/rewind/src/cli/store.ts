/**
 * The CLI's access to a store: the options every command shares (`--workspace`, `--dir`,
 * `--json`), opening Rewind through the Promise facade for the life of a command, and turning
 * refusals and errors into `CliFailure`s with exit codes. A store this process cannot write is
 * said so on stderr (and as a `warning` line with `--json`) by every command, before any write
 * fails with SQLite's own words.
 */
import { resolve } from "node:path"
import { Options } from "@effect/cli"
import { type Outcome, SessionId } from "@rewind/contracts"
import { Effect, Option } from "effect"
import type { Rewind } from "../openRewind.js"
import { CliFailure, ExitCode, makeOutput, type Output } from "./output.js"

export const common = {
  json: Options.boolean("json").pipe(
    Options.withDescription("Print JSON Lines (each line has a version field v)"),
  ),
  workspace: Options.directory("workspace", { exists: "yes" }).pipe(
    Options.withDescription("The workspace root (default: the current directory)"),
    Options.optional,
  ),
  dir: Options.text("dir").pipe(
    Options.withDescription("The store directory (default: <workspace>/.rewind)"),
    Options.optional,
  ),
}

export interface CommonOptions {
  readonly json: boolean
  readonly workspace: Option.Option<string>
  readonly dir: Option.Option<string>
}

const errorMessage = (error: unknown): { message: string; reason: string } => {
  if (typeof error === "object" && error !== null) {
    const tag = "_tag" in error && typeof error._tag === "string" ? error._tag : "Error"
    const message = "message" in error && typeof error.message === "string" ? error.message : String(error)
    return { message, reason: tag }
  }
  return { message: String(error), reason: "Error" }
}

/** Any rejection from the facade: a failed command (exit 2) with the error's own message. */
export const failed = (error: unknown): CliFailure => {
  const { message, reason } = errorMessage(error)
  return new CliFailure({ code: ExitCode.failed, message, reason })
}

/** Calls the facade; a rejection becomes a `CliFailure`. */
export const call = <A>(run: () => Promise<A>) => Effect.tryPromise({ try: run, catch: failed })

/** Calls the facade; a refusal becomes a failed command with the refusal's message. */
export const expect = <A>(run: () => Promise<Outcome<A>>) =>
  Effect.flatMap(call(run), (outcome) =>
    outcome.ok
      ? Effect.succeed(outcome.value)
      : Effect.fail(
          new CliFailure({
            code: ExitCode.failed,
            message: outcome.refusal.message,
            reason: outcome.refusal.kind,
            ...(outcome.refusal.details === undefined ? {} : { details: outcome.refusal.details }),
          }),
        ),
  )

/**
 * Opens Rewind for the command's life and hands it and the output to `body`. Only `init` creates
 * a store; every other command fails (exit 2) when there is none, creating nothing.
 */
export const withRewind = <A, E, R>(
  options: CommonOptions,
  create: boolean,
  body: (rewind: Rewind, out: Output) => Effect.Effect<A, E, R>,
  /** `live`: run the live engine (the workspace watcher) for as long as the body runs. */
  open: { readonly live?: boolean } = {},
) => {
  const out = makeOutput(options.json)
  const workspaceRoot = resolve(Option.getOrElse(options.workspace, () => process.cwd()))
  return Effect.acquireUseRelease(
    // Loaded on first use, so `--help` and usage errors do not pay for loading the store adapters.
    call(() =>
      import("../openRewind.js").then(({ openRewind }) =>
        openRewind({
          workspaceRoot,
          create,
          ...(open.live === true ? { live: true } : {}),
          ...Option.match(options.dir, { onNone: () => ({}), onSome: (dir) => ({ dir: resolve(dir) }) }),
        }),
      ),
    ),
    (rewind) => Effect.zipRight(warnIfReadOnly(rewind, out), body(rewind, out)),
    (rewind) => Effect.promise(() => rewind.close()),
  )
}

const warnIfReadOnly = (rewind: Rewind, out: Output) =>
  Effect.flatMap(
    call(() => import("../internal/doctor.js").then(({ storeReadOnly }) => rewind.run(storeReadOnly))),
    (reason) =>
      reason === undefined
        ? Effect.void
        : Effect.zipRight(
            out.record("warning", { reason: "store_read_only", message: reason }),
            Effect.sync(() => {
              if (!out.json) process.stderr.write(`warning: the store is read-only: ${reason}\n`)
            }),
          ),
  )

export const sessionOption = Options.text("session").pipe(
  Options.withSchema(SessionId),
  Options.withDescription("The session (default: the most recently created one)"),
  Options.optional,
)

/** The session named by `--session`, or the newest one in the store. */
export const resolveSession = (rewind: Rewind, session: Option.Option<SessionId>) =>
  Option.match(session, {
    onSome: Effect.succeed,
    onNone: () =>
      Effect.flatMap(
        expect(() => rewind.listSessions()),
        (all) =>
          all[0] === undefined
            ? Effect.fail(
                new CliFailure({
                  code: ExitCode.failed,
                  message: "the store has no session yet",
                  reason: "no_session",
                }),
              )
            : Effect.succeed(all[0].sessionId),
      ),
  })

/** Bad arguments the option parser cannot express (exit 3), checked before the store is opened. */
export const usage = (message: string) =>
  Effect.fail(new CliFailure({ code: ExitCode.usage, message, reason: "usage" }))
