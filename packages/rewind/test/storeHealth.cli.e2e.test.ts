// The store's health as the built CLI reports it (issue 21 items 4, 10; issue 20 item 7): no store
// is exit 2 for every command but init, which refuses to replace an empty file; a store reached
// through a link is refused, writing nothing at the link's target.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { OperationId, WorkspacePath } from "@rewind/contracts"
import { OperationJournal } from "@rewind/core"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { openRewind } from "../src/index.js"
import { cli, jsonLines, tempDir } from "./cliHarness.js"

const COMMANDS: ReadonlyArray<ReadonlyArray<string>> = [
  ["status"],
  ["sessions"],
  ["points"],
  ["capture"],
  ["doctor"],
  ["recover"],
  ["gc", "--keep-last", "2"],
]

describe("no store: a missing or 0-byte rewind.db", () => {
  it("is exit 2 for every command but init, and nothing is created or replaced", async () => {
    const root = tempDir()
    for (const args of COMMANDS) {
      const r = await cli([...args, "--workspace", root])
      expect(r.code, args.join(" ")).toBe(2)
      expect(r.stderr, args.join(" ")).toMatch(/no Rewind store/)
      expect(fs.readdirSync(root), args.join(" ")).toEqual([])
    }
    fs.mkdirSync(join(root, ".rewind"))
    const db = join(root, ".rewind", "rewind.db")
    fs.writeFileSync(db, "")
    for (const args of COMMANDS) {
      const r = await cli([...args, "--workspace", root])
      expect(r.code, args.join(" ")).toBe(2)
      expect(r.stderr, args.join(" ")).toMatch(/no Rewind store.*empty \(0 bytes\)/)
      expect(fs.readdirSync(join(root, ".rewind")), args.join(" ")).toEqual(["rewind.db"])
      expect(fs.statSync(db).size).toBe(0)
    }
    const init = await cli(["init", "--workspace", root, "--json"])
    expect(init.code).toBe(2)
    expect(init.stdout).toMatch(/"reason":"StoreRefused"/)
    expect(init.stdout).toMatch(/empty \(0 bytes\).*rewind init/)
    expect(fs.readdirSync(join(root, ".rewind"))).toEqual(["rewind.db"])
    expect(fs.statSync(db).size).toBe(0)
  })
})

describe("a store reached through a symlink", () => {
  it("status and init refuse a .rewind that is a link; nothing is written at its target", async () => {
    const base = tempDir()
    const root = join(base, "ws")
    const target = join(base, "elsewhere")
    fs.mkdirSync(root)
    fs.mkdirSync(target)
    fs.symlinkSync(target, join(root, ".rewind"))
    for (const args of [["status"], ["init"]]) {
      const r = await cli([...args, "--workspace", root])
      expect(r.code, args[0]).toBe(2)
      expect(r.stderr, args[0]).toMatch(/symbolic link/)
    }
    expect(fs.readdirSync(target)).toEqual([])
  })

  it("status and init refuse a rewind.db that is a link, also in a --dir; the linked file is unchanged", async () => {
    const base = tempDir()
    const root = join(base, "ws")
    fs.mkdirSync(root)
    const outside = join(base, "outside.txt")
    fs.writeFileSync(outside, "not a store")
    for (const dir of [join(root, ".rewind"), join(base, "named")]) {
      fs.mkdirSync(dir)
      fs.symlinkSync(outside, join(dir, "rewind.db"))
      const named = dir.endsWith("named") ? ["--dir", dir] : []
      for (const args of [["status"], ["init"]]) {
        const r = await cli([...args, "--workspace", root, ...named])
        expect(r.code, args[0]).toBe(2)
        expect(r.stderr, args[0]).toMatch(/symbolic link/)
      }
      expect(fs.readdirSync(dir)).toEqual(["rewind.db"])
    }
    expect(fs.readFileSync(outside, "utf8")).toBe("not a store")
  })
})

