// A long-lived Rewind whose store is removed or replaced under it (storeLayout.ts,
// `storeReplacement`): SQLite keeps the unlinked database open and would go on writing into it, so
// every point after `rm -rf .rewind && rewind init`, a fresh clone of the workspace or a database
// copied back from a backup would vanish when the process ends. Every long-lived entry point is
// walked through every kind of replacement: the facade in a host's process refuses every call
// with `StoreReplaced`; `rewind serve` over stdio answers that error and stops; `rewind capture`
// handed to `rewind serve --workspace-socket` is made in its own process, in the store as it is
// now, and the server stops. (The hook server: hooks.server.e2e.test.ts.) In each, what the new
// store holds is exactly what was recorded after the replacement.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import * as fs from "node:fs"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { describe, expect, it } from "@effect/vitest"
import type { TurnId } from "@rewind/contracts"
import { Effect } from "effect"
import { openRewind, StoreReplaced } from "../src/index.js"
import { workspaceSocketPath } from "../src/server/workspaceSocket.js"
import { BIN, cli, jsonLines, tempDir } from "./cliHarness.js"
import { okValue } from "./okValue.js"

/** The built bin with `env` over this process's environment. */
const run = (args: ReadonlyArray<string>, env: Record<string, string>) => cli(args, undefined, env)

/** A workspace with two files and a store inside it (`.rewind`), made by `rewind init`. */
const workspace = async (env: Record<string, string>) => {
  const root = tempDir()
  fs.writeFileSync(join(root, "a.txt"), "a\n")
  fs.mkdirSync(join(root, "src"))
  fs.writeFileSync(join(root, "src", "b.ts"), "export const b = 1\n")
  expect((await run(["init", "--workspace", root], env)).code).toBe(0)
  return root
}

interface Replacement {
  readonly label: string
  /** Replaces the store of `root`; true when a store is there afterwards (made anew or copied back). */
  readonly apply: (root: string, env: Record<string, string>) => Promise<boolean>
  /**
   * The points a fresh process finds in the store there afterwards, before anything more is
   * recorded; undefined for a database copied back beside the running one's WAL, which SQLite
   * replays onto the copy (what copying a database under a running process does, with or without
   * Rewind: its count is not this test's to pin).
   */
  readonly points: number | undefined
}

const REPLACEMENTS: ReadonlyArray<Replacement> = [
  {
    label: "rm -rf .rewind, then rewind init",
    apply: async (root, env) => {
      fs.rmSync(join(root, ".rewind"), { recursive: true })
      expect((await run(["init", "--workspace", root], env)).code).toBe(0)
      return true
    },
    points: 0,
  },
  {
    label: "rm -rf .rewind",
    apply: async (root) => {
      fs.rmSync(join(root, ".rewind"), { recursive: true })
      return false
    },
    points: undefined,
  },
  {
    label: "the database copied back from a backup",
    apply: async (root) => {
      const data = join(root, ".rewind", "rewind-data")
      fs.copyFileSync(join(data, "rewind.db"), join(root, "..", "backup.db"))
      fs.renameSync(join(root, "..", "backup.db"), join(data, "rewind.db"))
      return true
    },
    points: undefined,
  },
  {
    label: "the workspace cloned again at its path",
    apply: async (root, env) => {
      fs.rmSync(root, { recursive: true })
      fs.mkdirSync(join(root, "src"), { recursive: true })
      fs.writeFileSync(join(root, "a.txt"), "a, cloned again\n")
      expect((await run(["init", "--workspace", root], env)).code).toBe(0)
      return true
    },
    points: 0,
  },
]

/** The point ids the store of `root` holds now, read by a fresh process. */
const pointIds = async (root: string, env: Record<string, string>) =>
  jsonLines((await run(["points", "--workspace", root, "--json"], env)).stdout)
    .map((line) => line.pointId)
    .filter((id): id is string => typeof id === "string")

