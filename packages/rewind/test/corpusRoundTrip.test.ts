// The round trip on a real repository's shape (issue 20): a slice of babel/babel built from
// `bench/corpora` (its real ignore files included: `**/node_modules` with fixtures re-included by
// `!`), plus what real trees hold and generated ones do not — links of every kind, names that are
// not UTF-8, a nested repository, a worktree's `.git` file, a FIFO, an oversized file, odd modes,
// and a writer rewriting a file while the capture reads it. Capture → scramble → restore gives back
// the point in bytes, modes and link targets; every path left out is accounted for.
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { WorkspacePath } from "@rewind/contracts"
import { ArtifactStore, loadManifest, type ManifestEntry, makeProtectionCheck } from "@rewind/core"
import { materialiseShape, readShape } from "@rewind/testkit"
import { Effect, Option } from "effect"
import { openRewind } from "../src/index.js"
import { okValue } from "./okValue.js"
import { expectSentinelUntouched, sandbox, value } from "./storeFixture.js"

const SHAPE = join(import.meta.dirname, "../../../bench/corpora/babel.shape.tsv.gz")
const SLICE = (p: string) =>
  !p.includes("/") ||
  p.startsWith("packages/babel-core/") ||
  p.startsWith("packages/babel-preset-env/") ||
  p.startsWith("test/runtime-integration/") ||
  p === "packages" ||
  p === "test"
const BUSY_BYTES = 768 * 1024

const isUtf8 = (bytes: Buffer) => {
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes)
    return true
  } catch {
    return false
  }
}

const sha = (b: Buffer | Uint8Array) => createHash("sha256").update(b).digest("hex")

/** Every entry under `root` by lstat, names as raw bytes (latin1) so non-UTF-8 names are seen. */
const walk = (root: string) => {
  const out = new Map<string, fs.Stats>()
  const visit = (dir: Buffer, rel: string) => {
    for (const name of fs.readdirSync(dir, { encoding: "buffer" })) {
      const abs = Buffer.concat([dir, Buffer.from("/"), name])
      const r = rel === "" ? name.toString("latin1") : `${rel}/${name.toString("latin1")}`
      const s = fs.lstatSync(abs)
      out.set(r, s)
      if (s.isDirectory()) visit(abs, r)
    }
  }
  visit(Buffer.from(root), "")
  return out
}

/** A child that rewrites `file` with all-'A' then all-'B' bytes until killed. */
const startWriter = (file: string): ChildProcess =>
  spawn(
    process.execPath,
    [
      "-e",
      `const fs=require("fs");const a=Buffer.alloc(${BUSY_BYTES},65),b=Buffer.alloc(${BUSY_BYTES},66);` +
        `let i=0;const end=Date.now()+20000;while(Date.now()<end){const fd=fs.openSync(${JSON.stringify(file)},"r+");` +
        `fs.writeSync(fd,(i++%2)?a:b,0,${BUSY_BYTES},0);fs.closeSync(fd)}`,
    ],
    { stdio: "ignore" },
  )