describe("a store this process cannot write (item 10)", () => {
  it("status says it is read-only, doctor reports it (exit 1), a capture says why it failed", async () => {
    const root = tempDir()
    expect((await cli(["init", "--workspace", root])).code).toBe(0)
    fs.writeFileSync(join(root, "a.txt"), "a\n")
    const db = join(root, ".rewind", "rewind.db")
    // As root a file mode does not stop a write: bind-mount the file over itself read-only.
    let unmount = () => {}
    if (process.getuid?.() === 0) {
      try {
        execFileSync("mount", ["--bind", "-o", "ro", db, db], { stdio: "pipe" })
        unmount = () => execFileSync("umount", [db], { stdio: "ignore" })
      } catch (error) {
        console.info(`[skip] cannot bind-mount read-only here: ${String(error).slice(0, 200)}`)
        return
      }
    } else {
      fs.chmodSync(db, 0o444)
    }
    try {
      const status = await cli(["status", "--workspace", root])
      expect(status.stderr).toMatch(/store is read-only.*not writable/)
      const json = await cli(["status", "--workspace", root, "--json"])
      expect(json.stdout).toMatch(/"type":"warning","reason":"store_read_only"/)
      const doctor = await cli(["doctor", "--workspace", root, "--json"])
      expect(doctor.code).toBe(1)
      expect(doctor.stdout).toMatch(/store_read_only/)
      const capture = await cli(["capture", "--workspace", root])
      expect(capture.code).not.toBe(0)
      expect(`${capture.stdout}${capture.stderr}`).toMatch(/read-only|not writable/)
    } finally {
      unmount()
    }
  })
})

describe("rewind recover with one damaged journal row (item 9)", () => {
  it("lists the other operation and names the damaged one (exit 0)", async () => {
    const root = tempDir()
    const rewind = await openRewind({ workspaceRoot: root, durability: "atomic" })
    const session = await rewind.createSession({ title: "journal", cwd: root })
    if (!session.ok) throw new Error(session.refusal.message)
    for (const [id, at] of [
      ["op_good", 1],
      ["op_bad", 2],
    ] as const) {
      await rewind.run(
        Effect.flatMap(OperationJournal, (journal) =>
          journal.begin({
            operationId: id as OperationId,
            sessionId: session.value.id,
            kind: "direct_restore",
            files: [
              { path: "a.txt" as WorkspacePath, rescue: { _tag: "absent" }, planned: { _tag: "absent" } },
            ],
            startedAt: at,
          }),
        ),
      )
    }
    await rewind.close()
    const db = new Database(join(root, ".rewind", "rewind.db"))
    db.prepare(
      "update operation_intents set intent = '{\"operationId\":' where seq = (select seq from operations where operation_id = 'op_bad')",
    ).run()
    db.close()
    const r = await cli(["recover", "--workspace", root, "--json"])
    expect(r.code).toBe(0)
    const lines = jsonLines(r.stdout)
    expect(lines.map((l) => [l.operationId, l.resolvable, typeof l.damaged])).toEqual([
      ["op_good", true, "undefined"],
      ["op_bad", false, "string"],
    ])
    expect(String(lines[1]!.damaged)).toMatch(/op_bad does not decode/)
    const human = await cli(["recover", "--workspace", root])
    expect(human.stdout).toMatch(/op_bad\s+damaged journal row/)
    expect(human.stdout).toMatch(/op_good/)
  })
})

describe("a full disk (item 10)", () => {
  it("status says the disk is full, not just 'disk I/O error'", async () => {
    const root = join(tempDir(), "small")
    fs.mkdirSync(root)
    try {
      // Room for a new store (16 KiB pages: ~0.45 MB, and its WAL while `init` runs), then filled.
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", root], { stdio: "pipe" })
    } catch (error) {
      console.info(`[skip] cannot mount a small tmpfs here (needs root): ${String(error).slice(0, 200)}`)
      return
    }
    try {
      expect((await cli(["init", "--workspace", root])).code).toBe(0)
      const filler = fs.openSync(join(root, "filler"), "w")
      try {
        for (;;) fs.writeSync(filler, Buffer.alloc(64 * 1024))
      } catch {
        // ENOSPC: full now.
      } finally {
        fs.closeSync(filler)
      }
      const status = await cli(["status", "--workspace", root])
      expect(status.code).toBe(2)
      expect(status.stderr).toMatch(/disk holding .* is full.*free some space/)
    } finally {
      execFileSync("umount", [root], { stdio: "ignore" })
    }
  })
})
