/**
 * The live engine (issue 23 item 2, issue 24's server figure) on the babel shape at 1× and 4×:
 * a process that keeps Rewind open with its workspace watcher, against shadow git in the same
 * rounds. Two hosts of it, each at each size in the case's process:
 *   - in-process: `openRewind({ live: true })` — the watcher's start (open to ready), repeat
 *     capture with nothing / 1 / 100 files changed, and a per-edit checkpoint (`recordFileMutation`);
 *   - `rewind serve` (the built bin over stdio, which runs the live engine by default) — repeat
 *     capture with nothing / 1 / 100 files changed, the request's round trip included.
 *
 * Edits are made in the untimed `beforeEach`, which then waits 120 ms: the Node workspace re-reads
 * a file whose ctime is under 100 ms old (a write may still be under way; a torn read is never
 * recorded), and without the pause each of the k files would add that wait to the timed capture.
 * That is the read guard's cost, not the watcher's; docs/benchmarks.md reports it beside the figures.
 * Stores lie outside the workspace (the case's temp dir), as in shapes.bench.ts.
 */
import type { TurnId } from "@rewind/contracts"
import type { ShadowGit } from "./baselines/shadowGit.js"
import type { BenchCase, BenchContext } from "./harness/types.js"
import { initStore, startServer } from "./server.bench.js"
import {
  budgetFor,
  describeShape,
  facade,
  MANY_CHANGES,
  prepared,
  type Shape,
  shapeCopies,
  sizeOf,
  sleep,
  target,
  WHOLE_TREE,
} from "./shapes.bench.js"

/** What a fresh file needs before the workspace reads it without waiting (see the header). */
const SETTLE_MS = 120

interface Capturer {
  readonly capture: () => Promise<unknown>
}

/** The three repeat-capture figures of one live host. */
const repeatCaptures = async (
  ctx: BenchContext,
  ws: Shape,
  git: ShadowGit,
  host: Capturer,
  where: string,
  notes: ReadonlyArray<string>,
  seed: { round: number },
) => {
  const size = sizeOf(ws)
  await ctx.compare({
    series: `babel shape: live engine repeat capture, nothing changed (${where})`,
    size,
    subject: { kind: "in-process", label: "capturePoint", fn: () => host.capture() },
    baseline: {
      kind: "process",
      label: "git add -A + write-tree",
      run: (probe) => git.snapshot({ measureMemory: probe.measureMemory }),
    },
    expectedGrowth: "constant",
    ratioTarget: target(
      where === "rewind serve"
        ? "a repeat capture through the server at most 0.05× git (issue 24)"
        : "live engine, nothing changed, at most 0.05× git (must not grow with the tree)",
      0.05,
    ),
    budget: budgetFor(ctx),
    notes,
  })
  for (const k of [1, MANY_CHANGES]) {
    const changed = Math.min(k, ws.files.length)
    const edit = () => void ws.edit(changed, 70_000 + seed.round++)
    await ctx.compare({
      series: `babel shape: live engine repeat capture, ${k} file${k === 1 ? "" : "s"} changed (${where})`,
      size,
      subject: {
        kind: "in-process",
        label: `capturePoint after ${changed} edit(s)`,
        beforeEach: async () => {
          edit()
          await sleep(SETTLE_MS)
        },
        fn: () => host.capture(),
      },
      baseline: {
        kind: "process",
        label: `git add -A + write-tree after ${changed} edit(s)`,
        beforeEach: edit,
        run: (probe) => git.snapshot({ measureMemory: probe.measureMemory }),
      },
      expectedGrowth: "change",
      budget: budgetFor(ctx),
      notes: [...notes, `edits settle ${SETTLE_MS} ms before the timed capture (see the module header)`],
    })
  }
}

/** The watcher's start: open to ready with `live: true`, against git's repeat snapshot. */
const watcherStart = async (ctx: BenchContext, ws: Shape, git: ShadowGit, notes: ReadonlyArray<string>) => {
  let attempt = 0
  let opened: Awaited<ReturnType<typeof facade>> | undefined
  const rssBefore = process.memoryUsage().rss
  await ctx.compare({
    series: "babel shape: live engine start (openRewind live: the tree walked, a watch per directory)",
    size: sizeOf(ws),
    subject: {
      kind: "in-process",
      label: "openRewind({ live: true }) to ready",
      fn: async () => {
        opened = await facade(ctx, ws, `start-${attempt++}`, true)
      },
      afterEach: async () => {
        await opened?.close()
      },
    },
    baseline: {
      kind: "process",
      label: "git add -A + write-tree",
      run: (probe) => git.snapshot({ measureMemory: probe.measureMemory }),
    },
    expectedGrowth: "whole",
    budget: budgetFor(ctx),
    notes: [...notes, `process RSS before the starts: ${(rssBefore / 1e6).toFixed(0)} MB`],
  })
}

