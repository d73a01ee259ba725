/**
 * `rewind serve`: the engine as a long-lived JSON-RPC 2.0 server over stdio (default) or a Unix
 * domain socket (`--socket`), and `rewind serve --schema`, the OpenRPC document of its methods.
 *
 * Lifecycle: the store is opened once (an existing store only, like every command but `init`)
 * and closed when the server stops: at end of stdin (stdio, after every call has answered), or
 * on SIGTERM / SIGINT (calls in flight are interrupted and answer `-32800`), or, on a socket with
 * `--idle-exit`, once no client has been connected for that long. `--create` creates the store on
 * first use (what the hook client's auto-started server runs with: installing the hook is the
 * consent). It also stops once its store was removed or replaced (a call answered `StoreReplaced`,
 * storeLayout.ts): the clients then run their call themselves, and the next hook starts a server
 * on the store as it is now. In stdio mode stdout carries only protocol lines; anything for people
 * goes to stderr.
 *
 * Beside the operations of `RewindOperations`, the server declares and answers the hook client's
 * `hook` method (hooks/hookMethod.ts, with Schemas for its call and answer); `--schema` lists it
 * with the rest, so generated clients (clients/python) have it too.
 */
import { Command, Options } from "@effect/cli"
import { RewindOperations } from "@rewind/core"
import { Deferred, Effect, Option, Schema } from "effect"
import { withFacade } from "../cli/facadeStore.js"
import { common } from "../cli/store.js"
import { usage } from "../cli/storeAccess.js"
import { VERSION } from "../cli/version.js"
import { StoreReplaced } from "../errors.js"
import { hookImplementation, hookOperation } from "../hooks/hookMethod.js"
import { storeDirectory } from "../workspaceRoot.js"
import { makeRpcServer, openRpcDocument } from "./rpcServer.js"
import { serviceImplementation } from "./serviceImplementation.js"
import { serveSocket } from "./socket.js"
import { workspaceSocketPath } from "./workspaceSocket.js"

/** Resolves on the first of SIGTERM / SIGINT; the handlers are removed when it ends. */
export const untilSignal = Effect.async<NodeJS.Signals>((resume) => {
  const on = (signal: NodeJS.Signals) => () => resume(Effect.succeed(signal))
  const term = on("SIGTERM")
  const int = on("SIGINT")
  process.once("SIGTERM", term)
  process.once("SIGINT", int)
  return Effect.sync(() => {
    process.off("SIGTERM", term)
    process.off("SIGINT", int)
  })
})

/** A duration written `<n>ms|s|m|h` (`30s`, `10m`), as milliseconds. */
const IdleExit = Schema.String.pipe(
  Schema.pattern(/^\d+(\.\d+)?\s*(ms|s|m|h)$/, {
    message: () => "a duration such as 500ms, 30s, 10m or 1h",
  }),
  Schema.transform(Schema.Number, {
    strict: true,
    decode: (text) => {
      const [, n, unit] = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)$/.exec(text)!
      const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const
      return Math.round(Number(n) * factor[unit as keyof typeof factor])
    },
    encode: (ms) => `${ms}ms`,
  }),
)

const options = {
  workspace: common.workspace,
  dir: common.dir,
  socket: Options.text("socket").pipe(
    Options.withDescription(
      "Listen on this Unix domain socket instead of stdio (created mode 0600; its directory must be writable by you only)",
    ),
    Options.optional,
  ),
  workspaceSocket: Options.boolean("workspace-socket").pipe(
    Options.withDescription(
      "Listen on this workspace and store's own socket, the one the hooks and `rewind capture` look for: their captures then run in this server's live engine (`rewind status` shows it)",
    ),
  ),
  idleExit: Options.text("idle-exit").pipe(
    Options.withSchema(IdleExit),
    Options.withDescription(
      "With a socket: stop once no client has been connected for this long (e.g. 500ms, 30s, 10m)",
    ),
    Options.optional,
  ),
  create: Options.boolean("create").pipe(
    Options.withDescription("Create the store when there is none (the hook client's auto-started server)"),
  ),
  schema: Options.boolean("schema").pipe(
    Options.withDescription("Print the OpenRPC document of every method (derived from the Schemas) and exit"),
  ),
  noWatch: Options.boolean("no-watch").pipe(
    Options.withDescription(
      "Do not watch the workspace: every capture scans the whole tree (by default the server runs the live engine, see docs/server.md)",
    ),
  ),
  maxLineBytes: Options.integer("max-line-bytes").pipe(
    Options.withDescription(
      "Longest request line accepted (default 32 MiB); a longer one is answered -32600 unread",
    ),
    Options.optional,
  ),
}

