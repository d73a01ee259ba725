/**
 * A capture's seal on the built bin (core `snapshot/scanSeal.ts`, `sealedCapture.ts`): a repeat
 * `rewind capture` of a tree where nothing changed takes the point from the last one's seal
 * without scanning, on the capture fast path and on the full CLI alike, and says so
 * (`"by":"seal"`); after a change it lists only the directories that changed (`rescanned`) and
 * takes the point a capture into a fresh store takes; an ignore file that changed makes it scan
 * the whole tree and say why (`fullScan`). The default racy window (2 s) is waited out where said.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { cli, jsonLines, tempDir } from "./cliHarness.js"

const OFF_SERVER = { REWIND_CAPTURE_SERVER: "off" }

const capture = async (root: string, dir: string, env: Record<string, string> = {}) => {
  const run = await cli(["capture", "--json", "--workspace", root, "--dir", dir], undefined, {
    ...OFF_SERVER,
    ...env,
  })
  expect(run.code, run.stderr).toBe(0)
  const point = jsonLines(run.stdout).find((l) => l.type === "point")
  expect(point).toBeDefined()
  return point as Record<string, unknown>
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 2_200))

describe("the built bin's repeat capture", () => {
  it("takes an unchanged tree from the last point's seal, and lists only what changed since", async () => {
    const root = tempDir()
    writeFileSync(join(root, "a.txt"), "a\n")
    writeFileSync(join(root, "b.txt"), "b\n")
    writeFileSync(join(root, ".gitignore"), "")
    mkdirSync(join(root, "src/lib"), { recursive: true })
    writeFileSync(join(root, "src/lib/d.ts"), "d\n")
    mkdirSync(join(root, "gone/deeper"), { recursive: true })
    writeFileSync(join(root, "gone/deeper/e.txt"), "e\n")
    const dir = join(tempDir(), "store")
    expect((await cli(["init", "--workspace", root, "--dir", dir], undefined, OFF_SERVER)).code).toBe(0)
    await settle()
    const first = await capture(root, dir)
    expect(first.by).toBe("scan")
    expect(first.unsealed).toBeUndefined()
    expect(typeof first.scanSeal).toBe("string")

    const fast = await capture(root, dir)
    expect([fast.by, fast.reusedManifest, fast.files]).toEqual(["seal", true, 5])
    expect(fast.scanSeal).toBe(first.scanSeal)
    const full = await capture(root, dir, { REWIND_CAPTURE_FAST: "off" })
    expect([full.by, full.reusedManifest, full.files]).toEqual(["seal", true, 5])

    // An edit, a new directory and a deleted one: only the directories that changed are listed.
    writeFileSync(join(root, "a.txt"), "A\n")
    mkdirSync(join(root, "src/new"), { recursive: true })
    writeFileSync(join(root, "src/new/n.ts"), "n\n")
    rmSync(join(root, "gone"), { recursive: true })
    const changed = await capture(root, dir)
    expect([changed.by, changed.reusedManifest, changed.files, changed.tombstones]).toEqual([
      "seal",
      false,
      5,
      1,
    ])
    expect(changed.rescanned).toBeGreaterThanOrEqual(2)
    expect(changed.rescanned).toBeLessThan(5)
    // The point a capture into a fresh store takes (but for the tombstone of what went).
    const fresh = join(tempDir(), "store")
    expect((await cli(["init", "--workspace", root, "--dir", fresh], undefined, OFF_SERVER)).code).toBe(0)
    const reference = await capture(root, fresh)
    expect([reference.files, reference.bytes, reference.links]).toEqual([
      changed.files,
      changed.bytes,
      changed.links,
    ])
    const diff = await cli(["diff", "--json", "--workspace", root, "--dir", dir], undefined, OFF_SERVER)
    expect(diff.code, diff.stderr).toBe(0)
    expect(jsonLines(diff.stdout).filter((l) => l.type === "diff")).toEqual([])
    // Changed within the racy window: sealed all the same, its changed directories listed again.
    expect(typeof changed.scanSeal).toBe("string")
    await settle()
    const again = await capture(root, dir)
    expect([again.by, again.reusedManifest]).toEqual(["seal", true])
    expect(again.rescanned).toBeGreaterThanOrEqual(1)
    expect(await capture(root, dir)).toMatchObject({ by: "seal", reusedManifest: true })
    expect((await capture(root, dir)).rescanned).toBeUndefined()

    // An ignore file changed: its rules reach below its directory, so the whole tree is scanned.
    writeFileSync(join(root, ".gitignore"), "*.log\n")
    const ignored = await capture(root, dir)
    expect(ignored.by).toBe("scan")
    expect(ignored.fullScan).toMatch(/\.gitignore/)
  }, 120_000)
})
