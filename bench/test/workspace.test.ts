import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { benchWorkspace } from "../src/workspace/benchWorkspace.js"
import { fileContent, generateWorkspace, openWorkspace, workspaceLayout } from "../src/workspace/generator.js"

const dirs: Array<string> = []
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "rewind-bench-ws-test-"))
  dirs.push(d)
  return d
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe("workspace generator", () => {
  it("is a function of the seed: same seed, same layout and bytes; another seed, other bytes", () => {
    const a = workspaceLayout({ fileCount: 300, seed: 7 })
    expect(workspaceLayout({ fileCount: 300, seed: 7 })).toEqual(a)
    expect(fileContent(7, a[12]!).equals(fileContent(7, a[12]!))).toBe(true)
    const b = workspaceLayout({ fileCount: 300, seed: 8 })
    expect(fileContent(8, b[12]!).equals(fileContent(7, a[12]!))).toBe(false)
  })

  it("mixes small and larger text files, about 10 KB on average, in nested directories", () => {
    const files = workspaceLayout({ fileCount: 5_000, seed: 1 })
    const mean = files.reduce((s, f) => s + f.size, 0) / files.length
    expect(mean).toBeGreaterThan(8_000)
    expect(mean).toBeLessThan(12_000)
    expect(files.some((f) => f.size > 20_000)).toBe(true)
    expect(files.filter((f) => f.size < 10_000).length).toBeGreaterThan(files.length / 2)
    expect(Math.max(...files.map((f) => f.path.split("/").length))).toBeGreaterThanOrEqual(4)
    expect(new Set(files.map((f) => f.path)).size).toBe(files.length)
    const text = fileContent(1, files[0]!).toString("utf8")
    expect(text.length).toBe(files[0]!.size)
    expect(text.split("\n").length).toBeGreaterThan(5)
  })

  it("writes exactly the layout, and can be reopened from its manifest", () => {
    const dir = tempDir()
    const ws = generateWorkspace(dir, { fileCount: 40, seed: 3 })
    expect(ws.totalBytes).toBe(ws.files.reduce((s, f) => s + f.size, 0))
    for (const f of ws.files) expect(readFileSync(join(ws.root, f.path)).equals(fileContent(3, f))).toBe(true)
    expect(openWorkspace(dir, { fileCount: 40, seed: 3 })?.totalBytes).toBe(ws.totalBytes)
    expect(openWorkspace(dir, { fileCount: 41, seed: 3 })).toBeUndefined()
  })

  it("edits, creates and deletes deterministically, and reverts to the generated state", () => {
    const ws = benchWorkspace(generateWorkspace(tempDir(), { fileCount: 60, seed: 4 }))
    const edited = ws.edit(5, 1)
    expect(edited).toHaveLength(5)
    expect(ws.differing(edited)).toEqual(edited)
    const created = ws.create(3, 2)
    const deleted = ws.delete(2, 3)
    expect(ws.differing(deleted)).toEqual(deleted)
    const other = benchWorkspace(generateWorkspace(tempDir(), { fileCount: 60, seed: 4 }))
    expect(other.edit(5, 1)).toEqual(edited)
    expect(readFileSync(join(other.root, edited[0]!))).toEqual(readFileSync(join(ws.root, edited[0]!)))
    ws.revert()
    expect(ws.differing(ws.files.map((f) => f.path))).toEqual([])
    for (const p of created) expect(() => readFileSync(join(ws.root, p))).toThrow()
  })

  it("rewrites a generated file whole, refuses other paths, and reverts the rewrite", () => {
    const ws = benchWorkspace(generateWorkspace(tempDir(), { fileCount: 20, seed: 5 }))
    const path = ws.files[3]!.path
    ws.rewrite(path, "written by the agent\n")
    expect(readFileSync(join(ws.root, path), "utf8")).toBe("written by the agent\n")
    expect(ws.differing([path])).toEqual([path])
    expect(() => ws.rewrite("not/generated.ts", "x")).toThrow(/not a generated file/)
    ws.revert()
    expect(ws.differing(ws.files.map((f) => f.path))).toEqual([])
  })
})