/** `rewind serve` over stdio: one request at a time, each answered line parsed. */
const stdioServer = (root: string, env: Record<string, string>) => {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [BIN, "serve", "--workspace", root], {
    env: { ...process.env, ...env },
  })
  let stderr = ""
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d
  })
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  let id = 0
  return {
    call: async (method: string, params: ReadonlyArray<unknown>) => {
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params })}\n`)
      // Progress notifications come before the answer.
      for (;;) {
        const next = await lines.next()
        if (next.done === true) throw new Error(`the server ended without answering; stderr: ${stderr}`)
        const message = JSON.parse(next.value) as {
          id?: number
          result?: { ok: boolean; value?: unknown }
          error?: { data?: unknown }
        }
        if (message.id === id) return message
      }
    },
    exited,
    stderr: () => stderr,
    kill: () => child.kill("SIGKILL"),
  }
}

for (const replacement of REPLACEMENTS)
  describe(`a store replaced under a long-lived Rewind: ${replacement.label}`, { timeout: 60_000 }, () => {
    it("the facade refuses every call with StoreReplaced and records nothing anywhere", async () => {
      const env = { XDG_RUNTIME_DIR: tempDir() }
      const root = await workspace(env)
      const rewind = await openRewind({ workspaceRoot: root, create: false })
      try {
        const session = okValue(await rewind.createSession({ title: "host", cwd: root }))
        okValue(await rewind.capturePoint(session.id, "t-1" as TurnId))
        const present = await replacement.apply(root, env)
        for (const call of [
          () => rewind.capturePoint(session.id, "t-2" as TurnId),
          () => rewind.listSessions(),
          () => rewind.run(Effect.void),
        ]) {
          const error = await call().then(
            () => undefined,
            (e: unknown) => e,
          )
          expect(error).toBeInstanceOf(StoreReplaced)
          expect((error as StoreReplaced).message).toMatch(/was removed or replaced since/)
        }
        // Nothing was put back where the store was removed, and the new store holds nothing.
        if (!present) expect(fs.existsSync(join(root, ".rewind"))).toBe(false)
        if (replacement.points !== undefined)
          expect(await pointIds(root, env)).toHaveLength(replacement.points)
      } finally {
        await rewind.close()
      }
    })

    it("rewind serve over stdio answers StoreReplaced, records nothing, and stops", async () => {
      const env = { XDG_RUNTIME_DIR: tempDir() }
      const root = await workspace(env)
      const server = stdioServer(root, env)
      try {
        const created = await server.call("createSession", [{ title: "rpc", cwd: root }])
        const sessionId = (created.result?.value as { id: string }).id
        expect((await server.call("capturePoint", [sessionId, "t-1"])).result?.ok).toBe(true)
        const present = await replacement.apply(root, env)
        const answer = await server.call("capturePoint", [sessionId, "t-2"])
        expect(answer.error?.data).toMatchObject({ tag: "StoreReplaced" })
        expect(await server.exited).toBe(0)
        expect(server.stderr()).toMatch(/was removed or replaced since.*; stopping/)
        if (!present) expect(fs.existsSync(join(root, ".rewind"))).toBe(false)
        if (replacement.points !== undefined)
          expect(await pointIds(root, env)).toHaveLength(replacement.points)
      } finally {
        server.kill()
      }
    })

    it("rewind capture handed to rewind serve --workspace-socket is made in its own process, in the store as it is now; the server stops", async () => {
      const env = { XDG_RUNTIME_DIR: tempDir() }
      const root = await workspace(env)
      const server = spawn(process.execPath, [BIN, "serve", "--workspace", root, "--workspace-socket"], {
        stdio: ["ignore", "ignore", "pipe"],
        env: { ...process.env, ...env },
      })
      let stderr = ""
      const exited = new Promise<number | null>((resolve) => server.once("exit", (code) => resolve(code)))
      try {
        await new Promise<void>((resolve, reject) => {
          server.stderr.setEncoding("utf8").on("data", (d: string) => {
            stderr += d
            if (stderr.includes("listening on")) resolve()
          })
          void exited.then(() => reject(new Error(`the server ended: ${stderr}`)))
        })
        const capture = () => run(["capture", "--json", "--workspace", root], env)
        const before = await capture()
        expect(jsonLines(before.stdout).find((l) => l.type === "point")).toMatchObject({ via: "server" })
        const present = await replacement.apply(root, env)
        if (!present) expect((await run(["init", "--workspace", root], env)).code).toBe(0)
        const after = await capture()
        expect(after.code, after.stderr).toBe(0)
        const point = jsonLines(after.stdout).find((l) => l.type === "point")
        expect(point).toMatchObject({ via: "process" })
        expect(after.stderr).toMatch(/was removed or replaced since.*capturing here/)
        const held = await pointIds(root, env)
        expect(held).toContain(point?.pointId)
        if (replacement.points !== undefined) expect(held).toHaveLength(replacement.points + 1)
        expect(await exited).toBe(0)
        // It stopped as on a signal: its socket is gone, so the next client finds no server.
        expect(fs.existsSync(workspaceSocketPath(root, join(root, ".rewind"), env)!)).toBe(false)
        // The next capture finds no server and runs in its own process too.
        expect(jsonLines((await capture()).stdout).find((l) => l.type === "point")).toMatchObject({
          via: "process",
        })
      } finally {
        server.kill("SIGKILL")
      }
    })
  })
