/**
 * The CLI's access to a store, without the option parser (store.ts adds the options every command
 * shares, over @effect/cli): the `Rewind` service provided to a command's Effect for its life (the
 * embedded layer, serviceLayer.ts, built in the command's scope and released when it ends), and the
 * one place where what the service answers becomes a `CliFailure` with its exit code: refusals
 * (`Outcome` values) in `expect`, typed errors in `withRewind` by their tags. A store this process
 * cannot write is said so on stderr (and as a `warning` line with `--json`) by every command,
 * before any write fails with SQLite's own words. Kept free of @effect/cli so the capture fast
 * path (captureFast.ts) can run a command without loading the parser.
 *
 * The layer's module is imported when a command first opens the store, so `--help`, usage errors
 * and the bin's light paths (the hook client, the capture hand-over) never load the adapters.
 */
import { resolve } from "node:path"
import type { Outcome, Refused, SessionId, VersionConflict } from "@rewind/contracts"
import { toOutcome } from "@rewind/contracts"
import { type ManifestUnreadable, Rewind, type RewindApi, type RewindError } from "@rewind/core"
import { Effect, type Layer, Option } from "effect"
import type { StoreMissing, StoreRefused, WorkspaceUnusable } from "../errors.js"
import type { DefaultOpenError, EngineServices } from "../layers.js"
import type { layerEmbeddedService } from "../serviceLayer.js"
import { commandWorkspace } from "../workspaceRoot.js"
import { CliFailure, ExitCode, makeOutput, type Output, readOnlyWarning } from "./output.js"

export interface CommonOptions {
  readonly json: boolean
  readonly workspace: Option.Option<string>
  readonly dir: Option.Option<string>
}

/** What a command works with: the service's operations, and where its workspace and store lie. */
export type CliRewind = RewindApi & { readonly workspaceRoot: string; readonly dir: string }

/** Every service the command's layer provides (the engine's programs the CLI runs need some). */
type Provided = Layer.Layer.Success<ReturnType<typeof layerEmbeddedService>>

/** The typed errors a command may fail with besides its own `CliFailure`s. */
export type CliError =
  | RewindError
  | DefaultOpenError
  | StoreMissing
  | StoreRefused
  | WorkspaceUnusable
  | VersionConflict
  // The engine's programs the CLI runs beside the operations (its turn views) may meet it.
  | ManifestUnreadable

/**
 * A failed command's `reason` for a typed error: its tag, except a store refused for a workspace at
 * the home directory or the filesystem root, which says `too_broad` (a user's script tells it from
 * a store refused for a link).
 */
export const failureReason = (error: { readonly _tag: string; readonly reason?: unknown }): string =>
  error._tag === "StoreRefused" && error.reason === "too_broad" ? "too_broad" : error._tag

const failedWith = (error: { readonly _tag: string; readonly message: string }) =>
  Effect.fail(new CliFailure({ code: ExitCode.failed, message: error.message, reason: failureReason(error) }))

/**
 * Every typed error a command can meet, by tag: a failed command (exit 2) with the error's own
 * message, its tag as the `reason`. A version conflict the engine's retries did not resolve is
 * said as the service's `conflict` refusal says it.
 */
export const failOnErrors = <A, R>(effect: Effect.Effect<A, CliFailure | CliError, R>) =>
  Effect.catchTags(effect, {
    StoreError: failedWith,
    EventDecodeError: failedWith,
    ArtifactStoreError: failedWith,
    ArtifactNotFound: failedWith,
    ArtifactCorrupt: failedWith,
    WorkspaceIoError: failedWith,
    PathRefused: failedWith,
    UnrecoverableRewindError: failedWith,
    ForkBundleInvalid: failedWith,
    CommandAlreadyRecorded: failedWith,
    TaskStopFailed: failedWith,
    GcRootUnreadable: failedWith,
    StoreMissing: failedWith,
    StoreRefused: failedWith,
    WorkspaceUnusable: failedWith,
    StoreIncompatible: failedWith,
    ManifestUnreadable: failedWith,
    VersionConflict: (error) =>
      Effect.fail(
        new CliFailure({
          code: ExitCode.failed,
          message: `another writer kept changing session ${error.sessionId} while this ran (${error.message}); its record was not appended, try again`,
          reason: "conflict",
        }),
      ),
  })

/** An operation's answer: its value, or its refusal as a failed command with the refusal's message. */
export const expect = <A, E, R>(answer: Effect.Effect<Outcome<A>, E, R>) =>
  Effect.flatMap(answer, (outcome) =>
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

/** One of the engine's programs over the command's services: a refusal fails as `expect` says. */
export const engine = <A, E, R extends EngineServices>(program: Effect.Effect<A, E | Refused, R>) =>
  expect(toOutcome(program))

/**
 * Runs `body` with the `Rewind` service over the store, built for the command's life and released
 * after it. Only `init` creates a store; every other command fails (exit 2) when there is none,
 * creating nothing.
 */
export const withRewind = <A, R>(
  options: CommonOptions,
  create: boolean,
  body: (rewind: CliRewind, out: Output) => Effect.Effect<A, CliFailure | CliError, R>,
  /**
   * `live`: run the live engine (the workspace watcher) for as long as the body runs;
   * `allowBroadWorkspace`: create the store even at the home directory (`init --force`).
   */
  open: { readonly live?: boolean; readonly allowBroadWorkspace?: boolean } = {},
): Effect.Effect<A, CliFailure, Exclude<R, Provided>> => {
  const out = makeOutput(options.json)
  // `init` (the one creating command) makes its workspace where it is told; the others find theirs.
  const workspaceRoot = commandWorkspace(
    process.cwd(),
    { workspace: Option.getOrUndefined(options.workspace), dir: Option.getOrUndefined(options.dir) },
    !create,
  )
  const named = Option.map(options.dir, (dir) => resolve(dir))
  return failOnErrors(
    Effect.flatMap(
      Effect.promise(() => Promise.all([import("../serviceLayer.js"), import("../layers.js")])),
      ([{ layerEmbeddedService }, { storeDirectory }]) => {
        const dir = Option.getOrUndefined(named)
        const layer = layerEmbeddedService({
          workspaceRoot,
          create,
          ...(open.live === true ? { live: true } : {}),
          ...(open.allowBroadWorkspace === true ? { allowBroadWorkspace: true } : {}),
          ...(dir === undefined ? {} : { dir }),
        })
        const program = Effect.flatMap(Rewind, (service) =>
          Effect.zipRight(
            warnIfReadOnly(out),
            body({ ...service, workspaceRoot, dir: storeDirectory({ workspaceRoot, dir }) }, out),
          ),
        )
        return Effect.provide(program, layer)
      },
    ),
  )
}

const warnIfReadOnly = (out: Output) =>
  Effect.flatMap(
    Effect.flatMap(
      Effect.promise(() => import("../internal/doctor.js")),
      ({ storeReadOnly }) => storeReadOnly,
    ),
    (reason) =>
      reason === undefined
        ? Effect.void
        : Effect.zipRight(
            out.record("warning", { reason: "store_read_only", message: reason }),
            Effect.sync(() => {
              if (!out.json) process.stderr.write(readOnlyWarning(reason))
            }),
          ),
  )

/** The session named by `--session`, or the newest one in the store. */
export const resolveSession = (rewind: CliRewind, session: Option.Option<SessionId>) =>
  Option.match(session, {
    onSome: (id) => Effect.succeed<SessionId>(id),
    onNone: () =>
      Effect.flatMap(expect(rewind.listSessions()), (all) =>
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
