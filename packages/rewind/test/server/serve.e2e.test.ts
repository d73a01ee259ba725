/**
 * End to end: the BUILT `rewind serve` (the package's bin, spawned) driven over stdio through a
 * whole scenario (session, turns, checkpoints, preview, apply, cascade, redo, fork, capture,
 * restore with the preview's token), a server SIGKILLed mid-restore whose successor lists and
 * resolves the interrupted operation, the bad-input table (each answered, nothing written, the
 * server still up), and the lifecycle (EOF and SIGTERM close the store and exit 0).
 * Build first: `npm run build` in packages/rewind.
 */
import { watch, writeFileSync } from "node:fs"
import { mkdir, readFile, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { cli, tempDir } from "../cliHarness.js"
import { startServer } from "./serveClient.js"

const workspace = async () => {
  const root = tempDir()
  const init = await cli(["init", "--workspace", root])
  expect(init.code).toBe(0)
  return root
}

const read = (root: string, path: string) => readFile(join(root, path), "utf8").catch(() => null)

interface Point {
  readonly point: { readonly pointId: string }
}

describe("rewind serve (the built bin over stdio)", () => {
  it.effect(
    "drives a whole scenario: turns, checkpoints, preview/apply, cascade, redo, fork, capture, restore with token",
    () =>
      Effect.promise(async () => {
        const root = await workspace()
        await writeFile(join(root, "a.txt"), "zero\n")
        const s = startServer(["--workspace", root])
        const session = await s.ok<{ id: string }>("createSession", { input: { title: "e2e", cwd: root } })
        const sid = session.id

        // Two turns, each captured at its start and writing a.txt through a recorded checkpoint.
        const turns: Array<{ messageId: string; turnId: string; replyId: string; pointId: string }> = []
        let before = "zero\n"
        for (const [i, after] of ["one\n", "two\n"].entries()) {
          const { messageId, turnId } = await s.ok<{ messageId: string; turnId: string }>(
            "appendUserMessage",
            [sid, { text: `write ${after.trim()}`, turnId: `t${i + 1}` }],
          )
          const captured = await s.ok<Point>("capturePoint", [sid, turnId])
          await writeFile(join(root, "a.txt"), after)
          const recorded = await s.ok<{ recorded: boolean }>("recordFileMutation", {
            input: { sessionId: sid, turnId, path: "./a.txt", toolName: "write", before, after },
          })
          expect(recorded.recorded).toBe(true)
          before = after
          const reply = await s.ok<{ messageId: string }>("appendReply", {
            sessionId: sid,
            input: { turnId, parts: [{ kind: "text", text: "done" }] },
          })
          await s.ok("completeTurnWithBoundary", [sid, turnId])
          turns.push({ messageId, turnId, replyId: reply.messageId, pointId: captured.point.pointId })
        }
        const [t1, t2] = turns as [(typeof turns)[0], (typeof turns)[0]]
        expect((await s.ok<ReadonlyArray<unknown>>("listPoints", [sid])).length).toBe(2)
        expect(await read(root, "a.txt")).toBe("two\n")

        // Preview, then apply, the undo of turn 2's file changes.
        const preview = await s.ok<{ canApply: boolean; token: string }>("previewFileRewind", [
          { sessionId: sid, turnId: t2.turnId },
        ])
        expect(preview.canApply).toBe(true)
        await s.ok("applyFileRewind", [preview])
        expect(await read(root, "a.txt")).toBe("one\n")
        await s.ok("redo", { sessionId: sid })
        expect(await read(root, "a.txt")).toBe("two\n")

        // Cascade from the first message: files and conversation; then redo brings both back.
        await s.ok("rewindCascade", [sid, t1.messageId, "both"])
        expect(await read(root, "a.txt")).toBe("zero\n")
        const cut = await s.ok<{ lines?: unknown }>("transcript", [sid])
        expect(JSON.stringify(cut)).not.toContain("write two")
        await s.ok("redo", [sid])
        expect(await read(root, "a.txt")).toBe("two\n")
        expect(JSON.stringify(await s.ok("transcript", [sid]))).toContain("write two")

        // Fork at turn 1's reply: a new session.
        const fork = await s.ok<Record<string, unknown>>("forkAtMessage", [sid, t1.replyId])
        const sessions = await s.ok<ReadonlyArray<{ sessionId: string }>>("listSessions")
        expect(sessions.length).toBe(2)
        expect(JSON.stringify(fork)).toContain(sessions.find((x) => x.sessionId !== sid)!.sessionId)

        // Capture now, then restore turn 1's point with the preview's token; a bad token is refused.
        await writeFile(join(root, "b.txt"), "new\n")
        const now = await s.ok<Point>("capturePoint", [sid, "manual-1"])
        expect(now.point.pointId).toMatch(/^pt-/)
        const bad = await s.request("restorePoint", [sid, t1.pointId, "not-a-token"])
        expect(bad.result).toMatchObject({ ok: false, refusal: { kind: "token_invalid" } })
        expect(await read(root, "a.txt")).toBe("two\n")
        const pointPreview = await s.ok<{ canApply: boolean; token: string }>("previewPointRestore", [
          sid,
          t1.pointId,
        ])
        expect(pointPreview.canApply).toBe(true)
        await s.ok("restorePoint", [sid, t1.pointId, pointPreview.token])
        expect(await read(root, "a.txt")).toBe("zero\n")
        // b.txt is not in that point at all (untracked there): a restore leaves it alone.
        expect(await read(root, "b.txt")).toBe("new\n")
        const again = await s.request("restorePoint", [sid, t1.pointId, pointPreview.token])
        expect(again.result).toMatchObject({ ok: false, refusal: { kind: "token_used" } })

        expect(await s.close()).toEqual({ code: 0, signal: null })
        expect(s.stderr()).toBe("")
        // docs/server.md's example transcript is taken from this run.
        const out = process.env.REWIND_SERVE_TRANSCRIPT
        if (out !== undefined) writeFileSync(out, `${s.transcript.join("\n")}\n`)
      }),
  )

  it.effect("a server SIGKILLed mid-restore: a new server lists the operation and resolves it", () =>
    Effect.promise(async () => {
      // Enough files that the restore is still writing when the first write is seen.
      for (let attempt = 0, files = 2000; attempt < 4; attempt++, files *= 2) {
        const root = await workspace()
        const dir = join(root, "many")
        await mkdir(dir)
        for (let i = 0; i < files; i++) writeFileSync(join(dir, `f${i}.txt`), `before ${i}\n`)
        const s = startServer(["--workspace", root])
        const { id: sid } = await s.ok<{ id: string }>("createSession", {
          input: { title: "kill", cwd: root },
        })
        const { turnId } = await s.ok<{ turnId: string }>("appendUserMessage", [
          sid,
          { text: "go", turnId: "t1" },
        ])
        const { point } = await s.ok<Point>("capturePoint", [sid, turnId])
        for (let i = 0; i < files; i++) writeFileSync(join(dir, `f${i}.txt`), `after ${i}\n`)
        const preview = await s.ok<{ token: string }>("previewPointRestore", [sid, point.pointId])
        const firstWrite = new Promise<void>((resolve) => {
          const watcher = watch(dir, () => {
            watcher.close()
            resolve()
          })
        })
        s.writeLine(
          JSON.stringify({
            jsonrpc: "2.0",
            id: "restore",
            method: "restorePoint",
            params: [sid, point.pointId, preview.token],
          }),
        )
        await firstWrite
        s.child.kill("SIGKILL")
        expect((await s.exited).signal).toBe("SIGKILL")

        const next = startServer(["--workspace", root])
        const pending =
          await next.ok<ReadonlyArray<{ record: { intent: { operationId: string } }; resolvable: boolean }>>(
            "recover",
          )
        if (pending.length === 0) {
          // The restore finished before the kill landed: try again with more files.
          await next.close()
          await rm(root, { recursive: true, force: true })
          continue
        }
        expect(pending).toHaveLength(1)
        expect(pending[0]!.resolvable).toBe(true)
        const operationId = pending[0]!.record.intent.operationId
        await next.ok("resolveOperation", { operationId, resolution: "continue" })
        expect(await next.ok<ReadonlyArray<unknown>>("recover")).toEqual([])
        for (const i of [0, files >> 1, files - 1])
          expect(await read(root, `many/f${i}.txt`)).toBe(`before ${i}\n`)
        expect(await next.close()).toEqual({ code: 0, signal: null })
        return
      }
      throw new Error("the kill never landed inside the restore, even with 16,000 files")
    }),
  )

  it.effect(
    "bad input: each line answered with its JSON-RPC error, nothing written, the server stays up",
    () =>
      Effect.promise(async () => {
        const root = await workspace()
        const s = startServer(["--workspace", root])
        const sessionsBefore = await s.ok<ReadonlyArray<unknown>>("listSessions")
        const table: ReadonlyArray<readonly [line: string, id: unknown, code: number]> = [
          ["{oops", null, -32700],
          ['{"jsonrpc":"2.0","id":"b1","method":"nope"}', "b1", -32601],
          [
            '{"jsonrpc":"2.0","id":"b2","method":"createSession","params":{"input":{"title":7,"cwd":"/"}}}',
            "b2",
            -32602,
          ],
          [
            '{"jsonrpc":"2.0","id":"b3","method":"appendUserMessage","params":["", {"text":"x"}]}',
            "b3",
            -32602,
          ],
          ['{"jsonrpc":"2.0","id":"b4","method":"createSession","params":{"inputs":{}}}', "b4", -32602],
          ['{"jsonrpc":"2.0","id":"b5","method":"createSession","params":5}', "b5", -32600],
          // A history window: 1 to 1,000 entries, no other key (the session need not exist: the
          // params are refused before the engine runs).
          ...[
            '{"limit":-1}',
            '{"limit":0}',
            '{"limit":1.5}',
            '{"limit":1001}',
            '{"limit":10,"extra":true}',
            '{"offset":-1,"limit":10}',
          ].map(
            (window, i) =>
              [
                `{"jsonrpc":"2.0","id":"w${i}","method":"sessionHistory","params":["ses_x",${window}]}`,
                `w${i}`,
                -32602,
              ] as const,
          ),
          ['{"jsonrpc":"1.0","id":"b6","method":"createSession"}', "b6", -32600],
        ]
        for (const [line, id, code] of table) {
          s.writeLine(line)
          const answer = await s.answerTo(id as string | null)
          expect(answer.error?.code, line).toBe(code)
          s.messages.splice(s.messages.indexOf(answer), 1)
        }
        // A 100 MB line: answered -32600 without being buffered whole, then the next request is served.
        const mb = "a".repeat(1024 * 1024)
        s.child.stdin.write(
          '{"jsonrpc":"2.0","id":"huge","method":"createSession","params":{"input":{"title":"',
        )
        for (let i = 0; i < 100; i++) {
          if (!s.child.stdin.write(mb)) await new Promise((resolve) => s.child.stdin.once("drain", resolve))
        }
        s.child.stdin.write('","cwd":"/"}}}\n')
        const huge = await s.answerTo(null)
        expect(huge.error).toMatchObject({ code: -32600, data: { tag: "LineTooLong" } })
        // A flood of 10,000 requests, written without reading an answer: every one answered.
        const flood: Array<string> = []
        for (let i = 0; i < 10_000; i++) {
          flood.push(
            JSON.stringify({
              jsonrpc: "2.0",
              id: `f${i}`,
              method: "transcript",
              params: [`ses_missing_${i % 7}`],
            }),
          )
        }
        s.child.stdin.write(`${flood.join("\n")}\n`)
        await s.answerTo("f9999")
        await Promise.all(flood.map((_, i) => s.answerTo(`f${i}`)))
        const floodAnswers = s.messages.filter((m) => typeof m.id === "string" && m.id.startsWith("f"))
        expect(floodAnswers).toHaveLength(10_000)
        expect(floodAnswers.every((m) => m.result?.refusal?.kind === "session_not_found")).toBe(true)
        // Still up, and nothing was written.
        expect(await s.ok("listSessions")).toEqual(sessionsBefore)
        expect(await s.close()).toEqual({ code: 0, signal: null })
      }),
  )

  it.effect(
    "SIGTERM and SIGINT close the store and exit 0; a missing store is refused like any command",
    () =>
      Effect.promise(async () => {
        const root = await workspace()
        for (const signal of ["SIGTERM", "SIGINT"] as const) {
          const s = startServer(["--workspace", root])
          await s.ok("listSessions")
          s.child.kill(signal)
          expect(await s.exited).toEqual({ code: 0, signal: null })
        }
        // The store was closed cleanly: the next server opens it and answers.
        const s = startServer(["--workspace", root])
        expect(await s.ok("listSessions")).toEqual([])
        await s.close()
        const empty = tempDir()
        const missing = startServer(["--workspace", empty])
        expect((await missing.exited).code).toBe(2)
        expect(missing.stderr()).toContain("rewind init")
      }),
  )

  it.effect("serve --schema prints an OpenRPC document of every method", () =>
    Effect.promise(async () => {
      const r = await cli(["serve", "--schema"])
      expect(r.code).toBe(0)
      const doc = JSON.parse(r.stdout) as {
        openrpc: string
        methods: Array<{ name: string; params: Array<{ name: string; schema: object }> }>
      }
      expect(doc.openrpc).toMatch(/^1\./)
      const names = doc.methods.map((m) => m.name)
      for (const name of [
        "createSession",
        "appendUserMessage",
        "capturePoint",
        "restorePoint",
        "redo",
        "recover",
      ]) {
        expect(names).toContain(name)
      }
      const append = doc.methods.find((m) => m.name === "appendUserMessage")!
      expect(append.params.map((p) => p.name)).toEqual(["sessionId", "input"])
      expect(append.params[1]!.schema).toMatchObject({ type: "object", required: ["text"] })
    }),
  )
})
