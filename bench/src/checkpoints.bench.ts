/**
 * Checkpoint benchmark: what one tool-level checkpoint costs against a shadow-git checkpoint of the
 * same workspace, and what restoring one file costs against `git checkout <tree> -- <file>`.
 *
 * A workspace of N generated text files is created in a temp directory (default 10,000 files of
 * ~10 KB, about 100 MB; `BENCH_QUICK=1` for a small one). Each run edits one file (a ~10 KB edit),
 * then times:
 *   record:  `recordFileMutation` (fs artifact store, memory session store) versus
 *            `git --git-dir=<shadow> --work-tree=<ws> add -A` + `git write-tree`, spawned as processes;
 *   restore: `rewindToCheckpoint` (Node workspace) versus `git checkout <tree> -- <file>`.
 * Figures are medians over the runs, and the ratios are baseline / Rewind, measured in the same run.
 * Rewind is measured twice: with its default durability (every blob and restored file fsynced
 * with its directory) and with `atomic` durability (temp + rename, no fsync), which is what git
 * does by default for loose objects and its index; the second is the like-for-like comparison.
 *
 * Run on its own: `node --import tsx bench/src/checkpoints.bench.ts` (from the repo root, after
 * `npm run build`); or import `runCheckpointsBench` from a harness.
 */
