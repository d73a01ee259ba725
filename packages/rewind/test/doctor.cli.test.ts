// `rewind doctor` and `rewind doctor --repair` through the BUILT binary: exit codes, the JSON record,
// and that a repair removes an orphan temp file and nothing else; a newer store does not open.
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { openRewind } from "../src/index.js"
import { BIN } from "./cliHarness.js"
import { agentTurn, sandbox, value, withBlobFiles } from "./storeFixture.js"

const cli = (args: ReadonlyArray<string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } },
      (error, stdout, stderr) =>
        resolve({
          code: error === null ? 0 : typeof error.code === "number" ? error.code : null,
          stdout,
          stderr,
        }),
    )
  })

const record = (stdout: string) => JSON.parse(stdout.split("\n").filter((l) => l.length > 0)[0]!)

describe("rewind doctor", () => {
  it("reports an orphan temp file (exit 1), removes it with --repair (exit 0) and keeps everything else", async () => {
    const box = withBlobFiles(sandbox())
    const rewind = await openRewind({ workspaceRoot: box.root, durability: "atomic" })
    const session = value(await rewind.createSession({ title: "cli", cwd: box.root }))
    await agentTurn(rewind, session.id, "a.txt", "content")
    await rewind.close()
    const orphan = join(box.root, ".rewind", "artifacts", "tmp", ".x.dead.tmp")
    fs.writeFileSync(orphan, "half")
    const old = Date.now() / 1000 - 7200
    fs.utimesSync(orphan, old, old)

    const found = await cli(["doctor", "--json", "--workspace", box.root])
    expect(found.code).toBe(1)
    expect(record(found.stdout)).toMatchObject({
      type: "doctor",
      ok: false,
      tempFiles: { orphans: 1, removed: 0 },
      problems: [{ kind: "orphan_temp_file", subject: orphan, repairable: true }],
    })
    expect(found.stderr).toMatch(/--repair/)
    expect(fs.existsSync(orphan)).toBe(true)

    const repaired = await cli(["doctor", "--repair", "--json", "--workspace", box.root])
    expect(repaired.code).toBe(0)
    expect(record(repaired.stdout)).toMatchObject({
      ok: true,
      problems: [],
      repaired: [`removed orphan temp file ${orphan}`],
    })
    expect(fs.existsSync(orphan)).toBe(false)
    expect(fs.readFileSync(join(box.root, "a.txt"), "utf8")).toBe("content")
  })

  it("a store from a newer schema version does not open (exit 2) and is not changed", async () => {
    const box = sandbox()
    const rewind = await openRewind({ workspaceRoot: box.root, durability: "atomic" })
    await rewind.close()
    const file = join(box.root, ".rewind", "rewind.db")
    const db = new Database(file)
    db.pragma("user_version = 999")
    db.close()
    const before = fs.readFileSync(file)
    const r = await cli(["doctor", "--json", "--workspace", box.root])
    expect(r.code).toBe(2)
    expect(r.stdout + r.stderr).toMatch(/newer Rewind/)
    expect(fs.readFileSync(file).equals(before)).toBe(true)
  })
})
