/**
 * Snapshot engine benchmark against shadow git, on a generated workspace (default 10,000 files of
 * ~10 KB in 100 directories, about 100 MB; `BENCH_QUICK=1` for 1,000 files). Self-contained (the
 * shared bench harness is not on main yet). Times, each against its git baseline in the same run:
 *   first capture        `capturePoint`                    vs `git add -A` + `git write-tree` (fresh shadow repo)
 *   repeat, no change    `capturePoint`                    vs `git add -A` + `git write-tree`
 *   repeat, one change   `capturePoint`                    vs `git add -A` + `git write-tree`
 *   restore (100 files)  preview + apply of a point        vs `git read-tree <tree>` + `git checkout-index -a -f`
 *   store size after 20 points with small edits: artifact store bytes vs the shadow `.git` bytes.
 * Ratios are git / Rewind (>1: Rewind faster or smaller). Rewind runs with `atomic` durability
 * (temp + rename, no fsync per blob), which is what git does for loose objects by default.
 *
 * Run: `node --import tsx bench/src/snapshots.bench.ts` from the repo root after `npm run build`.
 */
import { execFile } from "node:child_process"
import { promises as fsp, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { promisify } from "node:util"
import { FsArtifactStore, NodeWorkspace } from "@rewind/adapter-fs"
import { MemorySessionStore } from "@rewind/adapter-memory"
import type { SessionId, TurnId } from "@rewind/contracts"
import {
  applyPointRestore,
  capturePoint,
  createSession,
  IdGenerators,
  previewPointRestore,
} from "@rewind/core"
import { Effect, Layer, type ManagedRuntime, ManagedRuntime as MR } from "effect"

const run = promisify(execFile)

const QUICK = process.env.BENCH_QUICK === "1"
const FILES = QUICK ? 1_000 : 10_000
const DIRS = 100
const FILE_BYTES = 10_000

const text = (seed: number, bytes: number) => {
  const words = ["alpha", "beta", "gamma", "delta", "omega", "lambda", "kappa", "sigma"]
  let out = ""
  let x = seed * 2654435761
  while (out.length < bytes) {
    x = (x * 1103515245 + 12345) >>> 0
    out += `${words[x % words.length]}${x % 997} `
    if (x % 13 === 0) out += "\n"
  }
  return out.slice(0, bytes)
}

const pathOf = (i: number) => `d${String(i % DIRS).padStart(3, "0")}/f${i}.txt`

const dirBytes = async (dir: string): Promise<number> => {
  let total = 0
  for (const entry of await fsp.readdir(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name)
    if (entry.isDirectory()) total += await dirBytes(p)
    else total += (await fsp.lstat(p)).size
  }
  return total
}

const timed = async (f: () => Promise<unknown>) => {
  const start = performance.now()
  await f()
  return performance.now() - start
}

const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

export const runSnapshotsBench = async () => {
  const base = mkdtempSync(join(tmpdir(), "rewind-snapbench-"))
  const ws = join(base, "ws")
  const shadow = join(base, "shadow.git")
  const storeDir = join(base, "store")
  try {
    for (let d = 0; d < DIRS; d++)
      await fsp.mkdir(join(ws, `d${String(d).padStart(3, "0")}`), { recursive: true })
    for (let i = 0; i < FILES; i++) await fsp.writeFile(join(ws, pathOf(i)), text(i, FILE_BYTES))
    // Past the racy window, as between two turns of a real session.
    await new Promise((r) => setTimeout(r, 2_500))
    const git = (...args: Array<string>) =>
      run("git", [`--git-dir=${shadow}`, `--work-tree=${ws}`, ...args], { maxBuffer: 1 << 26 })
    await run("git", ["init", "--bare", "-q", shadow])
    await git("config", "core.autocrlf", "false")
    const gitSnapshot = async () => {
      await git("add", "-A")
      return (await git("write-tree")).stdout.trim()
    }

    const runtime: ManagedRuntime.ManagedRuntime<never, never> = MR.make(
      Layer.mergeAll(
        Layer.orDie(NodeWorkspace.layer(ws, { durability: "atomic" })),
        Layer.orDie(FsArtifactStore.layer({ directory: storeDir, durability: "atomic" })),
        MemorySessionStore.layer,
        IdGenerators.layerRandom,
      ) as never,
    )
    const exec = <A>(effect: Effect.Effect<A, unknown, never>) => runtime.runPromise(effect)
    const sessionId: SessionId = await exec(
      Effect.map(createSession({ title: "bench", cwd: ws }), (s) => s.id) as never,
    )
    let turn = 0
    const capture = async () => {
      turn++
      const outcome = await exec(capturePoint(sessionId, `turn-${turn}` as TurnId) as never)
      const o = outcome as { _tag: string; reason?: string; point?: { pointId: string } }
      if (o._tag !== "Captured") throw new Error(o.reason)
      return o.point!.pointId
    }

    const first = { rewind: await timed(capture), git: await timed(gitSnapshot) }
    const unchanged = { rewind: [] as Array<number>, git: [] as Array<number> }
    const oneChange = { rewind: [] as Array<number>, git: [] as Array<number> }
    for (let r = 0; r < 3; r++) {
      unchanged.rewind.push(await timed(capture))
      unchanged.git.push(await timed(gitSnapshot))
      await fsp.writeFile(join(ws, pathOf(r * 7)), text(100_000 + r, FILE_BYTES))
      oneChange.rewind.push(await timed(capture))
      oneChange.git.push(await timed(gitSnapshot))
    }

    // Restore: a point, then 100 files changed, then back to the point.
    await new Promise((r) => setTimeout(r, 2_500))
    const pointId = await capture()
    const tree = await gitSnapshot()
    const restore = { rewind: [] as Array<number>, git: [] as Array<number> }
    for (let r = 0; r < 3; r++) {
      const mutate = async () => {
        for (let k = 0; k < 100; k++)
          await fsp.writeFile(join(ws, pathOf((k * 37 + r) % FILES)), text(200_000 + k + r, FILE_BYTES))
      }
      await mutate()
      restore.rewind.push(
        await timed(async () => {
          const preview = (await exec(previewPointRestore(sessionId, pointId as never) as never)) as {
            token?: string
            changes: Array<unknown>
          }
          if (preview.token === undefined || preview.changes.length !== 100)
            throw new Error("unexpected preview")
          await exec(applyPointRestore(sessionId, pointId as never, preview.token) as never)
        }),
      )
      await mutate()
      restore.git.push(
        await timed(async () => {
          await git("read-tree", tree)
          await git("checkout-index", "-a", "-f")
        }),
      )
    }

    // Store size after 20 points with small edits (both sides already hold the points above).
    for (let r = 0; r < 20; r++) {
      const p = join(ws, pathOf(r * 11))
      await fsp.appendFile(p, `edit ${r}\n`)
      await capture()
      await gitSnapshot()
    }
    const size = { rewind: await dirBytes(storeDir), git: await dirBytes(shadow) }
    await runtime.dispose()
    const ratio = (g: number, w: number) => g / w
    return {
      workspace: { files: FILES, bytes: FILES * FILE_BYTES },
      firstCapture: { ...first, ratio: ratio(first.git, first.rewind) },
      repeatUnchanged: {
        rewind: median(unchanged.rewind),
        git: median(unchanged.git),
        ratio: ratio(median(unchanged.git), median(unchanged.rewind)),
      },
      repeatOneChange: {
        rewind: median(oneChange.rewind),
        git: median(oneChange.git),
        ratio: ratio(median(oneChange.git), median(oneChange.rewind)),
      },
      restore100: {
        rewind: median(restore.rewind),
        git: median(restore.git),
        ratio: ratio(median(restore.git), median(restore.rewind)),
      },
      storeBytesAfterPoints: { ...size, ratio: ratio(size.git, size.rewind) },
    }
  } finally {
    await fsp.rm(base, { recursive: true, force: true })
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  runSnapshotsBench().then(
    (result) => {
      const ms = (x: number) => `${x.toFixed(0)} ms`
      const line = (name: string, r: { rewind: number; git: number; ratio: number }) =>
        console.log(
          `${name.padEnd(22)} rewind ${ms(r.rewind).padStart(9)}  git ${ms(r.git).padStart(9)}  git/rewind ${r.ratio.toFixed(2)}x`,
        )
      console.log(
        `snapshots (${result.workspace.files} files, ${(result.workspace.bytes / 1e6).toFixed(0)} MB)`,
      )
      line("first capture", result.firstCapture)
      line("repeat, unchanged", result.repeatUnchanged)
      line("repeat, one change", result.repeatOneChange)
      line("restore 100 files", result.restore100)
      const s = result.storeBytesAfterPoints
      console.log(
        `store bytes            rewind ${s.rewind}  git ${s.git}  git/rewind ${s.ratio.toFixed(2)}x`,
      )
      console.log(JSON.stringify(result))
    },
    (error) => {
      console.error(error)
      process.exit(1)
    },
  )
}