import { execFile } from "node:child_process"
import { promises as fsp, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { promisify } from "node:util"
import { FsArtifactStore, NodeWorkspace } from "@rewind/adapter-fs"
import { MemorySessionStore } from "@rewind/adapter-memory"
import type { CheckpointId, SessionId, TurnId } from "@rewind/contracts"
import {
  appendUserMessage,
  createSession,
  IdGenerators,
  OperationJournals,
  recordFileMutation,
  rewindToCheckpoint,
} from "@rewind/core"
import { Effect, Layer, ManagedRuntime } from "effect"

const exec = promisify(execFile)

export interface CheckpointBenchOptions {
  readonly files: number
  /** Approximate size of each generated file. */
  readonly fileBytes: number
  /** Measured runs (each edits a different file). */
  readonly runs: number
  /** Unmeasured runs first, so JIT and caches settle. */
  readonly warmup: number
}

export interface Comparison {
  readonly rewindMedianMs: number
  readonly baselineMedianMs: number
  /** Baseline median / Rewind median: how many times faster Rewind is. */
  readonly ratio: number
  readonly target: number
  readonly met: boolean
}

export interface CheckpointBenchResult {
  readonly name: "checkpoints"
  readonly workspace: { readonly files: number; readonly bytes: number }
  readonly runs: number
  /** Per durability mode of the Rewind side (the git side is the same for both). */
  readonly record: { readonly fsync: Comparison; readonly atomic: Comparison }
  readonly restore: { readonly fsync: Comparison; readonly atomic: Comparison }
}

export const FULL: CheckpointBenchOptions = { files: 10_000, fileBytes: 10 * 1024, runs: 21, warmup: 3 }
export const QUICK: CheckpointBenchOptions = { files: 400, fileBytes: 10 * 1024, runs: 7, warmup: 1 }

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

const compare = (
  rewind: ReadonlyArray<number>,
  baseline: ReadonlyArray<number>,
  target: number,
): Comparison => {
  const rewindMedianMs = median(rewind)
  const baselineMedianMs = median(baseline)
  const ratio = baselineMedianMs / rewindMedianMs
  return { rewindMedianMs, baselineMedianMs, ratio, target, met: ratio >= target }
}

/** Deterministic text (a seeded LCG), so every run benchmarks the same workspace. */
const makeText = (seed: number, bytes: number): string => {
  let x = seed >>> 0 || 1
  const words = [
    "const",
    "value",
    "return",
    "function",
    "export",
    "import",
    "rewind",
    "checkpoint",
    "=",
    "{",
    "}",
  ]
  const lines: Array<string> = []
  let size = 0
  while (size < bytes) {
    let line = ""
    const n = 4 + (x % 8)
    for (let i = 0; i < n; i++) {
      x = (Math.imul(x, 1_103_515_245) + 12_345) >>> 0
      line += `${words[x % words.length]} `
    }
    lines.push(line.trimEnd())
    size += line.length
  }
  return `${lines.join("\n")}\n`
}

/**
 * The edit: the agent writes the whole ~10 KB file back with three regions (about a tenth of its
 * lines) rewritten, the common shape of a Write/Edit. (The diff is the part of a checkpoint whose
 * cost grows with how scattered the changes are: with every other line changed it is several
 * milliseconds on its own.)
 */
const editOf = (text: string, run: number): string => {
  const lines = text.split("\n")
  const starts = [0.2, 0.5, 0.8].map((f) => Math.floor(lines.length * f))
  const span = Math.max(1, Math.floor(lines.length / 30))
  return lines
    .map((line, i) =>
      starts.some((s) => i >= s && i < s + span) && line.length > 0
        ? `${line} // rewritten in run ${run}`
        : line,
    )
    .join("\n")
}

const pathOf = (i: number) =>
  `pkg${String(Math.floor(i / 100)).padStart(3, "0")}/file${String(i).padStart(5, "0")}.ts`

const time = async (f: () => Promise<unknown>): Promise<number> => {
  const start = performance.now()
  await f()
  return performance.now() - start
}

export const runCheckpointsBench = async (
  options: CheckpointBenchOptions = process.env.BENCH_QUICK === "1" ? QUICK : FULL,
  log: (line: string) => void = () => {},
): Promise<CheckpointBenchResult> => {
  const base = mkdtempSync(join(tmpdir(), "rewind-bench-checkpoints-"))
  const ws = join(base, "ws")
  const shadow = join(base, "shadow.git")
  const git = (...args: Array<string>) =>
    exec("git", [`--git-dir=${shadow}`, `--work-tree=${ws}`, "-c", "core.autocrlf=false", ...args], {
      maxBuffer: 64 * 1024 * 1024,
    })
  try {
    log(`generating ${options.files} files of ~${options.fileBytes} bytes in ${ws}`)
    let bytes = 0
    for (let dir = 0; dir * 100 < options.files; dir++) {
      await fsp.mkdir(join(ws, `pkg${String(dir).padStart(3, "0")}`), { recursive: true })
    }
    for (let i = 0; i < options.files; i += 200) {
      await Promise.all(
        Array.from({ length: Math.min(200, options.files - i) }, async (_, k) => {
          const text = makeText(i + k + 1, options.fileBytes)
          bytes += text.length
          await fsp.writeFile(join(ws, pathOf(i + k)), text)
        }),
      )
    }
    log("initialising the shadow git repository (untimed)")
    await exec("git", ["init", "--quiet", "--bare", shadow])
    await git("add", "-A")
    const initialTree = (await git("write-tree")).stdout.trim()

    const runtimeFor = (durability: "fsync" | "atomic") =>
      ManagedRuntime.make(
        Layer.mergeAll(
          MemorySessionStore.layer,
          FsArtifactStore.layer({ directory: join(base, `store-${durability}`), durability }),
          NodeWorkspace.layer(ws, { durability }),
          IdGenerators.layerRandom,
          OperationJournals.layerMemory,
        ),
      )
    const modes = [
      { durability: "fsync" as const, runtime: runtimeFor("fsync") },
      { durability: "atomic" as const, runtime: runtimeFor("atomic") },
    ]
    try {
      const sessions = await Promise.all(
        modes.map(({ runtime }) =>
          runtime.runPromise(
            Effect.gen(function* () {
              const session = yield* createSession({ title: "bench", cwd: ws })
              const user = yield* appendUserMessage(session.id, { text: "edit many files" })
              return { sessionId: session.id as SessionId, turnId: user.turnId as TurnId }
            }),
          ),
        ),
      )

      const timings = {
        record: { fsync: [] as Array<number>, atomic: [] as Array<number>, git: [] as Array<number> },
        restore: { fsync: [] as Array<number>, atomic: [] as Array<number>, git: [] as Array<number> },
      }
      const total = options.warmup + options.runs
      for (let run = 0; run < total; run++) {
        const measured = run >= options.warmup
        const path = pathOf((run * 7919) % options.files)
        const file = join(ws, path)
        const before = await fsp.readFile(file, "utf8")
        const after = editOf(before, run)
        // The tool's own write is not part of either checkpoint's cost.
        await fsp.writeFile(file, after)
        const line: Array<string> = []

        const checkpoints: Array<CheckpointId> = []
        for (const [i, { durability, runtime }] of modes.entries()) {
          const { sessionId, turnId } = sessions[i]!
          const t = await time(async () => {
            const result = await runtime.runPromise(
              recordFileMutation({ sessionId, turnId, path, toolName: "Edit", before, after }),
            )
            if (!result.recorded) throw new Error(`checkpoint not recorded: ${result.warning.message}`)
            checkpoints.push(result.checkpoint.checkpointId)
          })
          if (measured) timings.record[durability].push(t)
          line.push(`record/${durability} ${t.toFixed(2)}`)
        }
        const tGit = await time(async () => {
          await git("add", "-A")
          await git("write-tree")
        })
        if (measured) timings.record.git.push(tGit)
        line.push(`git add+write-tree ${tGit.toFixed(1)}`)

        for (const [i, { durability, runtime }] of modes.entries()) {
          const { sessionId } = sessions[i]!
          const t = await time(() =>
            runtime.runPromise(rewindToCheckpoint({ sessionId, checkpointId: checkpoints[i]! })),
          )
          if ((await fsp.readFile(file, "utf8")) !== before) throw new Error(`rewind did not restore ${path}`)
          await fsp.writeFile(file, after)
          if (measured) timings.restore[durability].push(t)
          line.push(`restore/${durability} ${t.toFixed(2)}`)
        }
        const tCheckout = await time(() => git("checkout", initialTree, "--", path))
        if ((await fsp.readFile(file, "utf8")) !== before) throw new Error(`git did not restore ${path}`)
        if (measured) timings.restore.git.push(tCheckout)
        line.push(`git checkout ${tCheckout.toFixed(1)}`)
        log(`${measured ? "run" : "warm-up"} ${run + 1}/${total} (ms): ${line.join(", ")}`)
      }
      return {
        name: "checkpoints",
        workspace: { files: options.files, bytes },
        runs: options.runs,
        record: {
          fsync: compare(timings.record.fsync, timings.record.git, 20),
          atomic: compare(timings.record.atomic, timings.record.git, 20),
        },
        restore: {
          fsync: compare(timings.restore.fsync, timings.restore.git, 10),
          atomic: compare(timings.restore.atomic, timings.restore.git, 10),
        },
      }
    } finally {
      for (const { runtime } of modes) await runtime.dispose()
    }
  } finally {
    await fsp.rm(base, { recursive: true, force: true })
  }
}

const format = (label: string, c: Comparison) =>
  `${label.padEnd(17)} rewind ${c.rewindMedianMs.toFixed(2).padStart(8)} ms | git ${c.baselineMedianMs
    .toFixed(2)
    .padStart(
      8,
    )} ms | ${c.ratio.toFixed(1).padStart(6)}x faster (target >= ${c.target}x: ${c.met ? "met" : "NOT met"})`

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href
if (isMain) {
  const quick = process.env.BENCH_QUICK === "1"
  runCheckpointsBench(quick ? QUICK : FULL, (line) => console.error(line)).then(
    (result) => {
      console.log(
        `checkpoints (${result.workspace.files} files, ${(result.workspace.bytes / 1e6).toFixed(1)} MB, median of ${result.runs} runs)`,
      )
      console.log(format("record (fsync)", result.record.fsync))
      console.log(format("record (atomic)", result.record.atomic))
      console.log(format("restore (fsync)", result.restore.fsync))
      console.log(format("restore (atomic)", result.restore.atomic))
      console.log(JSON.stringify(result))
    },
    (error) => {
      console.error(error)
      process.exit(1)
    },
  )
}
