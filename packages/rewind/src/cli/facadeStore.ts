/**
 * The Promise facade for the commands that hand it to a server (`serve`, `mcp`, `ui`: their
 * servers take an open `Rewind` facade): opened for the life of the command, closed after, with the
 * read-only warning every command gives (store.ts). The
 * CLI's own commands run the `Rewind` service in Effect instead (store.ts).
 */
import { resolve } from "node:path"
import { Effect, Option } from "effect"
import type { Rewind } from "../openRewind.js"
import { commandWorkspace } from "../workspaceRoot.js"
import { CliFailure, ExitCode, readOnlyWarning } from "./output.js"
import { type CommonOptions, failureReason } from "./store.js"

/** A rejection of `openRewind`: a failed command (exit 2) with the error's own message and reason. */
const openFailed = (error: unknown): CliFailure => {
  const tagged = typeof error === "object" && error !== null && "_tag" in error
  return new CliFailure({
    code: ExitCode.failed,
    message: error instanceof Error ? error.message : String(error),
    reason: tagged ? failureReason(error as { readonly _tag: string; readonly reason?: unknown }) : "Error",
  })
}

/** Opens the facade for the command's life and hands it to `body`; only `create` makes a store. */
export const withFacade = <A, E, R>(
  options: Pick<CommonOptions, "workspace" | "dir">,
  create: boolean,
  body: (rewind: Rewind) => Effect.Effect<A, E, R>,
  /** `live`: run the live engine (the workspace watcher) for as long as the body runs. */
  open: { readonly live?: boolean } = {},
) => {
  const workspaceRoot = commandWorkspace(process.cwd(), {
    workspace: Option.getOrUndefined(options.workspace),
    dir: Option.getOrUndefined(options.dir),
  })
  return Effect.acquireUseRelease(
    // Loaded on first use, so `--help` and usage errors do not pay for loading the store adapters.
    Effect.tryPromise({
      try: () =>
        import("../openRewind.js").then(({ openRewind }) =>
          openRewind({
            workspaceRoot,
            create,
            ...(open.live === true ? { live: true } : {}),
            ...Option.match(options.dir, { onNone: () => ({}), onSome: (dir) => ({ dir: resolve(dir) }) }),
          }),
        ),
      catch: openFailed,
    }),
    (rewind) =>
      Effect.zipRight(
        Effect.flatMap(
          Effect.promise(() =>
            import("../internal/doctor.js").then(({ storeReadOnly }) => rewind.run(storeReadOnly)),
          ),
          (reason) =>
            Effect.sync(() => {
              if (reason !== undefined) process.stderr.write(readOnlyWarning(reason))
            }),
        ),
        body(rewind),
      ),
    (rewind) => Effect.promise(() => rewind.close()),
  )
}
