// The shipped `rewind` bin reads a first capture's files through the native module's pool-thread
// reads (`readFilesBeneath` of dirscan.node, with the contents' hashes), and what it stores is
// what the main-thread reads store (`REWIND_NATIVE_READS=off`): the same blobs under the same
// content addresses, the point's manifest and stat cache included. Which path ran is proven
// from outside the bin: a preloaded script wraps the module's `readFilesBeneath` as Node loads it
// and records every file handed to it. With the reads disabled, doctor and status say so.
import { execFile } from "node:child_process"
import { mkdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { BIN, jsonLines, tempDir } from "./cliHarness.js"

const run = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { encoding: "utf8", env: { ...process.env, NO_COLOR: "1", REWIND_CAPTURE_SERVER: "off", ...env } },
      (error, stdout, stderr) =>
        resolve({
          code: error === null ? 0 : typeof error.code === "number" ? error.code : null,
          stdout,
          stderr,
        }),
    )
  })

/** A preload that records, one line each, the files handed to the native `readFilesBeneath`. */
const tracer = (dir: string, log: string) => {
  const path = join(dir, "trace.cjs")
  writeFileSync(
    path,
    `const fs = require("node:fs")
const dlopen = process.dlopen
process.dlopen = function (module, filename, ...rest) {
  const answer = dlopen.call(this, module, filename, ...rest)
  const read = module.exports && module.exports.readFilesBeneath
  if (String(filename).endsWith("dirscan.node") && typeof read === "function") {
    module.exports.readFilesBeneath = (root, relatives, ...rest) => {
      fs.appendFileSync(${JSON.stringify(log)}, relatives.map((r) => r + "\\n").join(""))
      return read(root, relatives, ...rest)
    }
  }
  return answer
}
`,
  )
  return path
}

const contentOf = (size: number, seed: number) => {
  const out = Buffer.alloc(size)
  for (let i = 0; i < size; i++) out[i] = (seed * 13 + i * 7 + (i >> 9)) & 0xff
  return out
}

const blobs = (store: string) => {
  const db = new Database(join(store, "rewind.db"), { readonly: true })
  try {
    return db
      .prepare<[], { hash: string; size: number }>("select hex(hash) as hash, size from blobs order by hash")
      .all()
      .map((r) => `${r.hash} ${r.size}`)
  } finally {
    db.close()
  }
}

describe("the built rewind bin's capture reads", () => {
  it.skipIf(process.platform !== "linux")(
    "reads through the native pool thread, and stores exactly what the main-thread reads store",
    async () => {
      const root = tempDir()
      const files: Array<string> = []
      for (let d = 0; d < 6; d++) {
        mkdirSync(join(root, `dir${d}`, "sub"), { recursive: true })
        for (let f = 0; f < 40; f++) {
          const path = join(`dir${d}`, f % 3 === 0 ? "sub" : "", `f${f}.txt`)
          const size = [0, 1, 63, 64, 500, 5000, 70_000][(d + f) % 7]!
          writeFileSync(join(root, path), contentOf(size, d * 40 + f))
          files.push(path)
        }
      }
      writeFileSync(join(root, "large.bin"), contentOf(3_000_000, 9))
      writeFileSync(join(root, "copy.txt"), contentOf(5000, 5))
      writeFileSync(join(root, "copy2.txt"), contentOf(5000, 5))
      symlinkSync("dir0", join(root, "link"))
      symlinkSync("../outside", join(root, "out"))
      // Old mtimes: no file is in the racy window, so both stat caches hold every file.
      const old = new Date(Date.now() - 3_600_000)
      for (const path of [...files, "large.bin", "copy.txt", "copy2.txt"])
        utimesSync(join(root, path), old, old)
      // Older than the settle window (stableRead's SETTLE_NS, 100 ms): read, not declined.
      await sleep(150)

      const traces = tempDir()
      const stores = { thread: join(tempDir(), "store"), main: join(tempDir(), "store") }
      const logs = { thread: join(traces, "thread.log"), main: join(traces, "main.log") }
      const points: Record<string, Record<string, unknown>> = {}
      for (const which of ["thread", "main"] as const) {
        const env = {
          NODE_OPTIONS: `--require ${tracer(traces, logs[which])}`,
          ...(which === "main" ? { REWIND_NATIVE_READS: "off" } : {}),
        }
        expect((await run(["init", "--workspace", root, "--dir", stores[which]], env)).code).toBe(0)
        const captured = await run(["capture", "--json", "--workspace", root, "--dir", stores[which]], env)
        expect(captured.code, captured.stderr).toBe(0)
        points[which] = jsonLines(captured.stdout).find((l) => l.type === "point")!
      }
      const traced = (log: string) => {
        try {
          return readFileSync(log, "utf8").split("\n").filter(Boolean)
        } catch {
          return []
        }
      }
      // The native reads were handed every file of the tree; with them off, none.
      expect(new Set(traced(logs.thread))).toEqual(new Set([...files, "large.bin", "copy.txt", "copy2.txt"]))
      expect(traced(logs.main)).toEqual([])
      const comparable = (p: Record<string, unknown>) => ({
        files: p.files,
        links: p.links,
        bytes: p.bytes,
        tombstones: p.tombstones,
        skipped: p.skipped,
      })
      expect(comparable(points.thread!)).toEqual(comparable(points.main!))
      expect(points.thread!.skipped).toEqual([])
      // Every blob, the manifest and the stat cache among them, by content address (the stored
      // form may differ: whether the compression thread was up yet decides a batch's quality). A
      // point's seal is not among them: whether it has one depends on how long ago the files
      // changed (the racy window), not on how they were read.
      const contents = (which: "thread" | "main") =>
        blobs(stores[which]).filter((b) => !b.startsWith(`${String(points[which]!.scanSeal).toUpperCase()} `))
      expect(contents("thread")).toEqual(contents("main"))

      const doctor = await run(["doctor", "--json", "--workspace", root, "--dir", stores.main], {
        REWIND_NATIVE_READS: "off",
      })
      const [report] = jsonLines(doctor.stdout)
      expect(report).toMatchObject({ native: { loaded: true, reads: "main-thread" } })
      expect(String((report!.native as { warning: string }).warning)).toContain(
        "disabled by REWIND_NATIVE_READS=off",
      )
      const status = await run(["status", "--json", "--workspace", root, "--dir", stores.thread])
      expect(jsonLines(status.stdout).find((r) => r.type === "native")).toMatchObject({
        reads: "native-thread",
        warning: null,
      })
    },
    60_000,
  )
})
