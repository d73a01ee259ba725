/**
 * What a turn restore cannot undo is said, and does not stop the rest: through the built bin, with
 * turns recorded by the Claude Code hook. The agent points a link out of the tree (no restore makes
 * or takes away such a link) and creates a file whose name no point can record; the preview names
 * both, the restore puts back everything else and leaves both as they are, and the redo brings the
 * agent's edits back (before, the link refused the redo whole).
 */
import {
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { claudeShellTurn, jsonLines, ownProcessCli, tempDir } from "./cliHarness.js"

const run = ownProcessCli

describe("a turn restore keeps what it cannot undo, and says so (the built bin)", () => {
  it("an escaping link is kept, a file no point records is named, the rest is restored and redone", async () => {
    const root = join(tempDir(), "app")
    const outside = tempDir()
    mkdirSync(root, { recursive: true })
    writeFileSync(join(root, "app.txt"), "app v1\n")
    symlinkSync("app.txt", join(root, "current"))
    await claudeShellTurn(root, "kept", "change things", () => {
      writeFileSync(join(root, "app.txt"), "app v2\n")
      unlinkSync(join(root, "current"))
      symlinkSync(outside, join(root, "current"))
      writeFileSync(join(root, "odd\tname.txt"), "made by the agent\n")
    })

    const preview = await run(["restore", "--turn", "1", "--json"], root)
    expect(preview.code, preview.stderr).toBe(0)
    const plan = jsonLines(preview.stdout).find((r) => r.type === "turn_preview")!
    expect(plan.canApply).toBe(true)
    expect(plan.conflicts).toEqual([])
    expect(plan.changes).toEqual([{ path: "app.txt", action: "write" }])
    expect(plan.protected).toEqual([expect.objectContaining({ path: "current", kind: "escaping_link" })])
    expect(plan.laterLeftOut).toEqual([
      expect.objectContaining({ path: "odd\tname.txt", reason: "unsupported_name" }),
    ])
    const words = await run(["restore", "--turn", "1"], root)
    expect(words.stdout).toMatch(
      /kept current: escaping_link \(a link to .*no restore makes, removes or retargets/,
    )
    expect(words.stdout).toMatch(
      /left alone odd\\x09name\.txt: unsupported_name.*a later capture left it out/,
    )

    const applied = await run(["restore", "--turn", "1", "--token", String(plan.token)], root)
    expect(applied.code, applied.stderr).toBe(0)
    expect(readFileSync(join(root, "app.txt"), "utf8")).toBe("app v1\n")
    expect(readlinkSync(join(root, "current"))).toBe(outside)
    expect(lstatSync(join(root, "odd\tname.txt")).isFile()).toBe(true)

    const redone = await run(["redo", "--json"], root)
    expect(redone.code, redone.stderr).toBe(0)
    expect(jsonLines(redone.stdout).find((r) => r.type === "redo")).toMatchObject({
      files: [{ path: "app.txt", action: "restored" }],
      kept: [],
    })
    expect(readFileSync(join(root, "app.txt"), "utf8")).toBe("app v2\n")
    expect(readlinkSync(join(root, "current"))).toBe(outside)
  })
})
