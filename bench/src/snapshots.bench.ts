/**
 * Snapshot engine benchmark (issue 7) against shadow git, on the shared generated workspace, each
 * figure against its git baseline measured in the same rounds:
 *   first capture        `capturePoint` into an empty store  vs `git add -A` + `write-tree` into an empty shadow
 *   repeat, no change    `capturePoint`                      vs `git add -A` + `write-tree`
 *   repeat, one change   `capturePoint` after one edit       vs `git add -A` + `write-tree` after one edit
 *   restore (100 files)  preview + apply of a point          vs `git read-tree <tree>` + `checkout-index -a -f`
 *   store size after 20 points with small edits: `du` of the closed store vs `du` of the shadow repository.
 * Rewind runs as the embedded default does: the SQLite store holds events and blobs (synchronous
 * NORMAL), the operation journal is in the same file, restored files are written atomically
 * (temp + rename) without `fsync` (the embedded default under NORMAL), and decoded manifests and
 * session states are kept between captures (`layerPointArtifactCache`, `layerSessionStateCache`).
 * Sizes: the workspace curve (1k and 10k files in full mode; 100k with BENCH_WORKSPACE_100K=1, a
 * run of more than an hour because of git's own first snapshot), so capture and restore each get a
 * scale curve; the harness records each size's peak memory.
 */
import { join } from "node:path"
import { NodeWorkspace } from "@rewind/adapter-fs"
import { SqliteArtifactStore, SqliteSessionStore } from "@rewind/adapter-sqlite"
import type { PointId, SessionId, TurnId } from "@rewind/contracts"
import {
  applyPointRestore,
  type CaptureOutcome,
  capturePoint,
  createSession,
  IdGenerators,
  layerPointArtifactCache,
  layerSessionStateCache,
  previewPointRestore,
} from "@rewind/core"
import { Effect, Layer, ManagedRuntime } from "effect"
import { changeCaptureLimit, changeRestoreLimit, readHashAllLimit } from "./baselines/changeLimits.js"
import { diskUsageBytes, type ShadowGit } from "./baselines/shadowGit.js"
import { engineWorkspaceSizes } from "./harness/options.js"
import { single } from "./harness/stats.js"
import type { BenchCase, BenchContext } from "./harness/types.js"
import type { BenchWorkspace } from "./workspace/benchWorkspace.js"

/** Files changed before each restore (issue 7's "a point that differs in 100 files"). */
const RESTORE_CHANGES = 100
/** Points captured, each after a small edit, for the store-size figure. */
const SIZE_POINTS = 20
/** Captures leave files modified within this window uncached (the default racy window is 2 s). */
const RACY_WAIT_MS = 2_100

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A Rewind store as the embedded default builds it, in its own directory. */
const rewindStore = async (ctx: BenchContext, ws: BenchWorkspace, label: string) => {
  const dir = ctx.tempDir(label)
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(
      SqliteArtifactStore.layer,
      NodeWorkspace.layer(ws.root, { durability: "atomic" }),
      IdGenerators.layerRandom,
      layerPointArtifactCache(),
      layerSessionStateCache(),
    ).pipe(Layer.provideMerge(SqliteSessionStore.layer({ path: join(dir, "rewind.db") }))),
  )
  const sessionId: SessionId = await runtime.runPromise(
    Effect.map(createSession({ title: "bench", cwd: ws.root }), (s) => s.id),
  )
  let turn = 0
  const capture = async (): Promise<PointId> => {
    turn++
    const outcome: CaptureOutcome = await runtime.runPromise(
      capturePoint(sessionId, `turn-${turn}` as TurnId),
    )
    if (outcome._tag !== "Captured") throw new Error(outcome.reason)
    return outcome.point.pointId
  }
  const restore = async (pointId: PointId, expectedChanges: number) => {
    const preview = await runtime.runPromise(previewPointRestore(sessionId, pointId))
    if (preview.token === undefined || preview.changes.length !== expectedChanges) {
      throw new Error(
        `unexpected preview: ${preview.changes.length} changes, ${preview.conflicts.length} conflicts`,
      )
    }
    await runtime.runPromise(applyPointRestore(sessionId, pointId, preview.token))
  }
  return {
    dir,
    capture,
    restore,
    dispose: () => runtime.dispose(),
  }
}

