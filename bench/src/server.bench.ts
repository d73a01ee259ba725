/**
 * `rewind serve` (issue 24): the built bin spawned once and driven over stdio, as a host in
 * another language would.
 *   - trivial-call round trip: `listSessions` on a one-session store, sequential calls (each sent
 *     after the previous answer), p50 and p99 of 2,000 (200 in quick mode) after 200 warm-up
 *     calls; issue 24's targets p50 ≤ 1 ms, p99 ≤ 5 ms;
 *   - a repeat capture (nothing changed) at the babel shape through the server, against shadow
 *     git in the same rounds (issue 24: at most 0.05× git), and the same capture through a cold
 *     CLI process (`rewind capture`, spawn to exit) against git, for comparison.
 * Stores lie outside the workspace (the case's temp dir), as in shapes.bench.ts.
 */
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { openRewind } from "rewind"
import type { ShadowGit } from "./baselines/shadowGit.js"
import { timeProcess } from "./harness/processTiming.js"
import { quantileSorted, single } from "./harness/stats.js"
import type { BenchCase, BenchContext, FigureSize } from "./harness/types.js"
import { REWIND_BIN } from "./shapes.bench.js"

const WHOLE_TREE = { maxFiles: 10_000_000, timeBudgetMs: 30 * 60_000 } as const

interface Answer {
  readonly id: number
  readonly result?: { readonly ok: boolean; readonly value?: unknown; readonly refusal?: { message: string } }
  readonly error?: { readonly message: string }
}

/** The server over stdio: one request at a time or pipelined, answers matched by id. */
export const startServer = (workspace: string, dir: string, extra: ReadonlyArray<string> = []) => {
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    [REWIND_BIN, "serve", "--workspace", workspace, "--dir", dir, ...extra],
    { stdio: ["pipe", "pipe", "pipe"] },
  )
  const pending = new Map<number, (a: Answer) => void>()
  let buffered = ""
  let nextId = 1
  let stderr = ""
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d
  })
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk
    for (let at = buffered.indexOf("\n"); at >= 0; at = buffered.indexOf("\n")) {
      const message = JSON.parse(buffered.slice(0, at)) as Answer & { method?: string }
      buffered = buffered.slice(at + 1)
      if (message.method !== undefined) continue
      pending.get(message.id)?.(message)
      pending.delete(message.id)
    }
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const call = (method: string, params?: unknown): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const id = nextId++
      pending.set(id, (a) => {
        if (a.error !== undefined || a.result?.ok !== true) {
          reject(new Error(`${method}: ${JSON.stringify(a.error ?? a.result?.refusal)} ${stderr}`))
        } else resolve(a.result.value)
      })
      child.stdin.write(
        `${JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) })}\n`,
      )
    })
  return {
    call,
    close: async () => {
      child.stdin.end()
      await exited
    },
  }
}

export const initStore = (workspace: string, dir: string) => {
  const r = spawnSync(process.execPath, [REWIND_BIN, "init", "--workspace", workspace, "--dir", dir], {
    encoding: "utf8",
  })
  if (r.status !== 0) throw new Error(`rewind init failed: ${r.stderr}`)
}

const roundTrips = async (ctx: BenchContext) => {
  const root = ctx.tempDir("serve-trivial-ws")
  const dir = ctx.tempDir("serve-trivial-store")
  initStore(root, dir)
  const server = startServer(root, dir)
  try {
    await server.call("createSession", { input: { title: "bench", cwd: root } })
    const warmup = 200
    const n = ctx.mode === "quick" ? 200 : 2_000
    for (let i = 0; i < warmup; i++) await server.call("listSessions")
    const samples: Array<number> = []
    for (let i = 0; i < n; i++) {
      const t = performance.now()
      await server.call("listSessions")
      samples.push(performance.now() - t)
    }
    samples.sort((a, b) => a - b)
    // The same call in-process through the facade on the same store: what the protocol adds.
    const direct = await openRewind({ workspaceRoot: root, dir })
    const inProcess: Array<number> = []
    try {
      for (let i = 0; i < warmup; i++) await direct.listSessions()
      for (let i = 0; i < n; i++) {
        const t = performance.now()
        await direct.listSessions()
        inProcess.push(performance.now() - t)
      }
    } finally {
      await direct.close()
    }
    inProcess.sort((a, b) => a - b)
    const notes = [
      `${n} sequential listSessions calls over stdio after ${warmup} warm-up calls; the client is this bench process (Node), so its own parse and event-loop time is included`,
      "baseline: the same call in-process through openRewind on the same store",
    ]
    for (const [q, name, max] of [
      [0.5, "p50", 1],
      [0.99, "p99", 5],
    ] as const) {
      const value = quantileSorted(samples, q)
      const base = quantileSorted(inProcess, q)
      ctx.record({
        kind: "comparison",
        series: `rewind serve: trivial call round trip over stdio, ${name}`,
        unit: "ms",
        subject: { label: `listSessions over stdio, ${name} of ${n}`, stats: single(value) },
        baseline: {
          label: `listSessions in-process (facade), ${name}`,
          stats: single(base),
          ratio: single(value / Math.max(base, 1e-6)),
        },
        target: { description: `issue 24: ${name} at most ${max} ms`, maxMedianMs: max, met: value <= max },
        notes,
      })
    }
  } finally {
    await server.close()
  }
}

