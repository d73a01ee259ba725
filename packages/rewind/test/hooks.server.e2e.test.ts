/**
 * The hook client and the server it reaches, through the BUILT binary: the first hook of a
 * workspace starts a server on the workspace's socket and later hooks reuse it; the server exits
 * once idle; a killed server's socket is replaced; two hooks starting at once share one server;
 * and a server slower than the client's timeout applies the event once: the client, having sent
 * it, reports the missing answer (stderr and `rewind status`) and does not run it again itself.
 * Every case runs with the Node client and with the native one (its installed command). Idle
 * exits are short here (see HOOK_TEST_ENV).
 */
import { execFile, spawn } from "node:child_process"
import { existsSync, lstatSync, readlinkSync, rmSync } from "node:fs"
import { createConnection, createServer, type Server } from "node:net"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { HookAgent } from "../src/hooks/hookEvent.js"
import { BIN, cli, jsonLines, tempDir } from "./cliHarness.js"
import { seedWorkspace } from "./fixtures/hookPayloads.js"
import { HOOK_CLIENTS, HOOK_TEST_ENV, hookBin, hookSocket, serversStarted } from "./hookHarness.js"

const payload = (root: string, sessionId: string, event: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ session_id: sessionId, cwd: root, hook_event_name: event, ...extra })

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms))

/** `rewind status --json` in the hooks' environment (their runtime dir decides the socket path). */
const statusWithHookEnv = (root: string) =>
  new Promise<{ stdout: string }>((resolve) => {
    execFile(
      process.execPath,
      [BIN, "status", "--json"],
      { cwd: root, encoding: "utf8", env: { ...process.env, ...HOOK_TEST_ENV, NO_COLOR: "1" } },
      (_error, stdout) => resolve({ stdout }),
    )
  })

