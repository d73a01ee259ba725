// The acceptance scenario of isolated forks on the BUILT `rewind` bin: fork twice into two trees,
// edit both in parallel (two processes, each editing its tree and capturing it with the bin), merge
// one back cleanly, see the other's conflict reported, resolve it in that tree, merge it, then take
// that merge away again with `rewind redo`.
import { execFile } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { TurnId } from "@rewind/contracts"
import { openRewind } from "../src/index.js"
import { BIN, cli, jsonLines, tempDir } from "./cliHarness.js"
import { okValue } from "./okValue.js"

const BASE = "alpha\nbeta\ngamma\ndelta\nepsilon\n"

/** A separate process that edits a tree and then captures it as a turn of its session, with the bin. */
const editAndCapture = (tree: string, edits: Record<string, string>, root: string, session: string) =>
  new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const script = `
      const fs = require("node:fs"), path = require("node:path"), cp = require("node:child_process");
      for (const [p, c] of Object.entries(${JSON.stringify(edits)})) fs.writeFileSync(path.join(${JSON.stringify(tree)}, p), c);
      cp.execFileSync(process.execPath, [${JSON.stringify(BIN)}, "capture", "--session", ${JSON.stringify(session)}, "--workspace", ${JSON.stringify(root)}, "--json"]);
    `
    execFile(process.execPath, ["-e", script], { encoding: "utf8" }, (error, _stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stderr }),
    )
  })

const record = <T>(stdout: string, type: string): T => {
  const found = jsonLines(stdout).find((l) => l.type === type)
  expect(found, `a ${type} record in ${stdout}`).toBeDefined()
  return found as never
}

describe("isolated forks on the built bin", () => {
  it("fork twice, edit in parallel, merge one cleanly, see the other's conflict, resolve, redo", async () => {
    const root = tempDir()
    writeFileSync(join(root, "a.txt"), BASE)
    writeFileSync(join(root, "b.txt"), "b\n")
    const rewind = await openRewind({ workspaceRoot: root, durability: "atomic" })
    const session = okValue(await rewind.createSession({ title: "parent", cwd: root }))
    const { turnId } = okValue(await rewind.appendUserMessage(session.id, { text: "start" }))
    okValue(await rewind.capturePoint(session.id, turnId as TurnId))
    const reply = okValue(
      await rewind.appendReply(session.id, { turnId, parts: [{ kind: "text", text: "ok" }] }),
    )
    okValue(await rewind.completeTurnWithBoundary(session.id, turnId))
    await rewind.close()

    const trees = tempDir()
    const one = join(trees, "one")
    const two = join(trees, "two")
    mkdirSync(two)
    const forks = []
    for (const into of [one, two]) {
      const r = await cli([
        "fork",
        reply.messageId,
        "--into",
        into,
        "--session",
        session.id,
        "--json",
        "--workspace",
        root,
      ])
      expect(r.code, r.stderr).toBe(0)
      const f = record(r.stdout, "fork") as {
        childSessionId: string
        isolated: { root: string; files: number }
      }
      expect(f.isolated.root).toBe(into)
      expect(f.isolated.files).toBe(2)
      forks.push(f.childSessionId)
    }
    expect(readFileSync(join(one, "a.txt"), "utf8")).toBe(BASE)
    const [childOne, childTwo] = forks as [string, string]

    // Two processes at once: one changes line 1 and adds a file, the other changes line 1 too.
    const edits = await Promise.all([
      editAndCapture(
        one,
        { "a.txt": BASE.replace("alpha", "ALPHA"), "new.txt": "from one\n" },
        root,
        childOne,
      ),
      editAndCapture(
        two,
        { "a.txt": BASE.replace("alpha", "first").replace("epsilon", "EPSILON") },
        root,
        childTwo,
      ),
    ])
    for (const e of edits) expect(e.code, e.stderr).toBe(0)
    // Nothing reached the parent's tree.
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe(BASE)
    expect(existsSync(join(root, "new.txt"))).toBe(false)

    const diff = await cli(["diff", "--sessions", session.id, childOne, "--json", "--workspace", root])
    expect(diff.code, diff.stderr).toBe(0)
    expect(
      jsonLines(diff.stdout)
        .filter((l) => l.type === "diff")
        .map((l) => [l.path, l.change]),
    ).toEqual([
      ["a.txt", "modified"],
      ["new.txt", "added"],
    ])

    // One merges cleanly.
    const p1 = await cli(["merge", childOne, "--json", "--workspace", root])
    expect(p1.code, p1.stderr).toBe(0)
    const m1 = record<{
      canApply: boolean
      token: string
      mergePointId: string
      conflicts: []
    }>(p1.stdout, "merge_preview")
    expect(m1.canApply).toBe(true)
    expect(m1.conflicts).toEqual([])
    const a1 = await cli([
      "merge",
      childOne,
      "--apply",
      m1.mergePointId,
      "--token",
      m1.token,
      "--json",
      "--workspace",
      root,
    ])
    expect(a1.code, a1.stderr).toBe(0)
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe(BASE.replace("alpha", "ALPHA"))
    expect(readFileSync(join(root, "new.txt"), "utf8")).toBe("from one\n")

    // The other now conflicts on line 1 (its line-5 change alone would merge).
    const p2 = await cli(["merge", childTwo, "--json", "--workspace", root])
    expect(p2.code, p2.stderr).toBe(0)
    const m2 = record(p2.stdout, "merge_preview") as {
      canApply: boolean
      conflicts: Array<{ path: string; reason: string; hunks: Array<{ source: string; target: string }> }>
    }
    expect(m2.canApply).toBe(false)
    expect(m2.conflicts.map((c) => [c.path, c.reason, c.hunks])).toEqual([
      ["a.txt", "text", [{ base: "alpha\n", source: "first\n", target: "ALPHA\n" }]],
    ])
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe(BASE.replace("alpha", "ALPHA"))

    // Resolved in the second tree (it takes the parent's line 1), the merge is clean.
    writeFileSync(join(two, "a.txt"), BASE.replace("alpha", "ALPHA").replace("epsilon", "EPSILON"))
    const p3 = await cli(["merge", childTwo, "--json", "--workspace", root])
    const m3 = record<{
      canApply: boolean
      token: string
      mergePointId: string
    }>(p3.stdout, "merge_preview")
    expect(m3.canApply).toBe(true)
    const a3 = await cli([
      "merge",
      childTwo,
      "--apply",
      m3.mergePointId,
      "--token",
      m3.token,
      "--json",
      "--workspace",
      root,
    ])
    expect(a3.code, a3.stderr).toBe(0)
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe(
      BASE.replace("alpha", "ALPHA").replace("epsilon", "EPSILON"),
    )

    // Redo takes the last merge away; the first one stays.
    const redo = await cli(["redo", "--session", session.id, "--json", "--workspace", root])
    expect(redo.code, redo.stderr).toBe(0)
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe(BASE.replace("alpha", "ALPHA"))
    expect(readFileSync(join(root, "new.txt"), "utf8")).toBe("from one\n")
    // The children's trees never moved.
    expect(readFileSync(join(one, "a.txt"), "utf8")).toBe(BASE.replace("alpha", "ALPHA"))
  })
})