const repeatCapture = async (ctx: BenchContext) => {
  // Quick mode (the plumbing, and bench/test/quick.test.ts) captures the largest generated
  // workspace; a full run the babel shape, the size issue 24's target is set at.
  const quick = ctx.mode === "quick"
  const files = ctx.sizes.files[ctx.sizes.files.length - 1]!
  const ws = quick ? ctx.workspace(files) : ctx.shapeWorkspace("babel", 1)
  const shape = quick ? `generated workspace of ${files} files` : "babel shape"
  const size: FigureSize =
    "tally" in ws
      ? {
          value: 1,
          unit: `× babel shape (${(ws.tally as { files: number }).files.toLocaleString("en-US")} files each)`,
        }
      : { value: files, unit: "files" }
  if (!quick) await new Promise((resolve) => setTimeout(resolve, 2_100))
  const notes = [`${shape}; nothing changed between captures`]
  let git: ShadowGit | undefined
  const shadow = () => {
    if (git === undefined) {
      git = ctx.shadowGit(ws.root)
      git.snapshot()
    }
    return git
  }

  // Through the server: one long-lived process, a first capture untimed.
  const dir = ctx.tempDir("serve-capture-store")
  initStore(ws.root, dir)
  const server = startServer(ws.root, dir)
  try {
    const session = (await server.call("createSession", { input: { title: "bench", cwd: ws.root } })) as {
      id: string
    }
    let turn = 0
    const capture = () =>
      server.call("capturePoint", [session.id, `turn-${++turn}`, { settings: WHOLE_TREE }])
    await capture()
    await ctx.compare({
      series: `rewind serve: repeat capture, nothing changed (${shape})`,
      size,
      subject: { kind: "in-process", label: "capturePoint request over stdio", fn: capture },
      baseline: {
        kind: "process",
        label: "git add -A + write-tree",
        run: (probe) => shadow().snapshot({ measureMemory: probe.measureMemory }),
      },
      expectedGrowth: "constant",
      ratioTarget: {
        description: "issue 24: a repeat capture through the server at most 0.05× git",
        maxRatio: 0.05,
      },
      ...(ctx.mode === "quick" ? { budget: { singleRunAboveMs: 0 } } : {}),
      notes: [...notes, "Rewind: one `rewind serve` process, the store opened once"],
    })
  } finally {
    await server.close()
  }

  // The same capture as a cold CLI process, for comparison.
  const cliDir = ctx.tempDir("cli-capture-store")
  initStore(ws.root, cliDir)
  const cliCapture = (measureMemory: boolean) =>
    timeProcess(
      process.execPath,
      [REWIND_BIN, "capture", "--json", "--workspace", ws.root, "--dir", cliDir],
      {
        measureMemory,
      },
    )
  cliCapture(false)
  await ctx.compare({
    series: `rewind CLI: repeat capture, nothing changed (${shape}, cold process)`,
    size,
    subject: {
      kind: "process",
      label: "rewind capture (spawn to exit)",
      run: (p) => cliCapture(p.measureMemory),
    },
    baseline: {
      kind: "process",
      label: "git add -A + write-tree",
      run: (probe) => shadow().snapshot({ measureMemory: probe.measureMemory }),
    },
    expectedGrowth: "constant",
    ...(ctx.mode === "quick" ? { budget: { singleRunAboveMs: 0 } } : {}),
    notes: [
      ...notes,
      "for comparison with the server: a process start, a store open and a full scan each time",
    ],
  })
  git?.remove()
}

export const serve: BenchCase = {
  name: "serve",
  group: "server",
  description:
    "rewind serve over stdio: trivial-call round trip p50/p99, and a repeat capture at the babel shape through the server and through a cold CLI, against shadow git",
  run: async (ctx) => {
    if (!existsSync(REWIND_BIN)) {
      throw new Error(`${REWIND_BIN} is missing: build the rewind package first (npx turbo run build)`)
    }
    await roundTrips(ctx)
    await repeatCapture(ctx)
  },
}
