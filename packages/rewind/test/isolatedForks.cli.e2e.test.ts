// The acceptance scenario of isolated forks on the BUILT `rewind` bin: fork twice into two trees,
// edit both in parallel (two processes, each editing its tree and capturing it with the bin), merge
// one back cleanly, see the other's conflict reported, resolve it in that tree, merge it, then take
// that merge away again with `rewind redo`, which must give back the tree from before that merge
// exactly: bytes, modes and links (the second fork also changes a mode, adds a link and retargets
// one).
import { execFile } from "node:child_process"
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { TurnId } from "@rewind/contracts"
import { openRewind } from "../src/index.js"
import { BIN, cli, jsonLines, tempDir } from "./cliHarness.js"
import { snapshot } from "./isolatedForkKit.js"
import { okValue } from "./okValue.js"

const BASE = "alpha\nbeta\ngamma\ndelta\nepsilon\n"

/** One change a process makes to its tree: write a file, set a mode, or (re)place a symlink. */
type Edit =
  | readonly ["write", string, string]
  | readonly ["chmod", string, number]
  | readonly ["link", string, string]

/** A separate process that edits a tree and then captures it as a turn of its session, with the bin. */
const editAndCapture = (tree: string, edits: ReadonlyArray<Edit>, root: string, session: string) =>
  new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const script = `
      const fs = require("node:fs"), path = require("node:path"), cp = require("node:child_process");
      for (const [op, p, v] of ${JSON.stringify(edits)}) {
        const at = path.join(${JSON.stringify(tree)}, p);
        if (op === "write") fs.writeFileSync(at, v);
        else if (op === "chmod") fs.chmodSync(at, v);
        else { fs.rmSync(at, { force: true }); fs.symlinkSync(v, at); }
      }
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
    mkdirSync(join(root, "bin"))
    writeFileSync(join(root, "bin", "run.sh"), "#!/bin/sh\necho hi\n")
    chmodSync(join(root, "bin", "run.sh"), 0o755)
    symlinkSync("a.txt", join(root, "link"))
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
        isolated: { root: string; files: number; links: number }
      }
      expect(f.isolated.root).toBe(into)
      expect(f.isolated.files).toBe(3)
      expect(f.isolated.links).toBe(1)
      forks.push(f.childSessionId)
    }
    expect(readFileSync(join(one, "a.txt"), "utf8")).toBe(BASE)
    const [childOne, childTwo] = forks as [string, string]

    // Two processes at once: one changes line 1 and adds a file, the other changes line 1 too.
    const edits = await Promise.all([
      editAndCapture(
        one,
        [
          ["write", "a.txt", BASE.replace("alpha", "ALPHA")],
          ["write", "new.txt", "from one\n"],
        ],
        root,
        childOne,
      ),
      editAndCapture(
        two,
        [
          ["write", "a.txt", BASE.replace("alpha", "first").replace("epsilon", "EPSILON")],
          ["chmod", "bin/run.sh", 0o700],
          ["link", "link", "b.txt"],
          ["link", "two-link", "bin/run.sh"],
        ],
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
    const afterFirstMerge = snapshot(root)

    // The other now conflicts on line 1 (its line-5 change alone would merge).
    const p2 = await cli(["merge", childTwo, "--json", "--workspace", root])
    expect(p2.code, p2.stderr).toBe(0)
    const m2 = record(p2.stdout, "merge_preview") as {
      canApply: boolean
      conflicts: Array<{ path: string; reason: string; hunks: Array<{ source: string; target: string }> }>
    }
    // Its mode and link changes could be applied (a conflicting file is left as the target has it),
    // but the conflict is resolved first.
    expect(m2.canApply).toBe(true)
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
    // Its mode and link changes came with it.
    expect(lstatSync(join(root, "bin", "run.sh")).mode & 0o777).toBe(0o700)
    expect(readlinkSync(join(root, "link"))).toBe("b.txt")
    expect(readlinkSync(join(root, "two-link"))).toBe("bin/run.sh")

    // Redo takes the last merge away, bytes, modes and links; the first one stays.
    const redo = await cli(["redo", "--session", session.id, "--json", "--workspace", root])
    expect(redo.code, redo.stderr).toBe(0)
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe(BASE.replace("alpha", "ALPHA"))
    expect(readFileSync(join(root, "new.txt"), "utf8")).toBe("from one\n")
    expect(snapshot(root)).toEqual(afterFirstMerge)
    expect(lstatSync(join(root, "bin", "run.sh")).mode & 0o777).toBe(0o755)
    expect(readlinkSync(join(root, "link"))).toBe("a.txt")
    expect(existsSync(join(root, "two-link"))).toBe(false)
    // The children's trees never moved.
    expect(readFileSync(join(one, "a.txt"), "utf8")).toBe(BASE.replace("alpha", "ALPHA"))
  })
})
