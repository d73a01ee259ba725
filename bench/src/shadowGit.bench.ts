/**
 * The shadow-git baselines on generated workspaces of 1k, 10k and 100k files, each against the
 * physical limit measured in the same rounds: snapshot into an empty shadow repo and after k edits,
 * restore of k files and of the whole tree, and the shadow repo's size on disk. A second case draws
 * the change-size curve (1 to 1,000 changed files on one workspace), so that "grows with the change"
 * and "grows with the whole" are both measured, not assumed.
 *
 * Rewind's own capture and restore cases are meant to sit beside these (same workspace, same
 * limits): see docs/benchmarks.md.
 */
import { performance } from "node:perf_hooks"
import { changeCaptureLimit, changeRestoreLimit } from "./baselines/changeLimits.js"
import {
  hashBuffers,
  loadHashSample,
  prepareReplaceAll,
  readAll,
  readHashAll,
  statWalk,
} from "./baselines/physicalLimits.js"
import { diskUsageBytes, type ShadowGit } from "./baselines/shadowGit.js"
import { single } from "./harness/stats.js"
import type { BenchCase, FigureSize, InProcessSampler, Sampler } from "./harness/types.js"
import type { BenchWorkspace } from "./workspace/benchWorkspace.js"
import { pickDistinct } from "./workspace/mutations.js"
import { makeRng } from "./workspace/prng.js"

/** A process sampler: edit k files (untimed), then run `op` on the edited paths. */
const afterEdits = (
  ws: BenchWorkspace,
  k: number,
  seedBase: number,
  label: string,
  op: (paths: ReadonlyArray<string>, measureMemory: boolean) => { ms: number; peakRssBytes?: number },
  verify?: (paths: ReadonlyArray<string>) => void,
): Sampler => {
  let round = 0
  let paths: ReadonlyArray<string> = []
  return {
    kind: "process",
    label,
    beforeEach: () => {
      paths = ws.edit(k, seedBase + round++)
    },
    run: (probe) => op(paths, probe.measureMemory),
    ...(verify === undefined ? {} : { afterEach: () => verify(paths) }),
  }
}

const verifyRestored = (ws: BenchWorkspace) => (paths: ReadonlyArray<string>) => {
  const wrong = ws.differing(paths)
  if (wrong.length > 0) throw new Error(`git restore left ${wrong.length} files different, e.g. ${wrong[0]}`)
}

