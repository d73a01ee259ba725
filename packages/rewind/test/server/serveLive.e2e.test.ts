/**
 * End to end: the BUILT `rewind serve` runs the live engine. A repeat capture after edits, a new
 * directory, a rename and a delete is taken from the watcher's change set (status says so) and
 * holds what a full scan of the same tree holds; `--no-watch` turns
 * the watcher off and status says why. Build first: `npm run build` in packages/rewind.
 */
import { existsSync, readlinkSync } from "node:fs"
import { mkdir, rename, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { cli, git, tempDir } from "../cliHarness.js"
import { startServer } from "./serveClient.js"

interface Captured {
  readonly point: { readonly manifestHash: string; readonly files: number; readonly tombstones: number }
}
interface Status {
  readonly watcher: {
    readonly active: boolean
    readonly reason?: string
    readonly lastCapture?: { readonly mode: string; readonly reason?: string }
  }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 150))

describe("rewind serve: the live engine", () => {
  it.effect("captures from the change set what a full scan finds", () =>
    Effect.promise(async () => {
      const root = tempDir()
      expect((await cli(["init", "--workspace", root])).code).toBe(0)
      await mkdir(join(root, "src/lib"), { recursive: true })
      for (let i = 0; i < 20; i++) await writeFile(join(root, `src/lib/f${i}.ts`), `export const v = ${i}\n`)
      await writeFile(join(root, ".gitignore"), "*.log\n")
      const s = startServer(["--workspace", root])
      try {
        const live = await s.ok<{ id: string }>("createSession", { input: { title: "live", cwd: root } })
        const full = await s.ok<{ id: string }>("createSession", { input: { title: "full", cwd: root } })
        const capture = async (sid: string) => {
          const { turnId } = await s.ok<{ turnId: string }>("appendUserMessage", [sid, { text: "go" }])
          return s.ok<Captured>("capturePoint", [sid, turnId])
        }
        await capture(live.id)
        expect((await s.ok<Status>("snapshotStatus", [])).watcher.lastCapture?.mode).toBe("full")
        await capture(live.id)
        expect((await s.ok<Status>("snapshotStatus", [])).watcher).toMatchObject({
          active: true,
          lastCapture: { mode: "watched" },
        })

        await writeFile(join(root, "src/lib/f1.ts"), "export const v = 'changed'\n")
        await mkdir(join(root, "src/new/deep"), { recursive: true })
        await writeFile(join(root, "src/new/deep/n.ts"), "new\n")
        await rename(join(root, "src/lib/f2.ts"), join(root, "src/new/f2.ts"))
        await rm(join(root, "src/lib/f3.ts"))
        await writeFile(join(root, "debug.log"), "ignored\n")
        await settle()
        const watched = await capture(live.id)
        const status = await s.ok<Status>("snapshotStatus", [])
        expect(status.watcher.lastCapture).toEqual({ mode: "watched" })
        expect(watched.point.files).toBe(21)
        // f2 moved away and f3 removed: both recorded absent.
        expect(watched.point.tombstones).toBe(2)

        // Another session's first capture is a full scan of the same tree: the same files.
        const scannedFirst = await s.ok<Captured>("capturePoint", [
          full.id,
          (await s.ok<{ turnId: string }>("appendUserMessage", [full.id, { text: "go" }])).turnId,
        ])
        expect(scannedFirst.point.files).toBe(21)
        expect((await s.ok<Status>("snapshotStatus", [])).watcher.lastCapture?.mode).toBe("full")
      } finally {
        await s.close()
      }
    }),
  )

  it.effect("git clean -fdx under a running live engine: the store and its watcher carry on", () =>
    Effect.promise(async () => {
      const root = tempDir()
      git(root, "init", "-q")
      await writeFile(join(root, ".gitignore"), "build/\n")
      await mkdir(join(root, "src"))
      for (let i = 0; i < 5; i++) await writeFile(join(root, `src/f${i}.ts`), `export const v = ${i}\n`)
      git(root, "add", "-A")
      git(root, "commit", "-qm", "one")
      await mkdir(join(root, "build"))
      await writeFile(join(root, "build/out.js"), "built\n")
      await writeFile(join(root, "notes.md"), "untracked\n")
      expect((await cli(["init", "--workspace", root])).code).toBe(0)
      const s = startServer(["--workspace", root])
      try {
        const sid = (await s.ok<{ id: string }>("createSession", { input: { title: "live", cwd: root } })).id
        const capture = async () => {
          const { turnId } = await s.ok<{ turnId: string }>("appendUserMessage", [sid, { text: "go" }])
          return s.ok<Captured>("capturePoint", [sid, turnId])
        }
        await capture()
        await capture()
        expect((await s.ok<Status>("snapshotStatus", [])).watcher.lastCapture).toEqual({ mode: "watched" })

        git(root, "clean", "-fdxq")
        await settle()
        const cleaned = await capture()
        // notes.md went (a tombstone); build/ was never captured; the watcher saw it all.
        expect(cleaned.point).toMatchObject({ files: 6, tombstones: 1 })
        expect((await s.ok<Status>("snapshotStatus", [])).watcher).toMatchObject({
          active: true,
          lastCapture: { mode: "watched" },
        })
        // The call mended what the clean took.
        expect(readlinkSync(join(root, ".rewind", "rewind.db"))).toBe("rewind-data/rewind.db")
        expect(existsSync(join(root, ".rewind", ".gitignore"))).toBe(true)
      } finally {
        await s.close()
      }
    }),
  )

  it.effect("--no-watch turns the watcher off, and status says why", () =>
    Effect.promise(async () => {
      const root = tempDir()
      expect((await cli(["init", "--workspace", root])).code).toBe(0)
      const s = startServer(["--workspace", root, "--no-watch"])
      try {
        const status = await s.ok<Status>("snapshotStatus", [])
        expect(status.watcher.active).toBe(false)
        expect(status.watcher.reason).toMatch(/no live engine/)
      } finally {
        await s.close()
      }
    }),
  )
})