describe("round trip on a real repository's shape with hostile entries", () => {
  it("capture → scramble → restore gives back the point; every left-out path is accounted for", async () => {
    const box = sandbox()
    const root = box.root
    const made = materialiseShape(readShape(SHAPE), root, { include: SLICE, maxFileBytes: 64 * 1024 })
    expect(made.files).toBeGreaterThan(900)
    // What real trees hold.
    fs.writeFileSync(join(root, ".git"), "gitdir: /elsewhere/.git/worktrees/ws\n")
    fs.mkdirSync(join(root, "vendor/dep/.git"), { recursive: true })
    fs.writeFileSync(join(root, "vendor/dep/.git/HEAD"), "ref: refs/heads/main\n")
    fs.writeFileSync(join(root, "vendor/dep/x.c"), "int x;\n")
    fs.symlinkSync("packages/babel-core/package.json", join(root, "link-file"))
    fs.symlinkSync("packages/babel-core", join(root, "link-dir"))
    fs.symlinkSync(box.sentinel, join(root, "link-abs"))
    fs.symlinkSync("../outside", join(root, "link-up"))
    fs.symlinkSync("nowhere", join(root, "link-dangling"))
    fs.symlinkSync("link-loop", join(root, "link-loop"))
    fs.writeFileSync(Buffer.from(`${root}/bad-\xff.txt`, "latin1"), "not utf-8\n")
    fs.mkdirSync(Buffer.from(`${root}/dir-\xfe`, "latin1"))
    fs.writeFileSync(Buffer.from(`${root}/dir-\xfe/inner.txt`, "latin1"), "inner\n")
    execFileSync("mkfifo", [join(root, "pipe")])
    fs.writeFileSync(join(root, "big.bin"), Buffer.alloc(2 * 1024 * 1024, 7))
    fs.writeFileSync(join(root, "run.sh"), "#!/bin/sh\necho hi\n", { mode: 0o755 })
    fs.writeFileSync(join(root, "secret.txt"), "s\n", { mode: 0o600 })
    fs.writeFileSync(join(root, "busy.bin"), Buffer.alloc(BUSY_BYTES, 66))
    const original = walk(root)

    const rewind = await openRewind({ workspaceRoot: root, durability: "atomic" })
    const writer = startWriter(join(root, "busy.bin"))
    try {
      const session = value(await rewind.createSession({ title: "corpus", cwd: root }))
      const { turnId } = value(await rewind.appendUserMessage(session.id, { text: "go" }))
      // Let the writer get going, so the capture reads the file while it changes.
      await new Promise((r) => setTimeout(r, 150))
      const outcome = okValue(
        await rewind.capturePoint(session.id, turnId, {
          settings: { maxFileBytes: 1024 * 1024 },
        }),
      )
      writer.kill("SIGKILL")
      await new Promise((r) => writer.once("exit", r))
      if (outcome._tag !== "Captured") throw new Error(outcome.reason)
      const point = outcome.point
      const manifest = await rewind.run(loadManifest(point.manifestHash))
      const skipped = new Map(point.skipped.map((s) => [s.path, s]))

      // The busy file is one version the writer wrote, never a mix; or it is reported.
      const busy = manifest.get("busy.bin" as WorkspacePath)
      if (busy?.kind === "file") {
        const bytes = await rewind.run(Effect.flatMap(ArtifactStore, (a) => a.get(busy.hash)))
        expect(bytes.every((b) => b === bytes[0])).toBe(true)
      } else expect(skipped.get("busy.bin")?.reason).toBe("changed_during_read")

      // Every path of the tree is in the point, reported, protected, ignored, or below one of those.
      const check = await rewind.run(makeProtectionCheck())
      const unaccounted: Array<string> = []
      for (const [path, stat] of original) {
        if (manifest.has(path as WorkspacePath) || skipped.has(path)) continue
        if (stat.isDirectory()) continue
        // Names that are not UTF-8 are counted below (reported as unsupported_name, escaped).
        if (!isUtf8(Buffer.from(path, "latin1"))) continue
        const segments = path.split("/")
        const ancestorSkipped = segments.some((_, i) => skipped.has(segments.slice(0, i).join("/")))
        if (ancestorSkipped) continue
        const protection = await rewind.run(check(path as WorkspacePath))
        if (Option.isSome(protection)) continue
        unaccounted.push(path)
      }
      expect(unaccounted).toEqual([])
      const reasons = point.skipped.map((s) => s.reason)
      expect(reasons.filter((r) => r === "unsupported_name").length).toBeGreaterThanOrEqual(2)
      expect(skipped.get("pipe")?.reason).toBe("not_a_regular_file")
      expect(skipped.get("big.bin")?.reason).toBe("over_size_limit")
      expect(skipped.get("vendor/dep")?.reason).toBe("skipped_directory")
      expect(manifest.has(".git" as WorkspacePath)).toBe(false)
      for (const link of ["link-file", "link-dir", "link-abs", "link-up", "link-dangling", "link-loop"])
        expect(manifest.get(link as WorkspacePath)?.kind, link).toBe("link")

      const expectPoint = (entries: ReadonlyMap<WorkspacePath, ManifestEntry>) => {
        for (const [path, entry] of entries) {
          const at = join(root, path)
          if (entry.kind === "tombstone") expect(fs.existsSync(at), path).toBe(false)
          else if (entry.kind === "link") expect(fs.readlinkSync(at), path).toBe(entry.target)
          else {
            const s = fs.lstatSync(at)
            expect(s.isFile(), path).toBe(true)
            expect(s.mode & 0o7777, path).toBe(entry.mode)
            expect(sha(fs.readFileSync(at)), path).toBe(entry.hash)
          }
        }
      }
      expectPoint(manifest)

      // Scramble: edits, deletions, mode changes, new files, retargeted and removed links.
      const files = [...manifest].filter(([, e]) => e.kind === "file").map(([p]) => p)
      for (const [i, p] of files.slice(0, 60).entries()) fs.writeFileSync(join(root, p), `scrambled ${i}\n`)
      for (const p of files.slice(60, 80)) fs.rmSync(join(root, p))
      for (const p of files.slice(80, 90)) fs.chmodSync(join(root, p), 0o700)
      for (let i = 0; i < 10; i++) fs.writeFileSync(join(root, `new-${i}.txt`), `${i}\n`)
      fs.rmSync(join(root, "link-file"))
      fs.symlinkSync("README.md", join(root, "link-file"))
      fs.rmSync(join(root, "link-dir"))

      const preview = value(await rewind.previewPointRestore(session.id, point.pointId))
      expect(preview.conflicts).toEqual([])
      expect(preview.canApply).toBe(true)
      value(await rewind.restorePoint(session.id, point.pointId, preview.token!))
      expectPoint(manifest)
      for (let i = 0; i < 10; i++) expect(fs.readFileSync(join(root, `new-${i}.txt`), "utf8")).toBe(`${i}\n`)
      expect(fs.readFileSync(Buffer.from(`${root}/bad-\xff.txt`, "latin1"), "utf8")).toBe("not utf-8\n")
      expectSentinelUntouched(box)
    } finally {
      writer.kill("SIGKILL")
      await rewind.close()
    }
  })
})