export const shapeLive: BenchCase = {
  name: "shape-live",
  group: "real shapes",
  description:
    "babel shape, the live engine (workspace watcher) in-process and through rewind serve against shadow git: start, repeat capture with 0 / 1 / 100 files changed, per-edit checkpoint",
  // Full runs only: a quick run (and `npm test` through bench/test/quick.test.ts) already spends its
  // time budget on the babel cases of shapes.bench.ts; the live engine's correctness is tested in
  // packages/adapters/fs/test/liveCapture.test.ts and the built server's in serveLive.e2e.test.ts.
  sizes: (_sizes, mode) => (mode === "quick" ? [] : shapeCopies(mode)),
  sizeUnit: "× babel",
  run: async (ctx) => {
    const ws = await prepared(ctx)
    const git = ctx.shadowGit(ws.root)
    git.snapshot()
    const seed = { round: 0 }
    const base = [describeShape(ws)]
    try {
      await watcherStart(ctx, ws, git, [...base, "one start per sample, closed after it"])

      // In-process: the facade with the watcher; its first capture (a full scan) untimed.
      const live = await facade(ctx, ws, "live", true)
      try {
        await live.capture()
        await live.capture()
        const status = await live.rewind.snapshotStatus()
        if (!status.ok || status.value.watcher.lastCapture?.mode !== "watched")
          throw new Error(`the live engine did not capture from its change set: ${JSON.stringify(status)}`)
        const rss = process.memoryUsage().rss
        await repeatCaptures(
          ctx,
          ws,
          git,
          live,
          "in-process facade",
          [
            ...base,
            `Rewind: openRewind({ live: true }) in the bench process; ${status.value.watcher.active ? status.value.watcher.watchedDirectories : 0} directories watched; process RSS after two captures ${(rss / 1e6).toFixed(0)} MB`,
          ],
          seed,
        )
        ws.revert()
        await sleep(SETTLE_MS)
        await live.capture()

        // A per-edit checkpoint in the live engine, as shapes.bench.ts measures it for the facade.
        const user = await live.rewind.appendUserMessage(live.sessionId, { text: "edit a file" })
        if (!user.ok) throw new Error(`appendUserMessage refused: ${user.refusal.message}`)
        const turnId = user.value.turnId as TurnId
        const pool = ws.files.filter((f) => f.size >= 1_000 && f.size <= 20_000)
        let edited: { path: string; before: string; after: string } | undefined
        const nextEdit = () => {
          const path = pool[(seed.round++ * 7919) % pool.length]!.path
          const before = ws.original(path).toString("utf8")
          edited = { path, before, after: `${before}\n// edited in round ${seed.round}\n` }
          ws.rewrite(path, edited.after)
        }
        const putBack = () => ws.rewrite(edited!.path, edited!.before)
        await ctx.compare({
          series: "babel shape: per-edit checkpoint (live engine recordFileMutation)",
          size: sizeOf(ws),
          subject: {
            kind: "in-process",
            label: "recordFileMutation",
            beforeEach: nextEdit,
            fn: async () => {
              const answer = await live.rewind.recordFileMutation({
                sessionId: live.sessionId,
                turnId,
                path: edited!.path,
                toolName: "Edit",
                before: edited!.before,
                after: edited!.after,
              })
              if (!answer.ok || !answer.value.recorded)
                throw new Error(`checkpoint: ${JSON.stringify(answer)}`)
            },
            afterEach: putBack,
          },
          baseline: {
            kind: "process",
            label: "git add -A + write-tree",
            beforeEach: nextEdit,
            run: (probe) => git.snapshot({ measureMemory: probe.measureMemory }),
            afterEach: putBack,
          },
          expectedGrowth: "change",
          ratioTarget: target(
            "per-edit checkpoint in a live engine at most 0.01× git's add -A + write-tree",
            0.01,
          ),
          budget: budgetFor(ctx),
          notes: base,
        })
        ws.revert()
      } finally {
        await live.close()
      }

      // Through `rewind serve`: one process for the whole case, its first capture untimed.
      const dir = ctx.tempDir("live-serve-store")
      initStore(ws.root, dir)
      const server = startServer(ws.root, dir)
      try {
        const session = (await server.call("createSession", { input: { title: "bench", cwd: ws.root } })) as {
          id: string
        }
        let turn = 0
        const capture = () =>
          server.call("capturePoint", [session.id, `turn-${++turn}`, { settings: WHOLE_TREE }])
        await sleep(SETTLE_MS)
        await capture()
        await capture()
        const status = (await server.call("snapshotStatus")) as {
          watcher: { lastCapture?: { mode: string } }
        }
        if (status.watcher.lastCapture?.mode !== "watched")
          throw new Error(
            `rewind serve did not capture from its change set: ${JSON.stringify(status.watcher)}`,
          )
        await repeatCaptures(
          ctx,
          ws,
          git,
          { capture },
          "rewind serve",
          [...base, "Rewind: one `rewind serve` process (the live engine by default), requests over stdio"],
          seed,
        )
      } finally {
        await server.close()
      }
      ws.revert()
    } finally {
      git.remove()
    }
  },
}
