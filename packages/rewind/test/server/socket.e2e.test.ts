/**
 * `rewind serve --socket` on the built bin: the socket is mode 0600; a directory others can
 * write, a path someone else owns, a non-socket and a live socket are refused (touching nothing);
 * a crashed server's stale socket is replaced; several clients are served at once; a client that
 * crashes mid-pipeline leaves its session usable by the others; SIGTERM removes the socket.
 */
import { spawn } from "node:child_process"
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, statSync, writeFileSync } from "node:fs"
import { createConnection, type Socket } from "node:net"
import { dirname, join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { BIN, cli, jsonLines, tempDir } from "../cliHarness.js"

const startSocketServer = (root: string, path: string) => {
  const child = spawn(process.execPath, [BIN, "serve", "--workspace", root, "--socket", path], {
    stdio: ["ignore", "pipe", "pipe"],
  })
  let stderr = ""
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  )
  const ready = new Promise<boolean>((resolve) => {
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d
      if (stderr.includes("listening on")) resolve(true)
    })
    void exited.then(() => resolve(false))
  })
  return { child, exited, ready, stderr: () => stderr }
}

/** A line-oriented JSON-RPC client on the socket. */
const client = (path: string) =>
  new Promise<{
    socket: Socket
    call: (id: string | number, method: string, params?: unknown) => Promise<Record<string, unknown>>
  }>((resolve, reject) => {
    const socket = createConnection(path)
    const answers = new Map<unknown, (m: Record<string, unknown>) => void>()
    let buffered = ""
    socket.setEncoding("utf8")
    socket.on("data", (chunk: string) => {
      buffered += chunk
      for (let at = buffered.indexOf("\n"); at >= 0; at = buffered.indexOf("\n")) {
        const m = JSON.parse(buffered.slice(0, at)) as Record<string, unknown>
        buffered = buffered.slice(at + 1)
        answers.get(m.id)?.(m)
      }
    })
    socket.once("error", reject)
    socket.once("connect", () =>
      resolve({
        socket,
        call: (id, method, params) =>
          new Promise((done) => {
            answers.set(id, done)
            socket.write(
              `${JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) })}\n`,
            )
          }),
      }),
    )
  })

const setup = async () => {
  const root = tempDir()
  expect((await cli(["init", "--workspace", root])).code).toBe(0)
  const dir = join(tempDir(), "run")
  mkdirSync(dir, { mode: 0o700 })
  return { root, dir, path: join(dir, "rewind.sock") }
}

