/**
 * `rewind ui [--workspace d] [--port p] [--open]`: serves the inspector (the built app shipped in
 * this package's `dist/ui/app/`) on 127.0.0.1, prints its URL (with this launch's token) on
 * stdout, and runs until SIGINT / SIGTERM, when it closes the server and the store.
 *
 * The HTTP server is loaded inside the handler, so other commands do not pay for it.
 */
import { spawn } from "node:child_process"
import { basename, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { withFacade } from "../cli/facadeStore.js"
import { CliFailure, ExitCode } from "../cli/output.js"
import { common } from "../cli/store.js"
import { untilSignal } from "../server/serveCommand.js"

/**
 * The app ships in this package's `dist/ui/app/`. This module runs from `dist/ui/` (tsc), from the
 * bundled bin's `dist/cli/` or from one of its code-split chunks in `dist/cli/chunks/`, so the
 * directory is found by walking up to `dist/`, not by a fixed relative path (a fixed one broke
 * when the bin was split into chunks).
 */
const appDir = () => {
  let at = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    if (basename(at) === "dist") return join(at, "ui", "app")
    const up = dirname(at)
    if (up === at) return fileURLToPath(new URL("../ui/app/", import.meta.url))
    at = up
  }
}

const openCommand = () =>
  process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open"

/** Opens the URL in the user's browser; a missing opener is said, not fatal. */
const openBrowser = (url: string) =>
  Effect.sync(() => {
    const child = spawn(openCommand(), [url], { detached: true, stdio: "ignore" })
    child.on("error", (error) =>
      process.stderr.write(`rewind ui: could not open a browser (${error.message}); open the URL above\n`),
    )
    child.unref()
  })

const options = {
  workspace: common.workspace,
  dir: common.dir,
  port: Options.integer("port").pipe(
    Options.withDescription("Port to listen on, on 127.0.0.1 (default: any free port)"),
    Options.optional,
  ),
  open: Options.boolean("open").pipe(Options.withDescription("Open the URL in the default browser")),
}

export const ui = Command.make("ui", options, (o) =>
  withFacade({ workspace: o.workspace, dir: o.dir }, false, (rewind) =>
    Effect.gen(function* () {
      const port = Option.getOrElse(o.port, () => 0)
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        return yield* Effect.fail(
          new CliFailure({ code: ExitCode.usage, message: `--port ${port}: not a port`, reason: "usage" }),
        )
      }
      const { startUiServer } = yield* Effect.promise(() => import("./uiServer.js"))
      const server = yield* Effect.tryPromise({
        try: () => startUiServer({ rewind, appDir: appDir(), port }),
        catch: (error) =>
          new CliFailure({
            code: ExitCode.failed,
            message: `rewind ui: ${error instanceof Error ? error.message : String(error)}`,
            reason: "ui_failed",
          }),
      })
      process.stdout.write(`${server.url}\n`)
      process.stderr.write(
        `rewind ui: serving ${rewind.workspaceRoot} on 127.0.0.1:${server.port}; Ctrl-C stops\n`,
      )
      if (o.open) yield* openBrowser(server.url)
      yield* untilSignal
      yield* Effect.promise(() => server.close())
    }),
  ),
).pipe(Command.withDescription("Serve the browser inspector on 127.0.0.1 and print its URL (see docs/ui.md)"))
