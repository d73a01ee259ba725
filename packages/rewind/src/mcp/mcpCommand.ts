/**
 * `rewind mcp`: the MCP server (mcpServer.ts) over stdio for the life of the process. The store is
 * opened once (an existing one only) and closed at end of stdin, on SIGTERM or SIGINT, or when the
 * client closes the transport. The SDK and its dependencies are loaded only by this command.
 */
import { Command } from "@effect/cli"
import { Effect } from "effect"
import { withFacade } from "../cli/facadeStore.js"
import { common } from "../cli/store.js"
import { VERSION } from "../cli/version.js"
import { untilSignal } from "../server/serveCommand.js"

export const mcp = Command.make("mcp", { workspace: common.workspace, dir: common.dir }, (o) =>
  withFacade({ workspace: o.workspace, dir: o.dir }, false, (rewind) =>
    Effect.gen(function* () {
      const [{ makeMcpServer }, { StdioServerTransport }, { serviceImplementation }] = yield* Effect.promise(
        () =>
          Promise.all([
            import("./mcpServer.js"),
            import("@modelcontextprotocol/sdk/server/stdio.js"),
            import("../server/serviceImplementation.js"),
          ]),
      )
      const server = makeMcpServer(serviceImplementation(rewind), { version: VERSION })
      const closed = Effect.async<void>((resume) => {
        const done = () => resume(Effect.void)
        server.onclose = done
        process.stdin.once("end", done)
        return Effect.sync(() => process.stdin.off("end", done))
      })
      yield* Effect.promise(() => server.connect(new StdioServerTransport()))
      yield* Effect.raceFirst(closed, untilSignal)
      yield* Effect.promise(() => server.close())
      process.stdin.destroy()
    }),
  ),
).pipe(
  Command.withDescription(
    "Serve a small, safe set of Rewind tools (points, diff, preview/restore with token, to a point or to before a turn, redo, capture, status, GC preview) over MCP on stdio; see docs/mcp.md",
  ),
)
