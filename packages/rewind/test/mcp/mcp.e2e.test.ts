/**
 * `rewind mcp` on the built bin, driven by the MCP SDK's own `Client` over `StdioClientTransport`
 * (a client nobody here wrote): the tools and their annotations, a call of each, the resources,
 * and destructive calls without a token of this server's preview refused with nothing written.
 */
import { readFile, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import type { SessionId, TurnId } from "@rewind/contracts"
import { Effect } from "effect"
import { openRewind } from "../../src/index.js"
import { BIN, cli, tempDir } from "../cliHarness.js"

/** A store with one session whose turn t1 captured a.txt = "one", then a.txt changed to "two". */
const workspace = async () => {
  const root = tempDir()
  expect((await cli(["init", "--workspace", root])).code).toBe(0)
  await writeFile(join(root, "a.txt"), "one\n")
  const rewind = await openRewind({ workspaceRoot: root })
  const session = await rewind.createSession({ title: "mcp", cwd: root, sessionId: "ses_mcp" as SessionId })
  expect(session.ok).toBe(true)
  const turn = await rewind.appendUserMessage("ses_mcp" as SessionId, {
    text: "change a",
    turnId: "t1" as TurnId,
  })
  expect(turn.ok).toBe(true)
  const outcome = await rewind.capturePoint("ses_mcp" as SessionId, "t1" as TurnId)
  const captured = outcome.ok ? outcome.value : undefined
  if (captured?._tag !== "Captured") throw new Error("no point")
  await writeFile(join(root, "a.txt"), "two\n")
  await rewind.close()
  return { root, pointId: captured.point.pointId as string }
}

const connect = async (root: string) => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp", "--workspace", root],
    stderr: "pipe",
  })
  const client = new Client({ name: "rewind-test", version: "0.0.0" })
  await client.connect(transport)
  return client
}

type ToolResult = { content: Array<{ type: string; text: string }>; isError?: boolean }
const json = (r: unknown) => JSON.parse((r as ToolResult).content[0]!.text) as Record<string, unknown>
const read = (root: string) => readFile(join(root, "a.txt"), "utf8")

