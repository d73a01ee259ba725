/**
 * The `shape-cli` case's last figure: `rewind capture --json` (the built bin, a whole process)
 * handed to a `rewind serve` already running for the workspace and store (cli/captureClient.ts),
 * against git in the same rounds. This is not the cold figure (that one runs with the
 * hand-over off, see `cli` in shapes.bench.ts); it is what a user with a running server (the hook
 * server) gets from the same command. The server listens where the CLI looks for it: the socket
 * path `rewind status --json` reports for the pair. Its first capture (a full scan that seeds its
 * live engine) is untimed; every timed run must say `"via":"server"`.
 */
import { spawn } from "node:child_process"
import type { ShadowGit } from "./baselines/shadowGit.js"
import type { BenchContext } from "./harness/types.js"
import { budgetFor, capturedPoint, cli, REWIND_BIN, records, type Shape, sizeOf } from "./shapes.bench.js"

/** `rewind serve --socket` for the pair, resolved once it listens. */
const startSocketServer = (ws: Shape, store: string, socket: string) => {
  const child = spawn(
    process.execPath,
    [REWIND_BIN, "serve", "--workspace", ws.root, "--dir", store, "--socket", socket],
    { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, NO_COLOR: "1" } },
  )
  let stderr = ""
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const ready = new Promise<void>((resolve, reject) => {
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d
      if (stderr.includes("listening on")) resolve()
    })
    void exited.then(() => reject(new Error(`rewind serve exited before listening: ${stderr}`)))
  })
  return {
    ready,
    stop: async () => {
      child.kill("SIGTERM")
      await exited
    },
  }
}

export const handedOverCapture = async (
  ctx: BenchContext,
  ws: Shape,
  store: string,
  git: ShadowGit,
  notes: ReadonlyArray<string>,
) => {
  const status = records(cli(ws, store, "status").stdout).find((r) => r.type === "hook_server")
  const socket = typeof status?.socket === "string" ? status.socket : undefined
  if (socket === undefined || status?.running === true) {
    ctx.log(`no hand-over figure: the socket is ${socket === undefined ? "unknown" : "already in use"}`)
    return
  }
  const server = startSocketServer(ws, store, socket)
  try {
    await server.ready
    capturedPoint(cli(ws, store, "capture", [], false, "server").stdout, "server")
    await ctx.compare({
      series:
        "babel shape: repeat capture, nothing changed, handed to a running rewind serve (rewind CLI process)",
      size: sizeOf(ws),
      subject: {
        kind: "process",
        label: "rewind capture --json through the server",
        run: (probe) => {
          const run = cli(ws, store, "capture", [], probe.measureMemory, "server")
          capturedPoint(run.stdout, "server")
          return run
        },
      },
      baseline: {
        kind: "process",
        label: "git add -A + write-tree",
        run: (probe) => git.snapshot({ measureMemory: probe.measureMemory }),
      },
      expectedGrowth: "constant",
      budget: budgetFor(ctx),
      notes: [
        ...notes,
        "not the issue's cold figure: a `rewind serve --socket` runs for the workspace and store (started untimed, its first capture untimed); the CLI process hands the capture to it (point line via: server)",
      ],
    })
  } finally {
    await server.stop()
  }
}