/**
 * The socket of this workspace and store (`workspaceSocket.ts`: the path the hook client starts
 * its server on and `rewind capture` hands over to), so a user need not copy it from `status`.
 */
const ownSocket = (workspaceRoot: string, storeDir: string) =>
  Effect.flatMap(
    Effect.orElseSucceed(
      Effect.try(() => workspaceSocketPath(workspaceRoot, storeDir, process.env, true)),
      () => undefined,
    ),
    (path) =>
      path === undefined
        ? usage("--workspace-socket: no runtime directory can hold this workspace's socket")
        : Effect.succeed(path),
  )

/**
 * What the server declares and serves: the engine's operations and the hook protocol's `hook`
 * (hooks/hookMethod.ts), one table, so `--schema` lists exactly what a connection can call.
 */
const servedTable = { ...RewindOperations, [hookOperation.name]: hookOperation }

export const serve = Command.make("serve", options, (o) =>
  o.schema
    ? Effect.sync(() => {
        process.stdout.write(`${JSON.stringify(openRpcDocument(servedTable, VERSION), null, 2)}\n`)
      })
    : o.workspaceSocket && Option.isSome(o.socket)
      ? usage("--workspace-socket and --socket name two sockets: give one")
      : // `--create` (the hook client's server) makes no store in the home directory or the
        // filesystem root (the embedded default refuses it, layers.ts); one that exists there is served.
        withFacade(
          { workspace: o.workspace, dir: o.dir },
          o.create,
          (rewind) =>
            Effect.gen(function* () {
              const storeDir = storeDirectory({ workspaceRoot: rewind.workspaceRoot, dir: rewind.dir })
              const implementation = {
                ...serviceImplementation(rewind),
                [hookOperation.name]: hookImplementation(rewind, storeDir),
              }
              const storeGone = yield* Deferred.make<StoreReplaced>()
              const server = makeRpcServer(servedTable, implementation, {
                ...Option.match(o.maxLineBytes, {
                  onNone: () => ({}),
                  onSome: (maxLineBytes) => ({ maxLineBytes }),
                }),
                afterFailure: (error) =>
                  error instanceof StoreReplaced ? Deferred.succeed(storeGone, error) : Effect.void,
              })
              const stop = Effect.raceFirst(
                untilSignal,
                Effect.tap(Deferred.await(storeGone), (gone) =>
                  Effect.sync(() => process.stderr.write(`rewind serve: ${gone.message}; stopping\n`)),
                ),
              )
              const socket = o.workspaceSocket
                ? Option.some(yield* ownSocket(rewind.workspaceRoot, storeDir))
                : o.socket
              if (Option.isSome(socket)) {
                yield* serveSocket(server, socket.value, stop, {
                  ...Option.match(o.idleExit, {
                    onNone: () => ({}),
                    onSome: (idleExitMs) => ({ idleExitMs }),
                  }),
                })
                return
              }
              yield* Effect.raceFirst(server.serveConnection(process.stdin, process.stdout), stop)
              // The input may still hold the event loop open after a signal.
              process.stdin.destroy()
            }),
          { live: !o.noWatch },
        ),
).pipe(
  Command.withDescription(
    "Serve the engine as JSON-RPC 2.0 (one message per line) over stdio or --socket; see docs/server.md",
  ),
)
