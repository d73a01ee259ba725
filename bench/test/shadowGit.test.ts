import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, parse } from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { createShadowGit } from "../src/baselines/shadowGit.js"
import { benchWorkspace } from "../src/workspace/benchWorkspace.js"
import { generateWorkspace } from "../src/workspace/generator.js"

const root = mkdtempSync(join(tmpdir(), "rewind-bench-git-test-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

describe("shadow git baseline", () => {
  it("snapshots, restores a few files and the whole tree, and reports its size", () => {
    const ws = benchWorkspace(generateWorkspace(join(root, "ws"), { fileCount: 50, seed: 9 }))
    const git = createShadowGit(join(root, "shadow"), ws.root)
    const first = git.snapshot({ measureMemory: true })
    expect(first.tree).toMatch(/^[0-9a-f]{40}$/)
    expect(first.ms).toBeGreaterThan(0)
    expect(git.diskUsageBytes()).toBeGreaterThan(0)

    const edited = ws.edit(4, 1)
    expect(git.snapshot().tree).not.toBe(first.tree)
    git.restorePaths(first.tree, edited.slice(0, 2))
    expect(ws.differing(edited)).toEqual(edited.slice(2))
    git.restoreAll(first.tree)
    expect(ws.differing(ws.files.map((f) => f.path))).toEqual([])
    expect(git.snapshot().tree).toBe(first.tree)
  })

  it("refuses a work tree outside the temp dir, so it can never reach a real repository", () => {
    // The file system's root is outside the temp dir wherever the repository itself is checked out.
    expect(() => createShadowGit(join(root, "shadow2"), parse(tmpdir()).root)).toThrow(/refuses a work tree/)
  })
})