describe("rewind mcp (the built bin, the SDK's own client)", () => {
  it.effect(
    "lists its tools with annotations, calls each, serves resources, and refuses a destructive call without its token",
    () =>
      Effect.promise(async () => {
        const { root, pointId } = await workspace()
        const client = await connect(root)
        try {
          const { tools } = await client.listTools()
          const byName = Object.fromEntries(tools.map((t) => [t.name, t]))
          expect(Object.keys(byName).sort()).toEqual(
            [
              "capture_now",
              "diff_point",
              "gc_preview",
              "list_checkpoints",
              "list_points",
              "preview_restore",
              "preview_turn_restore",
              "redo",
              "restore_point",
              "status",
            ].sort(),
          )
          for (const name of [
            "list_checkpoints",
            "list_points",
            "diff_point",
            "preview_restore",
            "status",
            "gc_preview",
          ]) {
            expect(byName[name]!.annotations, name).toMatchObject({
              readOnlyHint: true,
              destructiveHint: false,
              idempotentHint: true,
            })
          }
          for (const name of ["restore_point", "redo"]) {
            expect(byName[name]!.annotations, name).toMatchObject({
              readOnlyHint: false,
              destructiveHint: true,
              idempotentHint: false,
            })
          }
          // It may record the target point, and writes no workspace file.
          expect(byName.preview_turn_restore!.annotations).toMatchObject({
            readOnlyHint: false,
            destructiveHint: false,
          })
          expect(byName.capture_now!.annotations).toMatchObject({
            readOnlyHint: false,
            destructiveHint: false,
          })
          expect(byName.restore_point!.inputSchema.required).toEqual(["pointId", "token"])
          for (const t of tools) expect(t.description!.length, t.name).toBeGreaterThan(60)

          // Read-only tools.
          const points = json(await client.callTool({ name: "list_points", arguments: {} }))
          expect(JSON.stringify(points)).toContain(pointId)
          const checkpoints = (await client.callTool({
            name: "list_checkpoints",
            arguments: { sessionId: "ses_mcp" },
          })) as ToolResult
          expect(checkpoints.isError).toBeFalsy()
          const diff = json(await client.callTool({ name: "diff_point", arguments: { pointId } }))
          expect(JSON.stringify(diff)).toContain("a.txt")
          expect(JSON.stringify(diff)).toContain("+two")
          expect(json(await client.callTool({ name: "status", arguments: {} }))).toHaveProperty("snapshots")
          expect((await client.callTool({ name: "gc_preview", arguments: {} })).isError).toBeFalsy()

          // Destructive calls without a token of this server's preview: refused, nothing written.
          const noToken = (await client.callTool({
            name: "restore_point",
            arguments: { pointId },
          })) as ToolResult
          expect(noToken.isError).toBe(true)
          expect(noToken.content[0]!.text).toContain("token")
          const guessed = (await client.callTool({
            name: "restore_point",
            arguments: { pointId, token: "rwt1.0000" },
          })) as ToolResult
          expect(guessed.isError).toBe(true)
          expect(guessed.content[0]!.text).toMatch(/^token_invalid: .*preview_restore/)
          // A real engine token, but from a preview made elsewhere (the CLI): not this server's.
          const elsewhere = await cli(["preview", pointId, "--workspace", root, "--json"])
          const cliToken = (JSON.parse(elsewhere.stdout.trim().split("\n").at(-1)!) as { token: string })
            .token
          expect(cliToken).toMatch(/^rwt/)
          const foreign = (await client.callTool({
            name: "restore_point",
            arguments: { pointId, token: cliToken },
          })) as ToolResult
          expect(foreign.isError).toBe(true)
          const redoNoToken = (await client.callTool({
            name: "redo",
            arguments: { dryRun: false },
          })) as ToolResult
          expect(redoNoToken.isError).toBe(true)
          expect(await read(root)).toBe("two\n")

          // Preview (dry run), then restore with its token; the token is spent.
          const preview = json(await client.callTool({ name: "preview_restore", arguments: { pointId } }))
          expect(preview.canApply).toBe(true)
          expect(await read(root)).toBe("two\n")
          const restored = (await client.callTool({
            name: "restore_point",
            arguments: { pointId, token: preview.token },
          })) as ToolResult
          expect(restored.isError).toBeFalsy()
          expect(await read(root)).toBe("one\n")
          const twice = (await client.callTool({
            name: "restore_point",
            arguments: { pointId, token: preview.token },
          })) as ToolResult
          expect(twice.isError).toBe(true)

          // Redo: a dry run gives a token; with it, the engine's redo undoes the point restore (the
          // file back as before it); a second one has nothing left to undo, and says so.
          const redoOnce = async () => {
            const dry = json(await client.callTool({ name: "redo", arguments: {} }))
            expect(dry.dryRun).toBe(true)
            return (await client.callTool({
              name: "redo",
              arguments: { dryRun: false, token: dry.token },
            })) as ToolResult
          }
          const redone = await redoOnce()
          expect(redone.isError).toBeFalsy()
          expect(await read(root)).toBe("two\n")
          const again = await redoOnce()
          expect(again.isError).toBe(true)
          expect(again.content[0]!.text).toMatch(/^nothing_to_undo: /)

          // Capture now adds a point.
          const captured = json(await client.callTool({ name: "capture_now", arguments: { label: "check" } }))
          expect(captured._tag).toBe("Captured")
          // Bad arguments are a tool error naming the field, not a crash.
          const bad = (await client.callTool({ name: "diff_point", arguments: { pointId: 7 } })) as ToolResult
          expect(bad.isError).toBe(true)
          expect(bad.content[0]!.text).toContain("pointId")

          // Resources: the session's timeline and a point's diff.
          const { resources } = await client.listResources()
          expect(resources.map((r) => r.uri)).toContain("rewind://sessions/ses_mcp/timeline")
          const { resourceTemplates } = await client.listResourceTemplates()
          expect(resourceTemplates.map((t) => t.uriTemplate)).toContain(
            "rewind://sessions/{sessionId}/points/{pointId}/diff",
          )
          const timeline = await client.readResource({ uri: "rewind://sessions/ses_mcp/timeline" })
          expect(String((timeline.contents[0] as { text: string }).text)).toContain("change a")
          const pointDiff = await client.readResource({
            uri: `rewind://sessions/ses_mcp/points/${pointId}/diff`,
          })
          // After the redo, the workspace is as before the restore: a.txt differs from the point.
          const diffed = JSON.parse(String((pointDiff.contents[0] as { text: string }).text)) as {
            pointId: string
            entries: Array<{ path: string }>
          }
          expect(diffed.pointId).toBe(pointId)
          expect(diffed.entries.map((e) => e.path)).toEqual(["a.txt"])
        } finally {
          await client.close()
        }
      }),
  )
  it.effect(
    "preview_turn_restore: the files as before a turn, created files deleted too, then restore_point",
    () =>
      Effect.promise(async () => {
        const { root } = await workspace()
        // The agent made b.txt in turn t1; the next turn's capture saw it.
        await writeFile(join(root, "b.txt"), "made in t1\n")
        const rewind = await openRewind({ workspaceRoot: root })
        expect(
          (await rewind.appendUserMessage("ses_mcp" as SessionId, { text: "next", turnId: "t2" as TurnId }))
            .ok,
        ).toBe(true)
        expect((await rewind.capturePoint("ses_mcp" as SessionId, "t2" as TurnId)).ok).toBe(true)
        await rewind.close()
        const client = await connect(root)
        try {
          const preview = json(
            await client.callTool({ name: "preview_turn_restore", arguments: { turnId: "t1" } }),
          )
          const target = preview.target as { pointId: string; added: Array<string> }
          expect(target.added).toEqual(["b.txt"])
          expect(preview.canApply).toBe(true)
          expect(
            (preview.changes as Array<{ path: string; action: string }>)
              .map((c) => [c.path, c.action])
              .sort(),
          ).toEqual([
            ["a.txt", "write"],
            ["b.txt", "delete"],
          ])
          const restored = (await client.callTool({
            name: "restore_point",
            arguments: { pointId: target.pointId, token: preview.token },
          })) as ToolResult
          expect(restored.isError).toBeFalsy()
          expect(await read(root)).toBe("one\n")
          await expect(readFile(join(root, "b.txt"), "utf8")).rejects.toThrow()
          const unknown = (await client.callTool({
            name: "preview_turn_restore",
            arguments: { turnId: "no-such-turn" },
          })) as ToolResult
          expect(unknown.isError).toBe(true)
          expect(unknown.content[0]!.text).toMatch(/^not_found: /)
        } finally {
          await client.close()
        }
      }),
  )
})
