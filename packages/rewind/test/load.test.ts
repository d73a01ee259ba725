// Multi-process load (DESIGN §8): 4 Node processes run a seeded mix of appends, checkpointed writes,
// captures, rewinds and forks on one SQLite store file and one artifact directory, each in its own
// session and subdirectory and all in one shared session. Afterwards: every message the store
// acknowledged to any process is in its stream (no lost event), every fork child exists, `doctor`
// passes (no corrupt blob, no dangling reference, no incomplete operation), and every process ended
// before its bound (no deadlock). Throughput and error counts are printed.
// Short mode (10 s) in CI; REWIND_LOAD_SECONDS=60 for the full run; REWIND_LOAD_SEED replays a mix.
import { spawn } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import type { SessionId } from "@rewind/contracts"
import { SessionStore } from "@rewind/core"
import { Effect } from "effect"
import { openRewind } from "../src/index.js"
import { okValue } from "./okValue.js"
import { sandbox, value } from "./storeFixture.js"

const here = dirname(fileURLToPath(import.meta.url))
const WORKERS = 4
const SECONDS = Number(process.env.REWIND_LOAD_SECONDS ?? 10)
const SEED = Number(process.env.REWIND_LOAD_SEED ?? 20_261_130)
/** A process still running this long after its deadline is stuck: the test fails, it is killed. */
const GRACE_MS = 120_000

interface WorkerResult {
  readonly worker: string
  readonly sessionId: string
  readonly ops: Record<string, number>
  readonly conflicts: number
  readonly errors: Record<string, number>
  readonly refusals: Record<string, number>
  readonly acknowledged: ReadonlyArray<readonly [string, string]>
  readonly forks: ReadonlyArray<string>
  readonly elapsedMs: number
}

const runWorker = (args: ReadonlyArray<string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string; killed: boolean }>((resolve) => {
    const child = spawn(process.execPath, [join(here, "fixtures", "loadWorker.mjs"), ...args], { cwd: here })
    let stdout = ""
    let stderr = ""
    let killed = false
    child.stdout.on("data", (d) => {
      stdout += d
    })
    child.stderr.on("data", (d) => {
      stderr += d
    })
    const timer = setTimeout(
      () => {
        killed = true
        child.kill("SIGKILL")
      },
      SECONDS * 1000 + GRACE_MS,
    )
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr, killed })
    })
  })

const sum = (tables: ReadonlyArray<Record<string, number>>) => {
  const out: Record<string, number> = {}
  for (const t of tables) for (const [k, v] of Object.entries(t)) out[k] = (out[k] ?? 0) + v
  return out
}

describe("multi-process load on one SQLite store and one artifact directory", () => {
  it(`${WORKERS} processes for ${SECONDS} s lose no event, corrupt no blob and never deadlock`, async () => {
    const box = sandbox()
    const dir = join(box.base, "store")
    const setup = await openRewind({ workspaceRoot: box.root, dir })
    const commons = value(await setup.createSession({ title: "shared by every worker", cwd: box.root }))
    await setup.close()
    console.info(
      `[load] ${WORKERS} workers, ${SECONDS} s, seed=${SEED} (replay with REWIND_LOAD_SEED=${SEED})`,
    )

    const runs = await Promise.all(
      Array.from({ length: WORKERS }, (_, i) =>
        runWorker([box.root, dir, String(i), String(SEED + i), String(SECONDS * 1000), commons.id]),
      ),
    )
    for (const run of runs) {
      expect(run.killed, `a worker did not finish in time (deadlock?)\n${run.stderr}`).toBe(false)
      expect(run.code, run.stderr).toBe(0)
    }
    const results: Array<WorkerResult> = runs.map((r) => JSON.parse(r.stdout.trim().split("\n").at(-1)!))

    const rewind = await openRewind({ workspaceRoot: box.root, dir, create: false })
    const stored = await rewind.run(
      Effect.gen(function* () {
        const store = yield* SessionStore
        const sessions = yield* store.listSessions()
        const messages = new Map<string, Set<string>>()
        for (const s of sessions) {
          const ids = new Set<string>()
          for (const { event } of yield* store.read(s.sessionId as SessionId)) {
            if (event._tag === "MessageAppended") ids.add(event.message.id)
          }
          messages.set(s.sessionId, ids)
        }
        return messages
      }),
    )
    let acknowledged = 0
    for (const r of results) {
      for (const [sessionId, messageId] of r.acknowledged) {
        acknowledged++
        expect(
          stored.get(sessionId)?.has(messageId),
          `${messageId} of ${sessionId} was acknowledged and lost`,
        ).toBe(true)
      }
      for (const child of r.forks) expect(stored.has(child), `fork child ${child} is missing`).toBe(true)
    }
    const report = okValue(await rewind.doctor())
    expect(report.problems).toEqual([])
    await rewind.close()

    const ops = sum(results.map((r) => r.ops))
    const total = Object.values(ops).reduce((a, b) => a + b, 0)
    const seconds = Math.max(...results.map((r) => r.elapsedMs)) / 1000
    const errors = sum(results.map((r) => r.errors))
    const refusals = sum(results.map((r) => r.refusals))
    const conflicts = results.reduce((a, r) => a + r.conflicts, 0)
    console.info(
      `[load] ${total} operations in ${seconds.toFixed(1)} s = ${(total / seconds).toFixed(1)} ops/s; ${JSON.stringify(ops)}; ` +
        `${acknowledged} acknowledged messages all stored; ${results.reduce((a, r) => a + r.forks.length, 0)} forks; ` +
        `${report.artifacts.checked} blobs verified; conflicts retried=${conflicts}; errors=${JSON.stringify(errors)}; refusals=${JSON.stringify(refusals)}`,
    )
    // Typed errors are counted, not hidden; anything untyped is a defect.
    for (const kind of Object.keys(errors)) expect(kind.startsWith("untyped"), kind).toBe(false)
    expect(total).toBeGreaterThan(0)
  })
})
