// Crash test (DESIGN §7): a child process rewinds a multi-file turn, files and conversation, on the
// real fs + SQLite adapters and is SIGKILLed at varied moments: at every step exactly (before the
// rescue point is stored, before the intent, between file writes, after the writes and before the
// commit, between the commit and the completion, after the completion), and by the parent after a
// seeded number of reported steps or a seeded delay (which also lands inside a write or a commit).
// After each kill the stores are reopened, `recover()` resolves every interrupted operation
// (continue when the session recorded it, otherwise continue or roll back by a seeded choice), and
// then: the workspace holds exactly the complete before-state or the complete after-state (every
// file byte for byte, no stray file), the conversation agrees with the files, the SQLite store
// passes `integrity_check`, every blob verifies, and no operation is left incomplete.
//
// The child is bundled once (esbuild, better-sqlite3 left external) so that each run pays a Node
// start-up, not the resolution of hundreds of modules: the 50 runs fit in well under a minute.
// REWIND_CRASH_SEED replays a seed, REWIND_CRASH_RUNS runs more (or fewer) kills, and
// REWIND_CRASH_RUN=<i> runs only entry i of the printed plan.
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { FsArtifactStore, NodeWorkspace } from "@rewind/adapter-fs"
import { layerBackgroundTasks } from "@rewind/adapter-memory"
import { SqliteSessionStore } from "@rewind/adapter-sqlite"
import type { MessageId, OperationId, SessionId } from "@rewind/contracts"
import {
  ArtifactStore,
  activeBranch,
  IdGenerators,
  loadSession,
  OperationJournal,
  recover,
  resolveOperation,
  SessionStore,
} from "@rewind/core"
import { Chunk, Effect, FastCheck as fc, Layer, Stream } from "effect"
import { build } from "esbuild"

const here = path.dirname(fileURLToPath(import.meta.url))
const childSource = path.join(here, "fixtures", "crashRewind.mjs")

const SEED = Number(process.env.REWIND_CRASH_SEED ?? 20261130)
const RUNS = Number(process.env.REWIND_CRASH_RUNS ?? 50)
const ONLY = process.env.REWIND_CRASH_RUN === undefined ? undefined : Number(process.env.REWIND_CRASH_RUN)

type Tree = Record<string, string>

/** The workspace before the session. */
const INITIAL: Tree = {
  "a.txt": "alpha 0\n",
  "src/b.ts": "export const b = 0\n",
  "src/deep/c.md": "# c 0\n",
  "d.txt": "delta 0\n",
}
/** Two agent turns; the crash test rewinds the second (null deletes the file). */
const TURNS: ReadonlyArray<ReadonlyArray<readonly [string, string | null]>> = [
  [
    ["a.txt", "alpha 1\n"],
    ["src/b.ts", "export const b = 1\n"],
  ],
  [
    ["a.txt", "alpha 2\n"],
    ["src/b.ts", "export const b = 2\n"],
    ["a.txt", "alpha 3\n"],
    ["src/deep/c.md", null],
    ["d.txt", "delta 1\n"],
    ["new.txt", "created\n"],
    ["gen/out/e.txt", "generated\n"],
  ],
]
const apply = (tree: Tree, changes: ReadonlyArray<readonly [string, string | null]>): Tree => {
  const next = { ...tree }
  for (const [p, content] of changes) {
    if (content === null) delete next[p]
    else next[p] = content
  }
  return next
}
/** Before the rewind: both turns done. After it: the first turn only. */
const BEFORE = apply(apply(INITIAL, TURNS[0]!), TURNS[1]!)
const AFTER = apply(INITIAL, TURNS[0]!)

/**
 * The one empty directory a state may have: the agent's deletion of `src/deep/c.md` leaves it in
 * the before-state, and a rolled-back rewind may take it away with the file it deletes again (an
 * empty directory holds nobody's data). Any other empty directory is a stray.
 */
const MAY_BE_EMPTY = "src/deep/"

/**
 * Every file under `root` (hidden ones included) with its content; directories are structure, but
 * an empty one is an entry (`dir/`, `MAY_BE_EMPTY` aside), so one left behind by a resolved
 * operation (`gen/out/`, which the rewind's deletions empty) is a stray like a file.
 */
