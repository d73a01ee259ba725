/**
 * The CLI's agent-hook command: `hook <agent>` (what the agent's hook entry runs: one event on
 * stdin, always exit 0, see hooks/runHook.ts).
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import type { HookAgent } from "../hooks/hookEvent.js"
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
      const { runHook } = await import("../hooks/runHook.js")
      const result = await runHook({
        agent: o.agent,
        stdin: await readStdin(),
        ...Option.match(o.workspace, { onNone: () => ({}), onSome: (workspace) => ({ workspace }) }),
        ...Option.match(o.dir, { onNone: () => ({}), onSome: (dir) => ({ dir }) }),
        env: process.env,
        processCwd: process.cwd(),
      })
      process.stdout.write(result.stdout)
      for (const line of result.problems) process.stderr.write(`${line}\n`)
    }),
).pipe(
  Command.withDescription(
    "Run by the agent's hook entries: reads one hook event (JSON) on stdin and mirrors it into the store; never fails the agent (exit 0, problems on stderr and in `rewind status`)",
  ),
)
