/**
 * The capture progress bar and the colour rule: frames, the initial delay and redraw interval,
 * erasing at the end, and a real capture's progress callback driving the bar.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import type { TurnId } from "@rewind/contracts"
import type { CaptureProgress } from "@rewind/core"
import { colourEnabled } from "../src/cli/output.js"
import { makeProgressBar, renderProgress } from "../src/cli/progressBar.js"
import { openRewind } from "../src/index.js"
import { okValue } from "./okValue.js"

const temps: Array<string> = []
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const hashing = (hashed: number, toHash: number): CaptureProgress => ({
  phase: "hash",
  hashed,
  toHash,
  directories: 3,
  entries: toHash,
})

/** A stream that records writes, and a clock the test moves by hand. */
const harness = () => {
  const writes: Array<string> = []
  let now = 0
  const bar = makeProgressBar({
    stream: { write: (text: string) => writes.push(text), columns: 120 },
    now: () => now,
    delayMs: 300,
    intervalMs: 100,
  })
  const advance = (ms: number) => {
    now += ms
  }
  return { writes, bar, advance }
}

describe("capture progress bar", () => {
  it("renders the scan as a count and hashing as a bar with a percentage", () => {
    expect(renderProgress({ phase: "scan", hashed: 0, toHash: 0, directories: 4, entries: 120 })).toBe(
      "capturing: scanning… 120 entries in 4 directories",
    )
    expect(renderProgress(hashing(50, 100))).toBe(
      `capturing [${"#".repeat(15)}${"-".repeat(15)}]  50%  50/100 files hashed`,
    )
    expect(renderProgress(hashing(100, 100))).toContain(`[${"#".repeat(30)}] 100%`)
  })

  it("stays hidden on a quick capture and erases nothing it did not draw", () => {
    const { writes, bar, advance } = harness()
    bar.update(hashing(1, 10))
    advance(200)
    bar.update(hashing(10, 10))
    bar.done()
    expect(writes).toEqual([])
  })

  it("draws after the delay, at most once per interval, and erases itself when done", () => {
    const { writes, bar, advance } = harness()
    advance(300)
    bar.update(hashing(256, 1024))
    advance(50)
    bar.update(hashing(512, 1024)) // within the interval: not drawn
    advance(60)
    bar.update(hashing(768, 1024))
    bar.update({ ...hashing(0, 0), phase: "done" })
    bar.done()
    expect(writes).toEqual([
      `\r\x1b[2K${renderProgress(hashing(256, 1024))}`,
      `\r\x1b[2K${renderProgress(hashing(768, 1024))}`,
      "\r\x1b[2K",
    ])
  })

  it("is driven by a real capture's progress callback", async () => {
    const root = mkdtempSync(join(tmpdir(), "rewind-progress-"))
    temps.push(root)
    mkdirSync(join(root, "src"))
    for (let i = 0; i < 300; i++) writeFileSync(join(root, "src", `f${i}.txt`), `file ${i}\n`)
    const rewind = await openRewind({ workspaceRoot: root, durability: "atomic" })
    try {
      const session = await rewind.createSession({ title: "progress", cwd: root })
      if (!session.ok) throw new Error(session.refusal.message)
      const seen: Array<CaptureProgress> = []
      const writes: Array<string> = []
      const bar = makeProgressBar({
        stream: { write: (text: string) => writes.push(text) },
        now: () => seen.length * 1000, // every callback is "a second later": each one draws
        delayMs: 0,
        intervalMs: 0,
      })
      const outcome = okValue(
        await rewind.capturePoint(session.value.id, "t1" as TurnId, {
          onProgress: (p) => {
            seen.push(p)
            bar.update(p)
          },
        }),
      )
      bar.done()
      expect(outcome._tag).toBe("Captured")
      expect(seen.some((p) => p.phase === "scan" && p.entries === 300)).toBe(true)
      const hashed = seen.filter((p) => p.phase === "hash")
      expect(hashed.at(-1)).toMatchObject({ hashed: 300, toHash: 300 })
      expect(seen.at(-1)?.phase).toBe("done")
      expect(writes.some((w) => w.includes("300/300 files hashed"))).toBe(true)
      expect(writes.at(-1)).toBe("\r\x1b[2K")
    } finally {
      await rewind.close()
    }
  })
})

describe("colour", () => {
  it("only on a terminal, and never with NO_COLOR set (an empty NO_COLOR does not count)", () => {
    expect(colourEnabled({ isTTY: true }, {})).toBe(true)
    expect(colourEnabled({ isTTY: false }, {})).toBe(false)
    expect(colourEnabled({}, {})).toBe(false)
    expect(colourEnabled({ isTTY: true }, { NO_COLOR: "1" })).toBe(false)
    expect(colourEnabled({ isTTY: true }, { NO_COLOR: "" })).toBe(true)
  })
})