const readTree = (root: string): Tree => {
  const out: Tree = {}
  const walk = (dir: string) => {
    const entries = fs.readdirSync(path.join(root, dir), { withFileTypes: true })
    if (entries.length === 0 && dir !== "" && `${dir}/` !== MAY_BE_EMPTY) out[`${dir}/`] = "<empty directory>"
    for (const entry of entries) {
      const rel = dir === "" ? entry.name : `${dir}/${entry.name}`
      if (entry.isDirectory()) walk(rel)
      else if (entry.isFile()) out[rel] = fs.readFileSync(path.join(root, rel), "utf8")
      else out[rel] = `<${entry.isSymbolicLink() ? "symlink" : "special"}>`
    }
  }
  walk("")
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)))
}
const sorted = (t: Tree) => Object.entries(t).sort(([a], [b]) => (a < b ? -1 : 1))
const sameTree = (a: Tree, b: Tree) => JSON.stringify(sorted(a)) === JSON.stringify(sorted(b))

interface Dirs {
  readonly base: string
  readonly root: string
  readonly store: string
  readonly artifacts: string
}

const dirsOf = (base: string): Dirs => ({
  base,
  root: path.join(base, "ws"),
  store: path.join(base, "store.db"),
  artifacts: path.join(base, "artifacts"),
})

/** How a run is killed: by the child itself at an exact step, or by the parent. */
type Kill =
  | { readonly kind: "at_step"; readonly step: number }
  | { readonly kind: "after_steps"; readonly steps: number }
  | { readonly kind: "after_delay"; readonly millis: number }

interface ChildRun {
  readonly killed: boolean
  readonly stdout: string
  readonly stderr: string
  /** Steps the child announced. */
  readonly steps: ReadonlyArray<string>
  /** Milliseconds from `ready` to `done` (only for information; nothing asserts on it). */
  readonly busyMillis: number | undefined
}

const runChild = (script: string, args: ReadonlyArray<string>, env: Record<string, string>, kill?: Kill) =>
  Effect.async<ChildRun>((resume) => {
    const proc = spawn(process.execPath, [script, ...args], { env: { ...process.env, ...env } })
    let stdout = ""
    let stderr = ""
    let buffered = ""
    const steps: Array<string> = []
    let readyAt: number | undefined
    let busyMillis: number | undefined
    let timer: NodeJS.Timeout | undefined
    const killNow = () => proc.kill("SIGKILL")
    proc.stdout.on("data", (d: Buffer) => {
      stdout += d
      buffered += d
      let nl = buffered.indexOf("\n")
      while (nl >= 0) {
        const line = buffered.slice(0, nl)
        buffered = buffered.slice(nl + 1)
        nl = buffered.indexOf("\n")
        if (line === "ready") {
          readyAt = performance.now()
          if (kill?.kind === "after_delay") timer = setTimeout(killNow, kill.millis)
        } else if (line.startsWith("step ")) {
          steps.push(line.slice(line.indexOf(" ", 5) + 1))
          if (kill?.kind === "after_steps" && steps.length === kill.steps) killNow()
        } else if (line.startsWith("done ") && readyAt !== undefined) {
          busyMillis = performance.now() - readyAt
        }
      }
    })
    proc.stderr.on("data", (d: Buffer) => {
      stderr += d
    })
    proc.on("close", (_code, signal) => {
      if (timer !== undefined) clearTimeout(timer)
      resume(Effect.succeed({ killed: signal === "SIGKILL", stdout, stderr, steps, busyMillis }))
    })
    return Effect.sync(killNow)
  })

const layersFor = (dirs: Dirs) =>
  Layer.mergeAll(
    SqliteSessionStore.layer({ path: dirs.store }),
    FsArtifactStore.layer({ directory: dirs.artifacts }),
    NodeWorkspace.layer(dirs.root),
    layerBackgroundTasks,
    IdGenerators.layerRandom,
  )

/**
 * Reopens the stores, resolves every interrupted operation, and checks the stores and that the
 * conversation agrees with the files.
 */
