/**
 * Fork benchmark: forking a session of 10,000 messages (each with parts, every turn pinned) in one
 * commit, against the baseline of appending the same messages one by one, measured in the same run
 * on the same store. The store is a parameter (`runForkBenchmark({ storeLayer })`), so the same
 * measurement runs on any adapter; run directly, it uses the memory store.
 *
 *   node --import tsx bench/src/fork.bench.ts
 *   BENCH_FORK_STORE=sqlite (a store file in a temp dir), BENCH_FORK_MESSAGES, BENCH_FORK_ITERATIONS
 */
import { mkdtempSync, rmSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { MemorySessionStore } from "@rewind/adapter-memory"
import { SqliteSessionStore } from "@rewind/adapter-sqlite"
import {
  type CommandId,
  ForkBoundaryPinned,
  Message,
  MessageAppended,
  type MessageId,
  Part,
  PartAppended,
  type PartId,
  Session,
  SessionCreated,
  type SessionEvent,
  type SessionId,
  type TraceId,
  TurnCompleted,
  type TurnId,
  TurnStarted,
} from "@rewind/contracts"
import { forkAtMessage, IdGenerators, loadSession, SessionStore } from "@rewind/core"
import { Effect, Layer, ManagedRuntime } from "effect"
import { Bench } from "tinybench"

export interface ForkBenchOptions {
  readonly label: string
  readonly storeLayer: Layer.Layer<SessionStore, unknown>
  /** Messages in the parent (user and assistant alternate); default 10,000. */
  readonly messages?: number
  readonly iterations?: number
}

export interface ForkBenchReport {
  readonly label: string
  readonly messages: number
  readonly forkMedianMs: number
  readonly appendOneByOneMedianMs: number
  readonly loadParentMedianMs: number
  /**
   * Median CPU time (user + system) of the process per call: on a machine shared with other work,
   * wall time includes waiting for a core, CPU time does not.
   */
  readonly forkCpuMedianMs: number
  readonly appendOneByOneCpuMedianMs: number
  /** Fork time as a fraction of the one-by-one baseline. */
  readonly ratio: number
  /** The machine's 1-minute load average when the run ended: absolute times on a busy machine mislead. */
  readonly loadAverage: number
}

const CHUNK = 2_000

/** The parent's stream, written directly (host commands would reload the session per message). */
const parentEvents = (sessionId: SessionId, messages: number) => {
  const events: Array<SessionEvent> = [
    new SessionCreated({
      session: new Session({
        id: sessionId,
        rootTraceId: "trace_bench" as TraceId,
        kind: "main",
        title: "bench",
        cwd: "/bench",
        createdAt: 0,
      }),
    }),
  ]
  const messageEvents: Array<ReadonlyArray<SessionEvent>> = []
  let lastBoundary: MessageId | undefined
  for (let turn = 0; turn < messages / 2; turn++) {
    const turnId = `turn_${turn}` as TurnId
    const user = `u_${turn}` as MessageId
    const reply = `a_${turn}` as MessageId
    const message = (id: MessageId, role: "user" | "assistant") =>
      new MessageAppended({
        message: new Message({
          id,
          sessionId,
          turnId,
          role,
          status: "ok",
          visibility: "all",
          createdAt: turn,
        }),
      })
    const part = (id: string, messageId: MessageId, kind: "text" | "reasoning", text: string) =>
      new PartAppended({ part: new Part({ id: id as PartId, messageId, kind, text }) })
    const userGroup = [
      message(user, "user"),
      part(`pu_${turn}`, user, "text", `question ${turn}: ${"x".repeat(80)}`),
    ]
    const replyGroup = [
      message(reply, "assistant"),
      part(`pr_${turn}`, reply, "reasoning", `thinking about ${turn}`),
      part(`pa_${turn}`, reply, "text", `answer ${turn}: ${"y".repeat(200)}`),
    ]
    messageEvents.push(userGroup, replyGroup)
    events.push(
      ...userGroup,
      new TurnStarted({ turnId, userMessageId: user }),
      ...replyGroup,
      new ForkBoundaryPinned({
        messageId: reply,
        boundary: {
          turnId,
          historyRoundCount: turn + 1,
          orderedMessageIds: [user, reply],
          boundaryMessageId: reply,
        },
      }),
      new TurnCompleted({ turnId, status: "completed" }),
    )
    lastBoundary = reply
  }
  return { events, messageEvents, lastBoundary: lastBoundary! }
}

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

export const runForkBenchmark = async (options: ForkBenchOptions): Promise<ForkBenchReport> => {
  const messages = options.messages ?? 10_000
  const iterations = options.iterations ?? 10
  const runtime = ManagedRuntime.make(Layer.merge(options.storeLayer, IdGenerators.layerRandom))
  try {
    const parentId = "ses_bench_parent" as SessionId
    const parent = parentEvents(parentId, messages)
    await runtime.runPromise(
      Effect.gen(function* () {
        const store = yield* SessionStore
        for (let i = 0; i < parent.events.length; i += CHUNK) {
          yield* store.append({
            sessionId: parentId,
            expectedVersion: i,
            events: parent.events.slice(i, i + CHUNK),
            at: 0,
          })
        }
      }),
    )

    let n = 0
    const fork = () =>
      runtime.runPromise(
        forkAtMessage({
          sessionId: parentId,
          messageId: parent.lastBoundary,
          commandId: `bench-${n++}` as CommandId,
        }),
      )
    const check = await fork()
    if (check.copiedMessageCount !== messages) {
      throw new Error(`the fork copied ${check.copiedMessageCount} messages, expected ${messages}`)
    }

    // The baseline: the same messages (with their parts), one append per message, into a new stream.
    let b = 0
    const appendOneByOne = () =>
      runtime.runPromise(
        Effect.gen(function* () {
          const store = yield* SessionStore
          const sessionId = `ses_bench_baseline_${b++}` as SessionId
          let version = (yield* store.append({
            sessionId,
            expectedVersion: 0,
            events: [parent.events[0]!],
            at: 0,
          })).version
          for (const group of parent.messageEvents) {
            version = (yield* store.append({ sessionId, expectedVersion: version, events: group, at: 0 }))
              .version
          }
        }),
      )
    const loadParent = () => runtime.runPromise(loadSession(parentId))

    const cpu = new Map<string, Array<number>>()
    const withCpu = (name: string, fn: () => Promise<unknown>) => async () => {
      const start = process.cpuUsage()
      await fn()
      const used = process.cpuUsage(start)
      const samples = cpu.get(name) ?? []
      samples.push((used.user + used.system) / 1000)
      cpu.set(name, samples)
    }
    const bench = new Bench({ iterations, time: 0, warmupIterations: 1, warmupTime: 0 })
    bench
      .add("fork (one commit)", withCpu("fork", fork))
      .add("append one by one", withCpu("append", appendOneByOne))
      .add("load parent", loadParent)
    await bench.run()
    const medianOf = (name: string) => {
      const task = bench.getTask(name)
      const samples = task?.result?.latency.samples
      if (samples === undefined || samples.length === 0)
        throw new Error(`no samples for ${name}: ${String(task?.result?.error)}`)
      return median(samples)
    }
    const forkMedianMs = medianOf("fork (one commit)")
    const appendOneByOneMedianMs = medianOf("append one by one")
    return {
      label: options.label,
      messages,
      forkMedianMs,
      appendOneByOneMedianMs,
      loadParentMedianMs: medianOf("load parent"),
      // Warm-up calls are in the CPU samples too; the median keeps them from mattering.
      forkCpuMedianMs: median(cpu.get("fork") ?? [Number.NaN]),
      appendOneByOneCpuMedianMs: median(cpu.get("append") ?? [Number.NaN]),
      ratio: forkMedianMs / appendOneByOneMedianMs,
      loadAverage: loadavg()[0] ?? 0,
    }
  } finally {
    await runtime.dispose()
  }
}

export const formatForkReport = (r: ForkBenchReport, targetMs = 500) =>
  [
    `fork benchmark [${r.label}], ${r.messages} messages with parts`,
    `  fork (one commit):   median ${r.forkMedianMs.toFixed(1)} ms  (${r.forkMedianMs < targetMs ? "within" : "OVER"} the ${targetMs} ms target)`,
    `  append one by one:   median ${r.appendOneByOneMedianMs.toFixed(1)} ms  (baseline)`,
    `  ratio fork/baseline: ${r.ratio.toFixed(2)}`,
    `  CPU time per call:   fork ${r.forkCpuMedianMs.toFixed(1)} ms, append one by one ${r.appendOneByOneCpuMedianMs.toFixed(1)} ms (median)`,
    `  (load parent, part of every fork: median ${r.loadParentMedianMs.toFixed(1)} ms)`,
    `  (1-minute load average at the end of the run: ${r.loadAverage.toFixed(2)})`,
  ].join("\n")

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const messages = Number(process.env.BENCH_FORK_MESSAGES ?? 10_000)
  const iterations = Number(process.env.BENCH_FORK_ITERATIONS ?? 10)
  const sqlite = process.env.BENCH_FORK_STORE === "sqlite"
  const dir = sqlite ? mkdtempSync(join(tmpdir(), "rewind-fork-bench-")) : undefined
  const storeLayer =
    dir === undefined ? MemorySessionStore.layer : SqliteSessionStore.layer({ path: join(dir, "store.db") })
  runForkBenchmark({ label: sqlite ? "sqlite file" : "memory", storeLayer, messages, iterations })
    .then((report) => console.log(formatForkReport(report)))
    .catch((error) => {
      console.error(error)
      process.exitCode = 1
    })
    .finally(() => {
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
    })
}