export const snapshots: BenchCase = {
  name: "snapshots",
  group: "workspace",
  description:
    "capturePoint and point restore against shadow git (first, unchanged, one change, 100-file restore, store size)",
  // Quick mode (CI) only checks the plumbing: one small size, no racy-window waits, fewer points.
  sizes: engineWorkspaceSizes,
  sizeUnit: "files",
  run: async (ctx) => {
    const ws = ctx.workspace(ctx.size!)
    const mb = (ws.totalBytes / 1e6).toFixed(1)
    const notes = [
      `${ws.files.length} files, ${mb} MB`,
      "Rewind: SQLite store (events + blobs), restores written atomically without fsync (the embedded default under NORMAL)",
    ]
    const stores: Array<{ dispose: () => Promise<void> }> = []
    // A workspace generated (or reverted) just now is inside the racy window: no capture could
    // cache its stats yet, which is not the steady state a repeat capture is meant to measure.
    if (ctx.mode === "full") await sleep(RACY_WAIT_MS)
    try {
      // First capture: each iteration starts from an empty store and an empty shadow repository.
      let first: Awaited<ReturnType<typeof rewindStore>> | undefined
      let firstPoint: PointId | undefined
      let shadow: ShadowGit | undefined
      let tree = ""
      let attempt = 0
      await ctx.compare({
        series: "first capture (capturePoint into an empty store)",
        subject: {
          kind: "in-process",
          label: "capturePoint, empty store",
          beforeEach: async () => {
            await first?.dispose()
            first = await rewindStore(ctx, ws, `first-${attempt++}`)
          },
          fn: async () => {
            firstPoint = await first!.capture()
          },
        },
        baseline: {
          kind: "process",
          label: "git add -A + write-tree, empty shadow",
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
        limit: readHashAllLimit(ws),
        bytes: ws.totalBytes,
        expectedGrowth: "whole",
        notes: [
          ...notes,
          "target: at least 3× faster than git (ratio at most 0.33); limit: read and hash every file",
        ],
      })
      const rewind = first!
      stores.push(rewind)
      const git = shadow!
      const pristinePoint = firstPoint!
      const pristineTree = tree

      await ctx.compare({
        series: "repeat capture, nothing changed",
        subject: { kind: "in-process", label: "capturePoint", fn: () => rewind.capture() },
        baseline: {
          kind: "process",
          label: "git add -A + write-tree",
          run: (probe) => git.snapshot({ measureMemory: probe.measureMemory }),
        },
        limit: changeCaptureLimit(ws, []),
        expectedGrowth: "whole",
        notes: [
          ...notes,
          "target: no slower than git (ratio at most 1); limit: walk the tree (readdir + lstat)",
        ],
      })

      let round = 0
      await ctx.compare({
        series: "repeat capture, one file changed",
        subject: {
          kind: "in-process",
          label: "capturePoint after one edit",
          beforeEach: () => void ws.edit(1, 50_000 + round++),
          fn: () => rewind.capture(),
        },
        baseline: {
          kind: "process",
          label: "git add -A + write-tree after one edit",
          beforeEach: () => void ws.edit(1, 50_000 + round++),
          run: (probe) => git.snapshot({ measureMemory: probe.measureMemory }),
        },
        limit: changeCaptureLimit(ws, ws.files.slice(0, 1)),
        expectedGrowth: "change",
        notes: [
          ...notes,
          "target: no slower than git (ratio at most 1); limit: walk the tree, read and hash the changed file",
        ],
      })

      // Restore to the first point after 100 files changed. Before each Rewind restore a turn is
      // captured (untimed), as the engine does before every model step: its stat cache is what
      // lets the plan skip unchanged files. git's checkout-index rewrites every file, so the
      // Rewind side first waits out the racy window after it, or its capture could cache nothing.
      let paths: ReadonlyArray<string> = []
      let gitWroteAt = 0
      const changeFiles = () => {
        ws.revert()
        paths = ws.edit(Math.min(RESTORE_CHANGES, ws.files.length), 60_000 + round++)
      }
      const verify = () => {
        const wrong = ws.differing(paths)
        if (wrong.length > 0)
          throw new Error(`restore left ${wrong.length} files different, e.g. ${wrong[0]}`)
      }
      await ctx.compare({
        series: `restore to a point after ${RESTORE_CHANGES} files changed`,
        subject: {
          kind: "in-process",
          label: "previewPointRestore + applyPointRestore",
          beforeEach: async () => {
            const wait = gitWroteAt + RACY_WAIT_MS - Date.now()
            if (wait > 0 && ctx.mode === "full") await sleep(wait)
            changeFiles()
            await rewind.capture()
          },
          fn: () => rewind.restore(pristinePoint, paths.length),
          afterEach: verify,
        },
        baseline: {
          kind: "process",
          label: "git read-tree + checkout-index -a -f",
          beforeEach: changeFiles,
          run: (probe) => {
            const result = git.restoreAll(pristineTree, { measureMemory: probe.measureMemory })
            gitWroteAt = Date.now()
            return result
          },
          afterEach: verify,
        },
        limit: changeRestoreLimit(ctx, ws, ws.files.slice(0, Math.min(RESTORE_CHANGES, ws.files.length))),
        expectedGrowth: "change",
        notes: [
          ...notes,
          "target: at least 3× faster than git (ratio at most 0.33); limit: replace the restored files",
        ],
      })
      ws.revert()

      // Store size: a fresh store and shadow repository, a first point, then 20 points after a
      // small edit each (a few lines of a few files), measured with `du` once the store is closed.
      const sized = await rewindStore(ctx, ws, "size")
      const sizedGit = ctx.shadowGit(ws.root)
      await sized.capture()
      sizedGit.snapshot()
      const points = ctx.mode === "full" ? SIZE_POINTS : 3
      for (let i = 0; i < points; i++) {
        ws.edit(3, 70_000 + i)
        await sized.capture()
        sizedGit.snapshot()
      }
      await sized.dispose()
      const rewindBytes = diskUsageBytes(sized.dir)
      const gitBytes = sizedGit.diskUsageBytes()
      ctx.record({
        kind: "size",
        series: `store size after ${points} points with small edits (du)`,
        size: { value: ws.files.length, unit: "files" },
        unit: "bytes",
        subject: { label: "du of the closed Rewind store", stats: single(rewindBytes) },
        baseline: {
          label: "du of the shadow git dir + index",
          stats: single(gitBytes),
          ratio: single(rewindBytes / gitBytes),
        },
        expectedGrowth: "whole",
        notes: [
          `${ws.files.length} files; ratio = Rewind / git; target: at most 1 (no larger than the shadow repository)`,
        ],
      })
      ws.revert()
    } finally {
      for (const s of stores) await s.dispose()
    }
  },
}
