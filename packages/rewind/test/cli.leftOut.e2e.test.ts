/**
 * A restore says what its point does not hold (the point's capture left it out: a nested
 * repository such as a git submodule, a file over the size limit...): the preview lists it as
 * `leftOut` and in words, and the restore leaves it as it is. Through the built bin, with a turn
 * recorded by the Claude Code hook.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { claudeShellTurn, jsonLines, ownProcessCli, tempDir } from "./cliHarness.js"

const run = ownProcessCli

describe("what a point left out (the built bin)", () => {
  it("restore --turn lists a nested repository the agent changed as not in the point, and leaves it as it is", async () => {
    const root = join(tempDir(), "app")
    mkdirSync(join(root, "vendor", "lib"), { recursive: true })
    writeFileSync(join(root, "app.txt"), "app v1\n")
    // A submodule's checkout: its `.git` is a file naming the superproject's module directory.
    writeFileSync(join(root, "vendor", "lib", ".git"), "gitdir: ../../.git/modules/vendor/lib\n")
    writeFileSync(join(root, "vendor", "lib", "lib.txt"), "lib v1\n")
    await claudeShellTurn(root, "left-out", "change both", () => {
      writeFileSync(join(root, "app.txt"), "app v2\n")
      writeFileSync(join(root, "vendor", "lib", "lib.txt"), "lib v2 by the agent\n")
    })

    const preview = await run(["restore", "--turn", "1", "--json"], root)
    expect(preview.code, preview.stderr).toBe(0)
    const plan = jsonLines(preview.stdout).find((r) => r.type === "turn_preview")!
    expect(plan.changes).toEqual([{ path: "app.txt", action: "write" }])
    expect(plan.leftOut).toEqual([
      { path: "vendor/lib", reason: "skipped_directory", detail: "a nested repository (it holds .git)" },
    ])
    const words = await run(["restore", "--turn", "1"], root)
    expect(words.stdout).toMatch(
      /not in the point vendor\/lib: skipped_directory \(a nested repository.*\): left as it is/,
    )

    const applied = await run(["restore", "--turn", "1", "--token", String(plan.token)], root)
    expect(applied.code, applied.stderr).toBe(0)
    expect(readFileSync(join(root, "app.txt"), "utf8")).toBe("app v1\n")
    // Left as it is, as the preview said: the point holds nothing of the nested repository.
    expect(readFileSync(join(root, "vendor", "lib", "lib.txt"), "utf8")).toBe("lib v2 by the agent\n")

    // The point preview (`rewind preview <point>`) says the same.
    const pointId = String(plan.pointId)
    const point = await run(["preview", pointId, "--session", "claude-code.left-out", "--json"], root)
    expect(jsonLines(point.stdout)[0]).toMatchObject({
      type: "point_preview",
      leftOut: [{ path: "vendor/lib", reason: "skipped_directory" }],
    })
  })
})