const recoverAndCheck = (
  dirs: Dirs,
  session: { readonly sessionId: SessionId; readonly messageId: MessageId },
  branchBefore: ReadonlyArray<MessageId>,
  preferContinue: boolean,
  label: string,
) =>
  Effect.gen(function* () {
    const pending = yield* recover()
    const result = { pending: pending.length, recorded: 0, continued: 0, rolledBack: 0 }
    for (const op of pending) {
      expect(op.resolvable, `${label}: ${JSON.stringify(op.files)}`).toBe(true)
      // A recorded operation can only be continued; otherwise the seed decides.
      const resolution = op.recorded || preferContinue ? "continue" : "rollback"
      if (op.recorded) result.recorded++
      yield* resolveOperation(op.record.intent.operationId as OperationId, resolution)
      if (resolution === "continue") result.continued++
      else result.rolledBack++
    }
    expect(yield* recover(), label).toEqual([])

    // The stores' integrity.
    expect(yield* SqliteSessionStore.integrityCheck, label).toEqual({ ok: true, problems: [] })
    const artifacts = yield* ArtifactStore
    const journal = yield* OperationJournal
    const records = yield* journal.all()
    for (const record of records) {
      expect(record.status, label).not.toBe("pending")
      for (const f of record.intent.files) {
        for (const v of [f.rescue, f.planned]) if (v._tag === "present") yield* artifacts.get(v.hash)
      }
    }
    for (const blob of Chunk.toReadonlyArray(yield* Stream.runCollect(artifacts.list()))) {
      yield* artifacts.get(blob.hash)
    }

    // Files and conversation agree: the after-state is recorded once, with its cursor and redo entry.
    const tree = readTree(dirs.root)
    const state = yield* loadSession(session.sessionId)
    const events = (yield* (yield* SessionStore).read(session.sessionId)).map((e) => e.event)
    const applied = events.filter((e) => e._tag === "WorkspaceRewound" && e.outcome === "applied")
    const committed = records.filter((r) => r.status === "committed")
    if (sameTree(tree, AFTER)) {
      expect(applied, label).toHaveLength(1)
      expect(applied[0], label).toMatchObject({ scope: "both", targetMessageId: session.messageId })
      // The kept prefix, then only the model's notice of the restored files (filed on the new branch).
      const kept = branchBefore.slice(0, branchBefore.indexOf(session.messageId))
      const branch = activeBranch(state)
      expect(branch.slice(0, kept.length), label).toEqual(kept)
      expect(
        branch.slice(kept.length).map((id) => state.messages.get(id)?.role),
        label,
      ).toEqual(["system"])
      expect(
        committed.map((r) => r.intent.operationId),
        label,
      ).toEqual(applied.map((e) => (e as { operationId: string }).operationId))
      expect(yield* journal.redoStack(session.sessionId), label).toHaveLength(1)
      return { ...result, state: "after" as const }
    }
    expect(tree, `${label}: neither the before- nor the after-state`).toEqual(BEFORE)
    expect(applied, label).toHaveLength(0)
    expect(committed, label).toHaveLength(0)
    expect(activeBranch(state), label).toEqual(branchBefore)
    return { ...result, state: "before" as const }
  }).pipe(Effect.scoped, Effect.provide(layersFor(dirs)))

/** Bundles the child: its start-up then costs one file's parse, not a module graph's resolution. */
const bundleChild = (outDir: string) =>
  Effect.promise(async () => {
    const require = createRequire(import.meta.url)
    // Resolved from here, the native module is imported by absolute path from anywhere.
    const sqlite = require.resolve("better-sqlite3", { paths: [require.resolve("@rewind/adapter-sqlite")] })
    const outfile = path.join(outDir, "crashRewind.bundle.mjs")
    await build({
      entryPoints: [childSource],
      outfile,
      bundle: true,
      minify: true,
      platform: "node",
      format: "esm",
      target: "node20",
      logLevel: "error",
      plugins: [
        {
          name: "native-sqlite",
          setup: (b) => {
            b.onResolve({ filter: /^better-sqlite3$/ }, () => ({ path: sqlite, external: true }))
          },
        },
      ],
    })
    return outfile
  })

const copyTemplate = (template: Dirs, dirs: Dirs) => fs.cpSync(template.base, dirs.base, { recursive: true })

