// The one rule for which workspace a command acts on when it names none (src/workspaceRoot.ts).
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { commandWorkspace, discoverWorkspace, enclosingWorkspace } from "../src/workspaceRoot.js"
import { tempDir } from "./cliHarness.js"

describe("workspaceRoot", () => {
  it("finds the nearest directory at or above the working directory holding a store, else the working directory", () => {
    const root = tempDir()
    const deep = join(root, "a", "b", "c")
    mkdirSync(deep, { recursive: true })
    // No store anywhere above (a temp dir's ancestors hold none): the working directory.
    expect(discoverWorkspace(deep)).toBe(deep)
    mkdirSync(join(root, ".rewind"))
    expect(discoverWorkspace(deep)).toBe(root)
    expect(discoverWorkspace(root)).toBe(root)
    // The nearest wins: a nested workspace (made by `init` there) holds its own subtree.
    mkdirSync(join(root, "a", ".rewind"))
    expect(discoverWorkspace(deep)).toBe(join(root, "a"))
    expect(discoverWorkspace(`${deep}/./../c`)).toBe(join(root, "a"))
    // The workspace a directory lies in, strictly above it (what `init` there says it is inside).
    expect(enclosingWorkspace(join(root, "a"))).toBe(root)
    expect(enclosingWorkspace(deep)).toBe(join(root, "a"))
    expect(enclosingWorkspace(root)).toBeUndefined()
  })

  it("takes a named workspace as named; a named store, or a command that does not search (init), the working directory", () => {
    const root = tempDir()
    const sub = join(root, "sub")
    mkdirSync(join(root, ".rewind"), { recursive: true })
    mkdirSync(sub)
    writeFileSync(join(sub, "f"), "")
    expect(commandWorkspace(sub, {})).toBe(root)
    expect(commandWorkspace(sub, { workspace: "." })).toBe(sub)
    expect(commandWorkspace(sub, { workspace: ".." })).toBe(root)
    expect(commandWorkspace(sub, { dir: join(root, ".rewind") })).toBe(sub)
    expect(commandWorkspace(sub, {}, false)).toBe(sub)
  })
})