export const shadowGitWorkspace: BenchCase = {
  name: "shadow-git",
  group: "workspace",
  description: "shadow git snapshot/restore/size against the read+hash and write limits, per workspace size",
  sizes: (sizes) => sizes.files,
  sizeUnit: "files",
  run: async (ctx) => {
    const ws = ctx.workspace(ctx.size!)
    const k = ctx.sizes.editsPerRound
    const mb = (ws.totalBytes / 1e6).toFixed(1)

    // The physical limits: the cheap ones here, read+hash and replace-all with the comparisons that
    // are held against them (measured in the same rounds, and listed in the limits table too).
    const hashSample = loadHashSample(ws)
    const replaceAll = prepareReplaceAll(ctx.tempDir("write-limit"), ws)
    const readHash: InProcessSampler = {
      kind: "in-process",
      label: "read+hash every file",
      fn: () => readHashAll(ws.root, ws.files),
    }
    const write: InProcessSampler = { kind: "in-process", label: "replace every file", fn: replaceAll }
    ctx.sampleMemory()
    await ctx.limits([
      {
        series: "stat walk (readdir + lstat)",
        sampler: { kind: "in-process", label: "stat walk", fn: () => statWalk(ws.root) },
      },
      {
        series: "read every file",
        bytes: ws.totalBytes,
        sampler: { kind: "in-process", label: "read", fn: () => readAll(ws.root, ws.files) },
      },
      {
        series: "SHA-256 in memory",
        bytes: ws.totalBytes,
        sampler: {
          kind: "in-process",
          label: "sha256",
          fn: () => ({ overriddenDuration: hashBuffers(hashSample) }),
        },
        notes:
          hashSample.scale > 1.0001
            ? [
                `timed on the first ${(ws.totalBytes / hashSample.scale / 1e6).toFixed(0)} MB, scaled to ${mb} MB`,
              ]
            : [],
      },
    ])

    // Snapshot into an empty shadow repository: every file is hashed, compressed and written.
    let shadow: ShadowGit | undefined
    let tree = ""
    await ctx.compare({
      series: "git snapshot, empty shadow (add -A + write-tree)",
      subject: {
        kind: "process",
        label: "git add -A + write-tree",
        beforeEach: () => {
          shadow?.remove()
          shadow = ctx.shadowGit(ws.root)
        },
        run: (probe) => {
          const snap = shadow!.snapshot({ measureMemory: probe.measureMemory })
          tree = snap.tree
          return snap
        },
      },
      limit: readHash,
      limitSeries: "read+hash every file",
      bytes: ws.totalBytes,
      expectedGrowth: "whole",
      notes: [`${ws.files.length} files, ${mb} MB`],
    })
    const git = shadow!
    const pristineTree = tree

    const gitBytes = git.diskUsageBytes()
    const wsBytes = diskUsageBytes(ws.root)
    ctx.record({
      kind: "size",
      series: "shadow git size after the first snapshot (du)",
      size: { value: ws.files.length, unit: "files" },
      unit: "bytes",
      subject: { label: "du of git dir + index", stats: single(gitBytes) },
      baseline: { label: "du of the workspace", stats: single(wsBytes), ratio: single(gitBytes / wsBytes) },
      expectedGrowth: "whole",
      notes: ["loose zlib objects, no pack: what a shadow repo holds until someone runs gc"],
    })

    // Snapshot after k edits: git stats every file against its index, hashes only the changed ones.
    const sampleFiles = pickDistinct(ws.files, k, makeRng(ctx.seed))
    let incremental = 0
    const before = git.diskUsageBytes()
    const editedBytes: Array<number> = []
    await ctx.compare({
      series: `git snapshot after ${k} edits`,
      subject: afterEdits(ws, k, 1_000, "git add -A + write-tree", (paths, measureMemory) => {
        incremental++
        editedBytes.push(paths.reduce((sum, p) => sum + ws.original(p).length, 0))
        return git.snapshot({ measureMemory })
      }),
      limit: changeCaptureLimit(ws, sampleFiles),
      expectedGrowth: "change",
      notes: ["limit: walk the tree, read and hash the changed files"],
    })
    const growth = (git.diskUsageBytes() - before) / incremental
    const changed = editedBytes.reduce((a, b) => a + b, 0) / editedBytes.length
    ctx.record({
      kind: "size",
      series: `shadow git growth per snapshot of ${k} edits (du)`,
      size: { value: ws.files.length, unit: "files" },
      unit: "bytes",
      subject: { label: "du growth per snapshot", stats: single(growth) },
      baseline: {
        label: `bytes of the ${k} edited files`,
        stats: single(changed),
        ratio: single(growth / changed),
      },
      expectedGrowth: "change",
      notes: [`averaged over ${incremental} snapshots; new blobs plus rewritten trees`],
    })

    // Restore k edited files to the first snapshot.
    await ctx.compare({
      series: `git restore of ${k} edited files (checkout <tree> -- paths)`,
      subject: afterEdits(
        ws,
        k,
        2_000,
        "git checkout <tree> -- paths",
        (paths, measureMemory) => git.restorePaths(pristineTree, paths, { measureMemory }),
        verifyRestored(ws),
      ),
      limit: changeRestoreLimit(ctx, ws, sampleFiles),
      expectedGrowth: "change",
      notes: ["limit: replace the restored files"],
    })

    // Restore the whole tree after k edits: every file is rewritten.
    await ctx.compare({
      series: `git restore of the whole tree after ${k} edits (read-tree + checkout-index -a -f)`,
      subject: afterEdits(
        ws,
        k,
        3_000,
        "git read-tree + checkout-index -a -f",
        (_paths, measureMemory) => git.restoreAll(pristineTree, { measureMemory }),
        verifyRestored(ws),
      ),
      limit: write,
      limitSeries: "replace every file (unlink + write)",
      bytes: ws.totalBytes,
      expectedGrowth: "whole",
      notes: ["limit: replace every file"],
    })
  },
}

export const shadowGitChanges: BenchCase = {
  name: "shadow-git-changes",
  group: "workspace",
  description: "shadow git snapshot and restore against the number of changed files, on one workspace",
  run: async (ctx) => {
    const files = ctx.sizes.changeCurveFiles
    const ws = ctx.workspace(files)
    const git = ctx.shadowGit(ws.root)
    const started = performance.now()
    const pristineTree = git.snapshot().tree
    ctx.log(`first snapshot of ${files} files in ${((performance.now() - started) / 1000).toFixed(1)} s`)
    for (const k of ctx.sizes.changes) {
      const size: FigureSize = { value: k, unit: "changed files", axis: "change" }
      const sample = pickDistinct(ws.files, k, makeRng(ctx.seed + k))
      await ctx.compare({
        series: `git snapshot after k edits (${files} files)`,
        size,
        subject: afterEdits(ws, k, 10_000 * k, "git add -A + write-tree", (_p, m) =>
          git.snapshot({ measureMemory: m }),
        ),
        limit: changeCaptureLimit(ws, sample),
        expectedGrowth: "change",
      })
      await ctx.compare({
        series: `git restore of k edited files (${files} files)`,
        size,
        subject: afterEdits(
          ws,
          k,
          20_000 * k,
          "git checkout <tree> -- paths",
          (paths, m) => git.restorePaths(pristineTree, paths, { measureMemory: m }),
          verifyRestored(ws),
        ),
        limit: changeRestoreLimit(ctx, ws, sample),
        expectedGrowth: "change",
      })
    }
  },
}
