/**
 * `rewind capture --json` handed to the workspace's running server (cli/captureClient.ts), on the
 * built bin: with a server on the (workspace, store) socket the capture is made there and its
 * point line says `"via":"server"` (the session created for it, when the store had none, is
 * reported as the full CLI reports it); without one, or with `REWIND_CAPTURE_SERVER=off`, or for
 * a command the client does not take, the full CLI runs it (`"via":"process"`). Both paths write
 * the same store. Which arguments are taken is tested on the parser itself.
 */
import { execFile, spawn } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { parseCaptureArgs } from "../src/cli/captureClient.js"
import { workspaceSocketPath } from "../src/server/workspaceSocket.js"
import { BIN, jsonLines, tempDir } from "./cliHarness.js"

const run = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { encoding: "utf8", env: { ...process.env, NO_COLOR: "1", ...env } },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null
        resolve({ code, stdout, stderr })
      },
    )
  })

/** `socket`: a path, or undefined for `--workspace-socket` (the server finds its own). */
const startServer = (root: string, dir: string, socket: string | undefined, env: Record<string, string>) => {
  const child = spawn(
    process.execPath,
    [
      BIN,
      "serve",
      "--workspace",
      root,
      "--dir",
      dir,
      ...(socket === undefined ? ["--workspace-socket"] : ["--socket", socket]),
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...env },
    },
  )
  let stderr = ""
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const ready = new Promise<boolean>((resolve) => {
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d
      if (stderr.includes("listening on")) resolve(true)
    })
    void exited.then(() => resolve(false))
  })
  return {
    ready,
    stderr: () => stderr,
    stop: async () => {
      child.kill("SIGTERM")
      await exited
    },
  }
}

/** A workspace with a store (made by `rewind init`) and a private runtime dir for its socket. */
const setup = async () => {
  const root = tempDir()
  writeFileSync(join(root, "a.txt"), "a\n")
  mkdirSync(join(root, "src"))
  writeFileSync(join(root, "src", "b.ts"), "export const b = 1\n")
  const dir = join(tempDir(), "store")
  const runtime = tempDir()
  const env = { XDG_RUNTIME_DIR: runtime }
  expect((await run(["init", "--workspace", root, "--dir", dir], env)).code).toBe(0)
  const socket = workspaceSocketPath(root, dir, env)
  if (socket === undefined) throw new Error("no socket path fits")
  return { root, dir, env, socket }
}

const pointOf = (stdout: string) => {
  const lines = jsonLines(stdout)
  const point = lines.find((l) => l.type === "point")
  if (point === undefined) throw new Error(`no point line in ${stdout}`)
  return { lines, point }
}

describe("rewind capture --json through a running server (the built bin)", () => {
  it.effect(
    "with a server the capture is made there (via server), without one in the process (via process), into one store",
    () =>
      Effect.promise(async () => {
        const { root, dir, env, socket } = await setup()
        const args = ["capture", "--json", "--workspace", root, "--dir", dir]

        // No server: the full CLI, which also creates the capture session in the empty store.
        const cold = await run(args, env)
        expect(cold.code).toBe(0)
        const first = pointOf(cold.stdout)
        expect(first.point.via).toBe("process")
        expect(first.lines[0]).toMatchObject({
          type: "session_created",
          sessionId: "ses_rewind_cli_captures",
        })

        const server = startServer(root, dir, socket, env)
        try {
          expect(await server.ready).toBe(true)
          const warm = await run([...args.slice(0, 2), `--workspace=${root}`, `--dir=${dir}`], env)
          expect(warm.code, warm.stderr).toBe(0)
          const second = pointOf(warm.stdout)
          expect(second.point).toMatchObject({
            via: "server",
            sessionId: "ses_rewind_cli_captures",
            files: 2,
            reusedManifest: true,
            existing: false,
          })
          expect(second.lines.map((l) => l.type)).toEqual(["point"])

          // A change is seen by the server's capture; the same turn again reports the existing point.
          writeFileSync(join(root, "a.txt"), "a changed\n")
          const changed = pointOf((await run([...args, "--turn", "t-1", "--max-files", "1000"], env)).stdout)
          expect(changed.point).toMatchObject({ via: "server", turnId: "t-1", reusedManifest: false })
          const again = pointOf((await run([...args, "--turn", "t-1"], env)).stdout)
          expect(again.point).toMatchObject({ via: "server", existing: true, pointId: changed.point.pointId })

          // Turned off: the process captures, next to the running server, in the same store.
          const off = await run(args, { ...env, REWIND_CAPTURE_SERVER: "off" })
          expect(off.code, off.stderr).toBe(0)
          expect(pointOf(off.stdout).point.via).toBe("process")

          // What the server refuses is the command's error (exit 2), as the process reports it, and
          // is not followed by a capture in this process.
          const missing = [...args, "--session", "ses-not-here", "--turn", "t-x"]
          const refused = await run(missing, env)
          const inProcess = await run(missing, { ...env, REWIND_CAPTURE_SERVER: "off" })
          expect([refused.code, inProcess.code]).toEqual([2, 2])
          const [viaServer] = jsonLines(refused.stdout)
          const [viaProcess] = jsonLines(inProcess.stdout)
          expect(viaServer).toEqual({ ...viaProcess, via: "server" })
          expect(viaServer).toMatchObject({ type: "error", reason: "not_captured" })
        } finally {
          await server.stop()
        }

        // Every point, whoever made it, is in the one store.
        const listed = jsonLines(
          (await run(["points", "--json", "--workspace", root, "--dir", dir], env)).stdout,
        )
        expect(listed.filter((l) => l.type === "point")).toHaveLength(4)

        // The server gone: the process again.
        expect(pointOf((await run(args, env)).stdout).point.via).toBe("process")
      }),
    60_000,
  )

  it.effect("an empty store through the server: the session is created there and reported", () =>
    Effect.promise(async () => {
      const { root, dir, env, socket } = await setup()
      const server = startServer(root, dir, socket, env)
      try {
        expect(await server.ready).toBe(true)
        const out = await run(["capture", "--json", "--workspace", root, "--dir", dir], env)
        expect(out.code, out.stderr).toBe(0)
        const { lines, point } = pointOf(out.stdout)
        expect(lines[0]).toMatchObject({ type: "session_created", sessionId: "ses_rewind_cli_captures" })
        expect(point).toMatchObject({ via: "server", sessionId: "ses_rewind_cli_captures", files: 2 })
      } finally {
        await server.stop()
      }
    }),
  )
})