describe("crash recovery of an interrupted multi-file rewind (fs + SQLite, SIGKILL)", () => {
  it.live(
    `every kill leaves the complete before- or after-state after recover() (seed ${SEED})`,
    () =>
      Effect.gen(function* () {
        const started = performance.now()
        const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "rewind-crash-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(tmp, { recursive: true, force: true })))
        const child = yield* bundleChild(tmp)
        const env = { CRASH_TURNS: JSON.stringify({ turns: TURNS }) }

        // The template: the workspace and stores after both turns, made once and copied per run.
        const template = dirsOf(path.join(tmp, "template"))
        for (const [p, content] of Object.entries(INITIAL)) {
          fs.mkdirSync(path.dirname(path.join(template.root, p)), { recursive: true })
          fs.writeFileSync(path.join(template.root, p), content)
        }
        const setup = yield* runChild(
          child,
          ["setup", template.root, template.store, template.artifacts],
          env,
        )
        expect(setup.stderr).toBe("")
        const done = setup.stdout.split("\n").find((l) => l.startsWith("done "))!
        const session = JSON.parse(done.slice(5)) as { sessionId: SessionId; messageId: MessageId }
        expect(readTree(template.root)).toEqual(BEFORE)
        const branchBefore = yield* Effect.map(loadSession(session.sessionId), activeBranch).pipe(
          Effect.scoped,
          Effect.provide(layersFor(template)),
        )

        // A run without a kill: the steps of a complete rewind and the after-state.
        const dry = dirsOf(path.join(tmp, "dry"))
        copyTemplate(template, dry)
        const full = yield* runChild(
          child,
          ["rewind", dry.root, dry.store, dry.artifacts, session.sessionId, session.messageId, "0"],
          env,
        )
        expect(full.stderr).toBe("")
        expect(full.killed).toBe(false)
        expect(readTree(dry.root)).toEqual(AFTER)
        const steps = full.steps
        const busy = Math.max(20, Math.round(full.busyMillis ?? 200))

        // The plan: every step exactly once, then parent kills after a seeded number of steps or a
        // seeded delay (up to the length of a whole rewind), and a seeded resolution per run.
        const count = Math.max(RUNS, steps.length + 2)
        const stepDraws = fc.sample(fc.integer({ min: 1, max: steps.length }), { seed: SEED, numRuns: count })
        const delayDraws = fc.sample(fc.integer({ min: 0, max: busy }), { seed: SEED + 1, numRuns: count })
        const continues = fc.sample(fc.boolean(), { seed: SEED + 2, numRuns: count })
        const plan: Array<Kill> = steps.map((_, i) => ({ kind: "at_step", step: i + 1 }))
        for (let i = plan.length; i < count; i++) {
          plan.push(
            i % 2 === 0
              ? { kind: "after_steps", steps: stepDraws[i]! }
              : { kind: "after_delay", millis: delayDraws[i]! },
          )
        }
        console.log(
          `crash test: seed=${SEED} (replay: REWIND_CRASH_SEED=${SEED}, one run: REWIND_CRASH_RUN=<i>), ` +
            `${plan.length} runs, ${steps.length} steps per rewind: ${steps.map((s, i) => `${i + 1} ${s}`).join("; ")}`,
        )

        const tally = {
          before: 0,
          after: 0,
          killed: 0,
          interrupted: 0,
          recorded: 0,
          continued: 0,
          rolledBack: 0,
        }
        const time = { child: 0, recover: 0 }
        const byKind: Record<string, number> = {}
        for (const [i, kill] of plan.entries()) {
          if (ONLY !== undefined && i !== ONLY) continue
          const label = `run ${i} (${JSON.stringify(kill)}, ${continues[i] ? "continue" : "rollback"})`
          const dirs = dirsOf(path.join(tmp, `run-${i}`))
          copyTemplate(template, dirs)
          const childStarted = performance.now()
          const run = yield* runChild(
            child,
            [
              "rewind",
              dirs.root,
              dirs.store,
              dirs.artifacts,
              session.sessionId,
              session.messageId,
              String(kill.kind === "at_step" ? kill.step : 0),
            ],
            env,
            kill,
          )
          const recoverStarted = performance.now()
          time.child += recoverStarted - childStarted
          if (run.killed) tally.killed++
          else expect(run.stderr, label).toBe("")
          // An exact kill must land where it was aimed.
          if (kill.kind === "at_step") {
            expect(run.killed, label).toBe(true)
            expect(run.steps.length, label).toBe(kill.step)
          }
          const where = run.killed ? (run.steps.at(-1) ?? "before the first step") : "not killed"
          byKind[where] = (byKind[where] ?? 0) + 1
          const recovered = yield* recoverAndCheck(
            dirs,
            session,
            branchBefore,
            continues[i]!,
            `${label}, killed at ${where}`,
          )
          time.recover += performance.now() - recoverStarted
          tally[recovered.state]++
          tally.interrupted += recovered.pending
          tally.recorded += recovered.recorded
          tally.continued += recovered.continued
          tally.rolledBack += recovered.rolledBack
          fs.rmSync(dirs.base, { recursive: true, force: true })
        }
        const seconds = ((performance.now() - started) / 1000).toFixed(1)
        console.log(
          `crash test: ${JSON.stringify(tally)} in ${seconds} s (children ${(time.child / 1000).toFixed(1)} s, ` +
            `reopen + recover + checks ${(time.recover / 1000).toFixed(1)} s; a whole rewind ${busy} ms); ` +
            `last step seen per run: ${JSON.stringify(byKind)}`,
        )
        if (ONLY !== undefined) return
        expect(tally.before + tally.after).toBe(plan.length)
        // The exact kills interrupt operations that recovery must resolve both ways, and the
        // completed ones (killed after completion) need no recovery.
        expect(tally.killed).toBeGreaterThanOrEqual(steps.length)
        expect(tally.continued).toBeGreaterThan(0)
        expect(tally.rolledBack).toBeGreaterThan(0)
        expect(tally.recorded).toBeGreaterThan(0)
        expect(tally.before).toBeGreaterThan(0)
        expect(tally.after).toBeGreaterThan(0)
      }).pipe(Effect.scoped),
    // A ceiling for a heavily loaded machine (50 runs took ~250 s at load 25 on 2 cores), not a target.
    600_000,
  )
})
