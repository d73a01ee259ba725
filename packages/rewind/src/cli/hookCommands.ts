/**
 * The CLI's agent-hook commands: `hook <agent>` (what the agent's hook entry runs: one event on
 * stdin, always exit 0, sent to the workspace's server by hooks/hookClient.ts), and `install <agent> [--user]` / `uninstall <agent>
 * [--user]` (merge Rewind's entries into the agent's settings file, see hooks/hookInstall.ts).
 */
import { resolve } from "node:path"
import { Args, Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import type { HookAgent } from "../hooks/hookEvent.js"
import { commandWorkspace } from "../workspaceRoot.js"
import { CliFailure, ExitCode, makeOutput } from "./output.js"
import { common } from "./store.js"

const agentArg = Args.choice<HookAgent>(
  [
    ["claude-code", "claude-code"],
    ["gemini-cli", "gemini-cli"],
  ],
  { name: "agent" },
).pipe(Args.withDescription("The agent: claude-code or gemini-cli"))

const readStdin = () =>
  new Promise<string>((done) => {
    const chunks: Array<Buffer> = []
    process.stdin.on("data", (chunk: Buffer) => chunks.push(chunk))
    process.stdin.on("end", () => done(Buffer.concat(chunks).toString("utf8")))
    process.stdin.on("error", () => done(Buffer.concat(chunks).toString("utf8")))
  })

export const hook = Command.make(
  "hook",
  {
    agent: agentArg,
    // Plain text, not `common.workspace`: a missing directory must not make the hook fail.
    workspace: Options.text("workspace").pipe(
      Options.withDescription("The workspace root (default: the agent's project directory)"),
      Options.optional,
    ),
    dir: common.dir,
  },
  (o) =>
    Effect.promise(async () => {
      // The bin sends `hook` to the client before this CLI loads (cli/bin.ts); this is the same
      // client for a CLI started otherwise (the compiled main.js).
      const { runHookClient } = await import("../hooks/hookClient.js")
      const result = await runHookClient(
        {
          agent: o.agent,
          stdin: await readStdin(),
          ...Option.match(o.workspace, { onNone: () => ({}), onSome: (workspace) => ({ workspace }) }),
          ...Option.match(o.dir, { onNone: () => ({}), onSome: (dir) => ({ dir }) }),
          env: process.env,
          processCwd: process.cwd(),
        },
        process.argv[1] ?? "rewind",
      )
      process.stdout.write(result.stdout)
      for (const line of result.problems) process.stderr.write(`${line}\n`)
    }),
).pipe(
  Command.withDescription(
    "Run by the agent's hook entries: reads one hook event (JSON) on stdin and mirrors it into the store; never fails the agent (exit 0, problems on stderr and in `rewind status`)",
  ),
)

const installOptions = {
  json: common.json,
  agent: agentArg,
  workspace: common.workspace,
  user: Options.boolean("user").pipe(
    Options.withDescription(
      "Edit the user's settings file (~/.claude or ~/.gemini) instead of the project's",
    ),
  ),
}

/** The Node command a hook entry runs: the `rewind` this process is, unless `--command` says otherwise. */
const selfCommand = (shellQuote: (s: string) => string) => {
  const script = process.argv[1]
  return script === undefined ? "rewind" : `${shellQuote(process.execPath)} ${shellQuote(resolve(script))}`
}

const changeSettings = (
  name: "install" | "uninstall",
  o: {
    readonly json: boolean
    readonly agent: HookAgent
    readonly workspace: Option.Option<string>
    readonly user: boolean
    readonly client: "auto" | "native" | "node"
  },
  command: Option.Option<string>,
) =>
  Effect.gen(function* () {
    const out = makeOutput(o.json)
    const { installHooks, settingsPath, uninstallHooks, SettingsRefused } = yield* Effect.promise(
      () => import("../hooks/hookInstall.js"),
    )
    const { hookCommandLine, nativeClientPath, shellQuote } = yield* Effect.promise(
      () => import("../hooks/nativeClient.js"),
    )
    // The native client when it was built (and not refused with `--client node`), the Node
    // command as its fallback; `--client native` without one built is refused, not degraded.
    const native = o.client === "node" ? undefined : nativeClientPath(process.argv[1])
    if (name === "install" && o.client === "native" && native === undefined) {
      return yield* new CliFailure({
        code: ExitCode.failed,
        message:
          "the native hook client was not built with this rewind (node-gyp needs python3, make and a C compiler; see `rewind doctor`); install without --client native for the Node client",
        reason: "not_built",
      })
    }
    const workspace = commandWorkspace(process.cwd(), { workspace: Option.getOrUndefined(o.workspace) })
    const path = settingsPath(o.agent, { workspace, user: o.user })
    const change = yield* Effect.try({
      try: () =>
        name === "install"
          ? installHooks(
              o.agent,
              path,
              hookCommandLine(
                o.agent,
                Option.getOrElse(command, () => selfCommand(shellQuote)),
                native,
              ),
            )
          : uninstallHooks(o.agent, path),
      catch: (error) =>
        new CliFailure({
          code: ExitCode.failed,
          message: error instanceof Error ? error.message : String(error),
          reason: error instanceof SettingsRefused ? "settings_refused" : "io_error",
        }),
    })
    yield* out.record(name, {
      agent: o.agent,
      ...(name === "install" ? { client: native === undefined ? "node" : "native" } : {}),
      path: change.path,
      ...(change.linkTarget === undefined ? {} : { linkTarget: change.linkTarget }),
      events: change.events,
      changed: change.changed,
    })
    const where =
      change.linkTarget === undefined
        ? change.path
        : `${change.path} (a link: edited ${change.linkTarget}, the link kept)`
    yield* out.human(
      change.changed
        ? `${name === "install" ? "added Rewind's hooks for" : "removed Rewind's hooks for"} ${change.events.join(", ")} in ${where}${name === "install" ? (native === undefined ? " (the Node hook client: the native one is not built or was not chosen)" : " (the native hook client)") : ""}`
        : name === "install"
          ? `${change.path} already has Rewind's hooks: nothing changed`
          : `${change.path} has no Rewind hooks: nothing changed`,
    )
  })

export const install = Command.make(
  "install",
  {
    ...installOptions,
    client: Options.choice("client", ["auto", "native", "node"]).pipe(
      Options.withDescription(
        "Which hook client the entries run: the native one when it was built (auto, the default), the native one or nothing (native), or the Node one (node)",
      ),
      Options.withDefault("auto" as const),
    ),
    command: Options.text("command").pipe(
      Options.withDescription(
        "The Node command the hook entries run before `hook <agent>` (default: this rewind, by its absolute path; e.g. `rewind` when it is on PATH); with the native client, its fallback",
      ),
      Options.optional,
    ),
  },
  (o) => changeSettings("install", o, o.command),
).pipe(
  Command.withDescription(
    "Add Rewind's hook entries to the agent's settings file (the project's, or the user's with --user); idempotent, your other entries are kept byte for byte",
  ),
)

export const uninstall = Command.make("uninstall", installOptions, (o) =>
  changeSettings("uninstall", { ...o, client: "auto" }, Option.none()),
).pipe(Command.withDescription("Remove exactly the hook entries `rewind install` added"))
