// Core is pure: this fails the build if a source file reaches for the filesystem, SQL, an adapter,
// the wall clock or an unseeded random source. (Biome's noRestrictedImports covers imports too.)
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"

const srcDir = join(import.meta.dirname, "..", "src")
const files = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : []
  })

const forbidden: Array<[RegExp, string]> = [
  [/from\s+["'](node:)?fs(\/promises)?["']/, "node:fs"],
  [/from\s+["'](node:)?child_process["']/, "child_process"],
  [/from\s+["'](kysely|better-sqlite3|pg)["']/, "SQL driver"],
  [/from\s+["']@rewind\/adapter-/, "adapter import"],
  [/\bDate\.now\s*\(/, "Date.now()"],
  [/\bnew Date\s*\(\s*\)/, "new Date()"],
  [/\bMath\.random\s*\(/, "Math.random()"],
  [/\bprocess\.(env|cwd|hrtime)\b/, "process globals"],
]

describe("core purity", () => {
  const sources = files(srcDir)
  it("has sources to check", () => {
    expect(sources.length).toBeGreaterThan(5)
  })
  it.each(sources.map((f) => [f.slice(srcDir.length + 1), f]))("%s imports nothing impure", (_name, file) => {
    const text = readFileSync(file, "utf8")
    const hits = forbidden.filter(([re]) => re.test(text)).map(([, what]) => what)
    expect(hits).toEqual([])
  })
})
