/**
 * Every entry point of the built bin, run from a subdirectory of a workspace without naming it,
 * acts on that workspace and its store (src/workspaceRoot.ts, one rule) and creates nothing in the
 * subdirectory; `init` alone makes a workspace where it is run.
 */
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { BIN, cli, jsonLines, tempDir } from "./cliHarness.js"

const run = cli

const sessionsOf = async (root: string, env: Record<string, string>) =>
  jsonLines((await run(["sessions", "--json", "--workspace", root], root, env)).stdout)
    .filter((r) => r.type === "session")
    .map((r) => r.sessionId)

describe("a command run from a subdirectory of a workspace (the built bin)", () => {
  it("finds the workspace's store at every entry point; only init makes one where it runs", async () => {
    const root = tempDir()
    const sub = join(root, "src", "deep")
    mkdirSync(sub, { recursive: true })
    writeFileSync(join(root, "a.txt"), "one\n")
    // Its own runtime directory (the hook and capture sockets) and no agent project variables.
    const env = { XDG_RUNTIME_DIR: join(tempDir(), "run"), CLAUDE_PROJECT_DIR: "", GEMINI_PROJECT_DIR: "" }
    const top = await run(["init", "--json"], root, env)
    expect(top.code, top.stderr).toBe(0)
    // Inside no other workspace: nothing enclosing to mention.
    expect(jsonLines(top.stdout)[0]).toEqual({
      v: 1,
      type: "init",
      workspace: root,
      dir: join(root, ".rewind"),
    })

    // Every point in the root's store (the captures must add theirs there, one each).
    const points = async () =>
      (
        (jsonLines((await run(["status", "--json", "--workspace", root], root, env)).stdout).find(
          (r) => r.type === "snapshots",
        )?.pointsPerSession ?? []) as Array<{ points: number }>
      ).reduce((sum, s) => sum + s.points, 0)
    const capturesOne = async (args: ReadonlyArray<string>, via: string) => {
      const before = await points()
      const r = await run(args, sub, env)
      expect(r.code, r.stderr).toBe(0)
      expect(jsonLines(r.stdout).find((l) => l.type === "point")).toMatchObject({ files: 1, via })
      expect(await points()).toBe(before + 1)
    }
    const entryPoints: ReadonlyArray<{
      readonly name: string
      readonly check: () => Promise<void>
    }> = [
      {
        name: "capture (the fast path)",
        check: () => capturesOne(["capture", "--json"], "process"),
      },
      {
        name: "capture --path (the full CLI)",
        check: () => capturesOne(["capture", "--json", "--path", "a.txt"], "process"),
      },
      {
        name: "capture handed to the workspace's running server",
        check: async () => {
          const server = spawn(process.execPath, [BIN, "serve", "--workspace-socket", "--no-watch"], {
            cwd: root,
            env: { ...process.env, ...env },
          })
          try {
            await new Promise<void>((ready, failed) => {
              let stderr = ""
              server.stderr.setEncoding("utf8").on("data", (d: string) => {
                stderr += d
                if (stderr.includes("listening on")) ready()
              })
              server.once("exit", () => failed(new Error(`serve exited: ${stderr}`)))
            })
            await capturesOne(["capture", "--json"], "server")
          } finally {
            server.kill("SIGTERM")
          }
        },
      },
      {
        name: "status",
        check: async () => {
          const r = await run(["status", "--json"], sub, env)
          expect(r.code, r.stderr).toBe(0)
          expect(jsonLines(r.stdout).find((l) => l.type === "store")).toMatchObject({
            workspace: root,
            dir: join(root, ".rewind"),
          })
        },
      },
      ...[["sessions"], ["timeline"], ["diff"], ["doctor"]].map((args) => ({
        name: args[0]!,
        check: async () => {
          const r = await run([...args, "--json"], sub, env)
          expect(r.code, r.stderr).toBe(0)
        },
      })),
      {
        name: "serve (stdio)",
        check: async () => {
          const r = await run(
            ["serve", "--no-watch"],
            sub,
            env,
            `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "listSessions", params: [] })}\n`,
          )
          expect(r.code, r.stderr).toBe(0)
          const answer = JSON.parse(r.stdout.split("\n")[0]!) as {
            result: { ok: boolean; value: Array<unknown> }
          }
          expect(answer.result.ok).toBe(true)
          expect(answer.result.value.length).toBeGreaterThan(0)
        },
      },
      {
        name: "hook claude-code (payload cwd in the subdirectory)",
        check: async () => {
          const payload = {
            session_id: "sub-dir",
            transcript_path: "/nonexistent",
            cwd: sub,
            hook_event_name: "UserPromptSubmit",
            prompt: "from a subdirectory",
          }
          const r = await run(["hook", "claude-code"], sub, env, JSON.stringify(payload))
          expect(r.code, r.stderr).toBe(0)
          expect(await sessionsOf(root, env)).toContain("claude-code.sub-dir")
        },
      },
      {
        name: "install claude-code",
        check: async () => {
          const r = await run(["install", "claude-code", "--client", "node"], sub, env)
          expect(r.code, r.stderr).toBe(0)
          expect(existsSync(join(root, ".claude", "settings.json"))).toBe(true)
        },
      },
    ]
    for (const entry of entryPoints) {
      await entry.check().catch((error: unknown) => {
        throw new Error(`${entry.name}: ${error instanceof Error ? error.message : String(error)}`)
      })
      // Nothing was made in the subdirectory: no store, no settings, no second workspace.
      expect(readdirSync(sub), entry.name).toEqual([])
    }

    // `init` makes its workspace where it is told (as `git init`): the one exception.
    const init = await run(["init", "--json"], sub, env)
    expect(init.code, init.stderr).toBe(0)
    // ...and says it lies inside the other one, whose commands below it now find this store.
    expect(jsonLines(init.stdout)[0]).toMatchObject({
      type: "init",
      workspace: sub,
      enclosingWorkspace: root,
    })
    expect(existsSync(join(sub, ".rewind"))).toBe(true)
    const again = await run(["init"], sub, env)
    expect(again.stdout).toContain(`note this workspace lies inside ${root}, which has its own store`)
  })
})
