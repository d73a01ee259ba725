// Temp-directory fixtures for the fs adapter tests: a workspace root with a sentinel directory
// beside it (outside the root), both removed when the test's scope closes.
import { execFileSync } from "node:child_process"
import { promises as fsp, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import type { WorkspaceFixture } from "@rewind/testkit"
import { Effect } from "effect"
import { NodeWorkspace } from "../src/index.js"

/** A fresh temp directory, removed (recursively) when the scope closes. */
export const tempDirectory = (prefix: string) =>
  Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), `rewind-${prefix}-`))),
    (dir) => Effect.promise(() => fsp.rm(dir, { recursive: true, force: true })),
  )

/** Whether this machine has `mkfifo` (the FIFO cases need one). */
export const hasMkfifo = (() => {
  try {
    execFileSync("mkfifo", ["--version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

/** Everything under a directory: kind, mode, size, mtime and content, as one string. */
export const fingerprint = async (dir: string): Promise<string> => {
  const out: Array<string> = []
  const walk = async (d: string): Promise<void> => {
    for (const name of (await fsp.readdir(d)).sort()) {
      const p = join(d, name)
      const s = await fsp.lstat(p, { bigint: true })
      const head = `${p} ${s.mode.toString(8)} ${s.size} ${s.mtimeNs}`
      if (s.isDirectory()) {
        out.push(`${head} dir`)
        await walk(p)
      } else if (s.isSymbolicLink()) out.push(`${head} -> ${await fsp.readlink(p)}`)
      else out.push(`${head} ${(await fsp.readFile(p)).toString("base64")}`)
    }
  }
  await walk(dir)
  return out.join("\n")
}

/** A Node workspace over a fresh temp root, with the options given (the default scanner otherwise). */
export const makeNodeFixtureWith = (options: NodeWorkspace.NodeWorkspaceOptions) =>
  Effect.gen(function* () {
    const base = yield* tempDirectory("ws")
    const root = join(base, "project")
    const outside = join(base, "outside")
    yield* Effect.promise(async () => {
      await fsp.mkdir(root)
      await fsp.mkdir(join(outside, "nested"), { recursive: true })
      await fsp.writeFile(join(outside, "secret.txt"), "do not touch\n")
      await fsp.writeFile(join(outside, "nested", "deep.txt"), "deep\n")
    })
    const workspace = yield* NodeWorkspace.make(root, options)
    const inside = (p: string) => join(root, p)
    const fixture: WorkspaceFixture = {
      workspace,
      plantFile: (p, content, mode) =>
        Effect.promise(async () => {
          await fsp.mkdir(dirname(inside(p)), { recursive: true })
          await fsp.writeFile(inside(p), content)
          if (mode !== undefined) await fsp.chmod(inside(p), mode)
        }),
      plantDirectory: (p) =>
        Effect.promise(() => fsp.mkdir(inside(p), { recursive: true })).pipe(Effect.asVoid),
      plantSymlink: (p, target) =>
        Effect.promise(async () => {
          await fsp.mkdir(dirname(inside(p)), { recursive: true })
          await fsp.symlink(target, inside(p))
        }),
      removeRaw: (p) => Effect.promise(() => fsp.rm(inside(p), { recursive: true, force: true })),
      ...(hasMkfifo
        ? {
            plantFifo: (p: string) => Effect.sync(() => void execFileSync("mkfifo", [inside(p)])),
          }
        : {}),
      readRaw: (p) => Effect.promise(() => fsp.readFile(inside(p), "utf8").catch(() => undefined)),
      outside,
      outsideFromRoot: "../outside",
      outsideFingerprint: () => Effect.promise(() => fingerprint(outside)),
    }
    return { ...fixture, root, base }
  })

export const makeNodeFixture = makeNodeFixtureWith({})
