/**
 * End-to-end tests of the BUILT `rewind` binary (`dist/cli/rewind.mjs`, the bundled `bin`; the package's test task
 * depends on its build) on temporary workspaces.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { cli, jsonLines, seeded, tempDir } from "./cliHarness.js"

// Each case spawns several Node processes; on a loaded machine that takes a while.
describe("rewind CLI (built binary)", { timeout: 240_000 }, () => {
  it("init creates the store; sessions and log print versioned JSON Lines", async () => {
    const fresh = tempDir()
    const init = await cli(["init", "--json"], fresh)
    expect(init.code).toBe(0)
    expect(jsonLines(init.stdout)).toEqual([
      { v: 1, type: "init", workspace: expect.any(String), dir: expect.stringContaining(".rewind") },
    ])
    expect(existsSync(join(fresh, ".rewind", "rewind.db"))).toBe(true)

    const { root, sessionId } = await seeded()
    const sessions = await cli(["sessions", "--json", "--workspace", root])
    expect(sessions.code).toBe(0)
    const lines = jsonLines(sessions.stdout)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({ type: "session", sessionId, kind: "main", title: "seeded" })

    const log = await cli(["log", sessionId, "--json", "--workspace", root])
    expect(log.code).toBe(0)
    const messages = jsonLines(log.stdout)
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"])
    expect(messages.every((m) => m.type === "message")).toBe(true)

    const human = await cli(["sessions", "--workspace", root])
    expect(human.code).toBe(0)
    expect(human.stdout).toMatch(/^SESSION\s+KIND\s+CREATED\s+EVENTS\s+TITLE/)
    expect(human.stdout).toContain(sessionId)
  })

  it("preview, cascade, restore and fork act on the workspace", async () => {
    const { root, sessionId, turns } = await seeded()
    const preview = await cli(["preview", turns[1]!.messageId, "--json", "--workspace", root])
    expect(preview.code).toBe(0)
    expect(jsonLines(preview.stdout)[0]).toMatchObject({ type: "preview", sessionId, canApply: true })

    writeFileSync(join(root, "a.txt"), "edited by hand\n")
    const refused = await cli(["preview", turns[1]!.messageId, "--json", "--workspace", root])
    expect(refused.code).toBe(1)
    const refusedLines = jsonLines(refused.stdout)
    expect(refusedLines[0]).toMatchObject({ type: "preview", canApply: false })
    expect(refusedLines[1]).toMatchObject({ type: "error", code: 1, reason: "unsafe_files" })
    writeFileSync(join(root, "a.txt"), "two\n")

    const cascade = await cli([
      "cascade",
      turns[1]!.messageId,
      "--scope",
      "both",
      "--json",
      "--workspace",
      root,
    ])
    expect(cascade.code).toBe(0)
    expect(jsonLines(cascade.stdout)[0]).toMatchObject({
      type: "restore",
      files: [{ path: "a.txt", action: "restored" }],
    })
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("one\n")

    const restore = await cli(["restore", "--message", turns[0]!.messageId, "--workspace", root])
    expect(restore.code).toBe(0)
    expect(existsSync(join(root, "a.txt"))).toBe(false)

    const fork = await cli(["fork", turns[0]!.replyId, "--json", "--session", sessionId, "--workspace", root])
    expect(fork.code).toBe(0)
    expect(jsonLines(fork.stdout)[0]).toMatchObject({
      type: "fork",
      parentSessionId: sessionId,
      replayed: false,
    })

    const status = await cli(["status", "--json", "--workspace", root])
    expect(status.code).toBe(0)
    expect(jsonLines(status.stdout)[0]).toMatchObject({ type: "store", sessions: 2 })

    const doctor = await cli(["doctor", "--json", "--workspace", root])
    expect(doctor.code).toBe(0)
    expect(jsonLines(doctor.stdout)[0]).toMatchObject({ type: "doctor", ok: true, database: { ok: true } })
  })

  it("a refusal is a failed command (exit 2) with the refusal's message", async () => {
    const { root } = await seeded()
    const r = await cli(["log", "ses_missing", "--json", "--workspace", root])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain("ses_missing")
    expect(jsonLines(r.stdout)).toEqual([
      { v: 1, type: "error", code: 2, reason: "session_not_found", message: expect.any(String) },
    ])
  })

  it("bad arguments exit 3 with a clear message", async () => {
    const root = tempDir()
    const unknown = await cli(["frobnicate"], root)
    expect(unknown.code).toBe(3)
    expect(unknown.stderr).toContain("Invalid subcommand")
    const missing = await cli(["log"], root)
    expect(missing.code).toBe(3)
    expect(missing.stderr).toContain("Missing argument <session>")
    const badId = await cli(["log", "../etc/passwd", "--workspace", root])
    expect(badId.code).toBe(3)
    expect(badId.stderr).toContain("SessionId")
    const neither = await cli(["restore", "--workspace", root], root)
    expect(neither.code).toBe(3)
    expect(neither.stderr).toContain("give exactly one of <point> (with --token), --checkpoint")
    const scope = await cli(["cascade", "msg_1", "--scope", "everything", "--workspace", root])
    expect(scope.code).toBe(3)
  })

  // In groups, each with its own time ceiling: one Node process per command is slow on a busy machine.
  it.each([
    ["init", "sessions", "log", "status", "capture"],
    ["points", "diff", "preview", "restore", "cascade"],
    ["redo", "fork", "recover", "gc", "doctor"],
  ])("--help works on every command: %s, %s, %s, %s, %s", async (...names) => {
    const results = await Promise.all(names.map((command) => cli([command, "--help"])))
    results.forEach((r, i) => {
      expect(r.code, names[i]).toBe(0)
      expect(r.stdout, names[i]).toContain("USAGE")
      expect(r.stdout, names[i]).toContain(`$ ${names[i]} `)
    })
  })

  it("a missing store is a clear error (exit 2) and creates nothing", async () => {
    const root = tempDir()
    const r = await cli(["sessions", "--workspace", root])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain("no Rewind store")
    expect(r.stderr).toContain("rewind init")
    expect(existsSync(join(root, ".rewind"))).toBe(false)
  })

  it("a corrupt store file is a clear error (exit 2) and the file is left untouched", async () => {
    const root = tempDir()
    mkdirSync(join(root, ".rewind"))
    const garbage = Buffer.from("this is not a SQLite database, just some bytes\n".repeat(200))
    writeFileSync(join(root, ".rewind", "rewind.db"), garbage)
    for (const command of ["sessions", "doctor"]) {
      const r = await cli([command, "--json", "--workspace", root])
      expect(r.code, command).toBe(2)
      expect(r.stderr, command).toMatch(/error: .+/)
      expect(jsonLines(r.stdout)[0]).toMatchObject({ type: "error", code: 2 })
      expect(readFileSync(join(root, ".rewind", "rewind.db")).equals(garbage)).toBe(true)
    }
  })
})