/** Waits (polling, bounded) until `check` holds; fails the test with `what` otherwise. */
const eventually = async (what: string, check: () => boolean, limitMs = 30_000) => {
  const deadline = Date.now() + limitMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${limitMs} ms: ${what}`)
    await sleep(100)
  }
}

const sessionIds = async (root: string) =>
  jsonLines((await cli(["sessions", "--json"], root)).stdout)
    .map((l) => l.sessionId)
    .sort()

for (const client of HOOK_CLIENTS)
  describe(
    `rewind hook through the workspace's server (built binary, ${client} client)`,
    { timeout: 120_000 },
    () => {
      const hook = (agent: HookAgent, root: string, payload: string, env: Record<string, string> = {}) =>
        hookBin(agent, root, payload, env, client)

      it("the first hook starts the server, the next ones reuse it, and it exits once idle", async () => {
        const root = tempDir()
        seedWorkspace(root)
        const socket = hookSocket(root)
        expect(existsSync(socket)).toBe(false)
        const env = { REWIND_HOOK_IDLE_EXIT: "1s" }
        const first = await hook("claude-code", root, payload(root, "s1", "SessionStart"), env)
        expect(first).toEqual({ code: 0, stdout: "", stderr: "" })
        expect(lstatSync(socket).isSocket()).toBe(true)
        const inode = lstatSync(socket).ino
        // Back to back (well within the idle period): the same server answers.
        const prompt = await hook(
          "claude-code",
          root,
          payload(root, "s1", "UserPromptSubmit", { prompt: "hi" }),
          env,
        )
        expect(prompt).toEqual({ code: 0, stdout: "", stderr: "" })
        expect(serversStarted(root)).toBe(1)
        expect(lstatSync(socket).ino).toBe(inode)
        // `rewind status` names the server the hooks reach, and says it is running.
        const serverRecord = async () =>
          jsonLines((await statusWithHookEnv(root)).stdout).find((l) => l.type === "hook_server")
        // An open connection keeps the 1 s idle exit from stopping the server while status starts.
        const held = createConnection(socket)
        await new Promise((done) => held.once("connect", done))
        const record = await serverRecord()
        expect(record).toMatchObject({
          socket,
          running: true,
          pid: expect.any(Number),
          idleExitMs: 1000,
        })
        // Started in the filesystem's root: the server does not hold the workspace as its cwd.
        if (process.platform === "linux") expect(readlinkSync(`/proc/${record?.pid}/cwd`)).toBe("/")
        held.destroy()
        // Idle: the server stops and removes its socket.
        await eventually("the idle server removes its socket", () => !existsSync(socket))
        expect(await serverRecord()).toMatchObject({ socket, running: false })
        // The next hook starts a new one, and what the first recorded is there.
        const stop = await hook("claude-code", root, payload(root, "s1", "Stop"), env)
        expect(stop).toEqual({ code: 0, stdout: "", stderr: "" })
        expect(serversStarted(root)).toBe(2)
        const timeline = jsonLines(
          (await cli(["timeline", "--session", "claude-code.s1", "--json"], root)).stdout,
        )
        expect(timeline.map((t) => [t.n, t.prompt, t.status])).toEqual([[1, "hi", "completed"]])
      })

      it("a killed server's socket is replaced; two hooks starting at once share one server", async () => {
        const root = tempDir()
        seedWorkspace(root)
        const socket = hookSocket(root)
        // A server killed with SIGKILL leaves its socket file behind, with nobody answering on it.
        const leftover = spawn(
          process.execPath,
          [
            "-e",
            `require("node:net").createServer().listen(${JSON.stringify(socket)}, () => console.log("up"))`,
          ],
          { stdio: ["ignore", "pipe", "inherit"] },
        )
        await new Promise((done) => leftover.stdout!.once("data", done))
        leftover.kill("SIGKILL")
        await new Promise((done) => leftover.once("exit", done))
        expect(lstatSync(socket).isSocket()).toBe(true)

        const [a, b] = await Promise.all([
          hook("claude-code", root, payload(root, "left", "UserPromptSubmit", { prompt: "one" })),
          hook("gemini-cli", root, payload(root, "right", "BeforeAgent", { prompt: "two" })),
        ])
        expect(a).toEqual({ code: 0, stdout: "", stderr: "" })
        expect(b).toEqual({ code: 0, stdout: "{}\n", stderr: "" })
        expect(serversStarted(root)).toBe(1)
        expect(await sessionIds(root)).toEqual(["claude-code.left", "gemini-cli.right"])
      })

      it("a store removed under a running server: the event is recorded in a new store, and the old server stops", async () => {
        const root = tempDir()
        seedWorkspace(root)
        const socket = hookSocket(root)
        expect((await hook("claude-code", root, payload(root, "gone", "SessionStart"))).stderr).toBe("")
        rmSync(join(root, ".rewind"), { recursive: true, force: true })
        const prompt = await hook(
          "claude-code",
          root,
          payload(root, "gone", "UserPromptSubmit", { prompt: "after" }),
        )
        expect(prompt.code).toBe(0)
        expect(prompt.stderr).toMatch(
          /was removed or replaced since .*; the hook ran in its own process instead/,
        )
        await eventually("the old server stops and removes its socket", () => !existsSync(socket))
        // The next hook starts a server on the store as it is now.
        expect(await hook("claude-code", root, payload(root, "gone", "Stop"))).toEqual({
          code: 0,
          stdout: "",
          stderr: "",
        })
        expect(serversStarted(root)).toBe(2)
        const timeline = jsonLines(
          (await cli(["timeline", "--session", "claude-code.gone", "--json"], root)).stdout,
        )
        expect(timeline.map((t) => [t.prompt, t.status])).toEqual([["after", "completed"]])
      })

      it("no socket directory can be made (neither the runtime dir nor the temp dir): the hook runs in its own process and says why", async () => {
        const root = tempDir()
        seedWorkspace(root)
        // XDG_RUNTIME_DIR and TMPDIR name a file: neither `<it>/rewind` nor `<it>/rewind-<uid>` can be made.
        const notADir = join(root, "a.txt")
        const run = await hook(
          "claude-code",
          root,
          payload(root, "nodir", "UserPromptSubmit", { prompt: "p" }),
          { XDG_RUNTIME_DIR: notADir, TMPDIR: notADir },
        )
        expect(run.code).toBe(0)
        expect(run.stderr).toMatch(
          /the socket directory cannot be made .*the hook ran in its own process instead/,
        )
        const timeline = jsonLines(
          (await cli(["timeline", "--session", "claude-code.nodir", "--json"], root)).stdout,
        )
        expect(timeline.map((t) => t.prompt)).toEqual(["p"])
      })

      it("a server slower than the timeout: the event is applied once, by the server, never again in the hook's process", async () => {
        const root = tempDir()
        seedWorkspace(root)
        const socket = hookSocket(root)
        // The real server listens elsewhere; on the workspace's socket a relay holds each request
        // for 1.5 s before passing it on, so the client gives up (300 ms) while the server has yet
        // to apply the event.
        const upstream = `${socket}.real.sock`
        const server = spawn(
          process.execPath,
          [BIN, "serve", "--workspace", root, "--socket", upstream, "--idle-exit", "30s", "--create"],
          { cwd: root, stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, ...HOOK_TEST_ENV } },
        )
        // It says so on stderr once it listens.
        await new Promise<void>((done) => {
          let said = ""
          server.stderr!.on("data", (chunk: Buffer) => {
            said += chunk.toString("utf8")
            if (said.includes("listening on")) done()
          })
        })
        let applied!: () => void
        const answered = new Promise<void>((done) => {
          applied = done
        })
        const relay: Server = createServer((connection) => {
          connection.on("error", () => {})
          connection.once("data", (request) => {
            setTimeout(() => {
              const forward = createConnection(upstream, () => forward.write(request))
              forward.once("data", () => {
                forward.end()
                applied()
              })
            }, 1_500)
          })
        })
        await new Promise<void>((done) => relay.listen(socket, done))
        try {
          const run = await hook(
            "claude-code",
            root,
            payload(root, "slow", "UserPromptSubmit", { prompt: "once" }),
            { REWIND_HOOK_TIMEOUT_MS: "300" },
          )
          expect(run.code).toBe(0)
          expect(run.stderr).toMatch(
            /was sent to the server .* did not answer within 300 ms; it was not run again/,
          )
          await answered
        } finally {
          await new Promise((done) => relay.close(done))
          server.kill("SIGTERM")
          await new Promise((done) => server.once("exit", done))
        }
        expect(serversStarted(root)).toBe(0)
        const timeline = jsonLines(
          (await cli(["timeline", "--session", "claude-code.slow", "--json"], root)).stdout,
        )
        // Once: the server's turn. The in-process fallback used to add a second one.
        expect(timeline.map((t) => t.prompt)).toEqual(["once"])
        const status = jsonLines((await cli(["status", "--json"], root)).stdout)
        expect(status.find((l) => l.type === "hook_problems")).toMatchObject({
          count: 1,
          recent: [{ event: "(server)", message: expect.stringMatching(/did not answer within 300 ms/) }],
        })
      })

      it("a server that refuses to talk (closes before reading): the event was sent, so it is not run again", async () => {
        const root = tempDir()
        seedWorkspace(root)
        const socket = hookSocket(root)
        const hung: Server = createServer((connection) => connection.destroy())
        await new Promise<void>((done) => hung.listen(socket, done))
        try {
          const run = await hook("claude-code", root, payload(root, "gone", "SessionStart"), {
            REWIND_HOOK_TIMEOUT_MS: "500",
          })
          expect(run.code).toBe(0)
          expect(run.stderr).toMatch(/it was not run again in this process/)
        } finally {
          await new Promise((done) => hung.close(done))
        }
      })
    },
  )
