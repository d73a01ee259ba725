/**
 * A capture's seal on the built bin (core `snapshot/scanSeal.ts`): a repeat `rewind capture` of a
 * tree where nothing changed takes the point from the last one's seal without scanning, on the
 * capture fast path and on the full CLI alike, and says so (`"by":"seal"`); a change makes the
 * next capture scan (`"by":"scan"`) and tells why that point has no seal while the change is
 * fresh (`unsealed`). The default racy window (2 s) is waited out once.
 */
import { writeFileSync } from "node:fs"
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
  it("takes an unchanged tree from the last point's seal, and scans once something changed", async () => {
    const root = tempDir()
    writeFileSync(join(root, "a.txt"), "a\n")
    writeFileSync(join(root, "b.txt"), "b\n")
    const dir = join(tempDir(), "store")
    expect((await cli(["init", "--workspace", root, "--dir", dir], undefined, OFF_SERVER)).code).toBe(0)
    await settle()
    const first = await capture(root, dir)
    expect(first.by).toBe("scan")
    expect(first.unsealed).toBeUndefined()
    expect(typeof first.scanSeal).toBe("string")

    const fast = await capture(root, dir)
    expect([fast.by, fast.reusedManifest, fast.files]).toEqual(["seal", true, 2])
    expect(fast.scanSeal).toBe(first.scanSeal)
    const full = await capture(root, dir, { REWIND_CAPTURE_FAST: "off" })
    expect([full.by, full.reusedManifest, full.files]).toEqual(["seal", true, 2])

    writeFileSync(join(root, "a.txt"), "A\n")
    const changed = await capture(root, dir)
    expect([changed.by, changed.reusedManifest]).toEqual(["scan", false])
    expect(changed.unsealed).toMatch(/changed within 2000 ms/)
    expect(changed.scanSeal).toBeUndefined()
    await settle()
    const resealed = await capture(root, dir)
    expect([resealed.by, resealed.reusedManifest]).toEqual(["scan", true])
    expect(typeof resealed.scanSeal).toBe("string")
    expect((await capture(root, dir)).by).toBe("seal")
  }, 30_000)
})