describe("rewind serve --socket (the built bin)", () => {
  it.effect(
    "a client that connects the moment the socket file appears is served (not dropped before the server is ready)",
    () =>
      Effect.promise(async () => {
        const { root, path } = await setup()
        const server = startSocketServer(root, path)
        // Poll for the file, not for the "listening" line: a client that races the server's
        // start used to connect before anyone served connections and wait forever.
        for (let i = 0; i < 6000 && !existsSync(path); i++) await new Promise((r) => setTimeout(r, 1))
        expect(existsSync(path)).toBe(true)
        // The kernel refuses a connection in the instant between the server's bind (the file
        // appears) and its listen: a refusal is immediate and explicit, so a client retries it (the
        // hook client does); what must never happen is an accepted connection left unserved.
        let c: Awaited<ReturnType<typeof client>> | undefined
        for (let attempt = 0; c === undefined; attempt++) {
          c = await client(path).catch((error: NodeJS.ErrnoException) => {
            if (error.code !== "ECONNREFUSED" || attempt >= 100) throw error
            return new Promise<undefined>((r) => setTimeout(() => r(undefined), 10))
          })
        }
        const answer = await c.call(1, "listSessions")
        expect(answer.result).toMatchObject({ ok: true })
        c.socket.end()
        server.child.kill("SIGTERM")
        expect((await server.exited).code).toBe(0)
      }),
    60_000,
  )

  it.effect(
    "serves several clients at once on a 0600 socket; a second server is refused; SIGTERM removes the socket",
    () =>
      Effect.promise(async () => {
        const { root, path } = await setup()
        const server = startSocketServer(root, path)
        expect(await server.ready).toBe(true)
        expect(lstatSync(path).mode & 0o777).toBe(0o600)
        const [a, b] = await Promise.all([client(path), client(path)])
        const created = await a.call(1, "createSession", {
          input: { title: "socket", cwd: root, sessionId: "s1" },
        })
        expect(created.result).toMatchObject({ ok: true })
        const answers = await Promise.all([
          a.call(2, "appendUserMessage", ["s1", { text: "from a" }]),
          b.call(2, "appendUserMessage", ["s1", { text: "from b" }]),
          b.call(3, "listSessions"),
        ])
        expect(answers.map((m) => (m.result as { ok: boolean }).ok)).toEqual([true, true, true])

        const second = startSocketServer(root, path)
        expect(await second.exited).toEqual({ code: 2, signal: null })
        expect(second.stderr()).toContain(`another server is listening on ${path}`)
        // The first one is untouched by that attempt.
        expect((await b.call(4, "listSessions")).result).toMatchObject({ ok: true })

        a.socket.destroy()
        b.socket.destroy()
        server.child.kill("SIGTERM")
        expect(await server.exited).toEqual({ code: 0, signal: null })
        expect(existsSync(path)).toBe(false)
      }),
  )

  it.effect("a crashed client leaves nothing locked; a crashed server's stale socket is replaced", () =>
    Effect.promise(async () => {
      const { root, path } = await setup()
      const server = startSocketServer(root, path)
      expect(await server.ready).toBe(true)
      const a = await client(path)
      await a.call(1, "createSession", { input: { title: "crash", cwd: root, sessionId: "s1" } })
      // A pipeline on s1, and the client gone before reading a single answer.
      for (let i = 0; i < 50; i++) {
        a.socket.write(
          `${JSON.stringify({ jsonrpc: "2.0", id: `p${i}`, method: "appendUserMessage", params: ["s1", { text: `m${i}` }] })}\n`,
        )
      }
      a.socket.destroy()
      const b = await client(path)
      const after = await b.call("b1", "appendUserMessage", ["s1", { text: "after the crash" }])
      expect(after.result).toMatchObject({ ok: true })
      b.socket.destroy()

      server.child.kill("SIGKILL")
      await server.exited
      expect(lstatSync(path).isSocket()).toBe(true)
      const next = startSocketServer(root, path)
      expect(await next.ready).toBe(true)
      const c = await client(path)
      const transcript = await c.call(1, "transcript", ["s1"])
      expect(JSON.stringify(transcript.result)).toContain("after the crash")
      c.socket.destroy()
      next.child.kill("SIGINT")
      expect(await next.exited).toEqual({ code: 0, signal: null })
    }),
  )

  it.effect(
    "creates the socket's directory, private, when it is missing: the path `rewind status` prints works",
    () =>
      Effect.promise(async () => {
        const root = tempDir()
        expect((await cli(["init", "--workspace", root])).code).toBe(0)
        // The socket `status` reports before any server ran: its directory does not exist yet.
        const runtime = join(tempDir(), "runtime")
        const env = { XDG_RUNTIME_DIR: runtime }
        const status = await cli(["status", "--json", "--workspace", root], undefined, env)
        const line = jsonLines(status.stdout).find((r) => r.type === "hook_server")
        const path = line?.socket
        expect(typeof path).toBe("string")
        expect(existsSync(dirname(path as string))).toBe(false)
        const server = startSocketServer(root, path as string)
        expect(await server.ready).toBe(true)
        expect(statSync(dirname(path as string)).mode & 0o777).toBe(0o700)
        const c = await client(path as string)
        expect((await c.call(1, "listSessions", [])).result).toMatchObject({ ok: true })
        c.socket.destroy()
        server.child.kill("SIGINT")
        expect(await server.exited).toEqual({ code: 0, signal: null })
      }),
  )

  it.effect(
    "refuses a directory others can write, a path someone else owns and a non-socket, touching nothing",
    () =>
      Effect.promise(async () => {
        const { root, dir, path } = await setup()
        chmodSync(dir, 0o777)
        const open = startSocketServer(root, path)
        expect(await open.exited).toEqual({ code: 2, signal: null })
        expect(open.stderr()).toContain("writable by others")
        expect(existsSync(path)).toBe(false)
        chmodSync(dir, 0o700)

        writeFileSync(path, "not a socket")
        const file = startSocketServer(root, path)
        expect(await file.exited).toEqual({ code: 2, signal: null })
        expect(file.stderr()).toContain("is not a socket")
        expect(lstatSync(path).isFile()).toBe(true)

        if (process.getuid?.() === 0) {
          // Root can make a file someone else owns; as another user the check is the same code path.
          chownSync(path, 12345, 12345)
          const theirs = startSocketServer(root, path)
          expect(await theirs.exited).toEqual({ code: 2, signal: null })
          expect(theirs.stderr()).toContain("belongs to uid 12345")
          expect(lstatSync(path).uid).toBe(12345)
        }
      }),
  )
})