describe("rewind serve --workspace-socket", () => {
  it.effect(
    "listens where the capture looks, without the path being given; beside --socket it is a usage error",
    () =>
      Effect.promise(async () => {
        const { root, dir, env, socket } = await setup()
        const both = await run(
          ["serve", "--workspace", root, "--dir", dir, "--workspace-socket", "--socket", socket],
          env,
        )
        expect(both.code).toBe(3)
        expect(both.stderr).toMatch(/--workspace-socket and --socket/)
        const server = startServer(root, dir, undefined, env)
        try {
          expect(await server.ready).toBe(true)
          expect(server.stderr()).toContain(socket)
          const out = await run(["capture", "--json", "--workspace", root, "--dir", dir], env)
          expect(out.code, out.stderr).toBe(0)
          expect(pointOf(out.stdout).point).toMatchObject({ via: "server", files: 2 })
          // `status` runs no live engine itself: it reports the server's watcher, the one the
          // handed-over captures use (this one took the capture above from a full scan).
          const status = await run(["status", "--json", "--workspace", root, "--dir", dir], env)
          const records = jsonLines(status.stdout)
          expect(records.find((r) => r.type === "hook_server")).toMatchObject({ running: true })
          expect(records.find((r) => r.type === "hook_server_watcher")).toMatchObject({
            answered: true,
            active: true,
            lastCapture: { mode: "full" },
          })
          // The usage too is the server's answer, computed once there (this process has no
          // watcher of its own, so a usage it computed itself would say none is active).
          expect(records.find((r) => r.type === "snapshots")).toMatchObject({ watcher: { active: true } })
          const words = await run(["status", "--workspace", root, "--dir", dir], env)
          expect(words.stdout).toMatch(/watcher +in the hook server \(pid \d+\): /)
        } finally {
          await server.stop()
        }
      }),
  )
})

describe("which capture commands the client takes", () => {
  it("takes a plain capture --json with the options it knows, resolved as the CLI resolves them", () => {
    const cwd = tempDir()
    expect(parseCaptureArgs(["--json"], cwd)).toEqual({ workspace: cwd, dir: join(cwd, ".rewind") })
    expect(
      parseCaptureArgs(["--json", "--dir=s", "--session", "ses-1", "--turn=t:2", "--max-files", "50"], cwd),
    ).toEqual({ workspace: cwd, dir: join(cwd, "s"), session: "ses-1", turn: "t:2", maxFiles: 50 })
  })
  it("leaves everything else to the full CLI", () => {
    const cwd = tempDir()
    for (const args of [
      [],
      ["--workspace", cwd],
      ["--json", "--path", "a.txt"],
      ["--json", "--help"],
      ["--json", "--json"],
      ["--json", "--session", "../x"],
      ["--json", "--turn", ""],
      ["--json", "--max-files", "0"],
      ["--json", "--max-files", "1.5"],
      ["--json", "--dir"],
      ["--json", "--dir", "a", "--dir", "b"],
      ["--json", "--workspace", join(cwd, "missing")],
      ["--json", "extra"],
    ])
      expect(parseCaptureArgs(args, cwd), JSON.stringify(args)).toBeUndefined()
  })
})
