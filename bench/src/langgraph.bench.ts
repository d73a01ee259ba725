/**
 * The Rewind LangGraph saver (`@rewind/langgraph` on the embedded SQLite store) against LangGraph's
 * official `SqliteSaver` (`@langchain/langgraph-checkpoint-sqlite`), measured in the same rounds:
 *
 * - `put` + `getTuple` of a checkpoint with 10 channels (about 1 KB each), once where one channel
 *   changed since the previous checkpoint (a typical superstep) and once where all ten did;
 * - the store's size on disk after N checkpoints of one thread where one channel of ten changes
 *   each step (1,000 in a full run), each database checkpointed into its main file first.
 *
 * Both sides run on a file in WAL mode with `synchronous = NORMAL` (the Rewind store's default; the
 * official saver is set to it, since its own default, FULL, would flush every commit and make the
 * comparison one of durability settings). Both use LangGraph's default serializer.
 */
import { statSync } from "node:fs"
import { join } from "node:path"
import type { Checkpoint, CheckpointMetadata } from "@langchain/langgraph-checkpoint"
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite"
import { openSqliteSaver, type RewindCheckpointSaver } from "@rewind/langgraph"
import Database from "better-sqlite3"
import { single } from "./harness/stats.js"
import type { BenchCase, BenchContext, InProcessSampler } from "./harness/types.js"

const SHAPE = {
  full: { channels: 10, valueBytes: 1_000, sizeCheckpoints: 1_000 },
  quick: { channels: 10, valueBytes: 1_000, sizeCheckpoints: 50 },
} as const

/** Results are kept here so no timed call can be optimised away as dead code. */
let sink: unknown
const keep = (value: unknown): void => {
  sink = value
}
export const lastKept = () => sink

const words = "the graph ran a step and wrote its channel with the quick brown fox over the lazy dog "

/** A channel's value at a version: text of about `bytes` bytes, different for every version. */
const valueAt = (channel: number, version: number, bytes: number) =>
  `${channel}:${version}:${words.repeat(Math.ceil(bytes / words.length)).slice(0, bytes)}`

/** The checkpoints of one thread: step 0 sets every channel, each later step changes `changing` of them. */
const checkpointStream = (channels: number, bytes: number, changing: number) => {
  const versions = Array.from({ length: channels }, () => 1)
  let step = 0
  let id = 0
  return () => {
    const newVersions: Record<string, number> = {}
    if (step === 0) for (let c = 0; c < channels; c++) newVersions[`ch${c}`] = 1
    else
      for (let k = 0; k < changing; k++) {
        const c = (step + k) % channels
        versions[c] = versions[c]! + 1
        newVersions[`ch${c}`] = versions[c]!
      }
    const channel_values: Record<string, unknown> = {}
    const channel_versions: Record<string, number> = {}
    for (let c = 0; c < channels; c++) {
      channel_values[`ch${c}`] = valueAt(c, versions[c]!, bytes)
      channel_versions[`ch${c}`] = versions[c]!
    }
    const checkpoint: Checkpoint = {
      v: 4,
      // Time-ordered like uuid6, deterministic: fixed-width counter.
      id: `1f0c0000-0000-6000-8000-${String(id++).padStart(12, "0")}`,
      ts: new Date(Date.UTC(2026, 0, 1, 0, 0, step)).toISOString(),
      channel_values,
      channel_versions,
      versions_seen: { node: { ...channel_versions } },
    }
    const metadata: CheckpointMetadata = {
      source: step === 0 ? "input" : "loop",
      step: step - 1,
      parents: {},
    }
    step++
    return { checkpoint, metadata, newVersions }
  }
}

interface SaverSide {
  readonly put: (
    config: { configurable: Record<string, unknown> },
    c: ReturnType<ReturnType<typeof checkpointStream>>,
  ) => Promise<{ configurable?: Record<string, unknown> }>
  readonly saver: RewindCheckpointSaver | SqliteSaver
  readonly close: () => Promise<void>
}

const official = (file: string): SaverSide => {
  const db = new Database(file)
  db.pragma("journal_mode = WAL")
  db.pragma("synchronous = NORMAL")
  const saver = new SqliteSaver(db)
  return {
    saver,
    // Its put takes no newVersions: it keeps every channel value in each checkpoint row.
    put: (config, c) => saver.put(config, c.checkpoint, c.metadata),
    close: async () => {
      db.close()
    },
  }
}

const rewindSide = async (file: string): Promise<SaverSide> => {
  const saver = await openSqliteSaver({ path: file })
  return {
    saver,
    put: (config, c) => saver.put(config, c.checkpoint, c.metadata, c.newVersions),
    close: () => saver.close(),
  }
}

/** A sampler that puts the thread's next checkpoint and reads it back, one pair per iteration. */
const putGetSampler = (label: string, side: SaverSide, changing: number): InProcessSampler => {
  const next = checkpointStream(SHAPE.full.channels, SHAPE.full.valueBytes, changing)
  let config: { configurable: Record<string, unknown> } = {
    configurable: { thread_id: "bench", checkpoint_ns: "" },
  }
  return {
    kind: "in-process",
    label,
    fn: async () => {
      const stored = await side.put(config, next())
      config = { configurable: { ...stored.configurable } }
      const tuple = await side.saver.getTuple(config)
      if (tuple === undefined) throw new Error(`${label}: the checkpoint just put is not there`)
      keep(tuple)
    },
  }
}

const fileBytes = (file: string) => {
  // Move the WAL into the main file so both sides are measured the same way.
  const db = new Database(file)
  db.pragma("wal_checkpoint(TRUNCATE)")
  db.close()
  let total = 0
  for (const suffix of ["", "-wal", "-shm"]) {
    try {
      total += statSync(`${file}${suffix}`).size
    } catch {
      // absent: 0 bytes
    }
  }
  return total
}

const measurePutGet = async (ctx: BenchContext, changing: number) => {
  const dir = ctx.tempDir(`langgraph-put-${changing}`)
  const ours = await rewindSide(join(dir, "rewind.db"))
  const theirs = official(join(dir, "official.db"))
  try {
    await ctx.compare({
      series: `put + getTuple of a 10-channel checkpoint, ${changing} channel(s) changed`,
      subject: putGetSampler("RewindCheckpointSaver (SQLite store)", ours, changing),
      baseline: putGetSampler("official SqliteSaver", theirs, changing),
      notes: [
        `10 channels of ~${SHAPE.full.valueBytes} bytes; both on WAL with synchronous = NORMAL`,
        "one thread growing by one checkpoint per iteration on each side",
      ],
    })
  } finally {
    await ours.close()
    await theirs.close()
  }
}

const measureSize = async (ctx: BenchContext) => {
  const shape = SHAPE[ctx.mode]
  const dir = ctx.tempDir("langgraph-size")
  const sizes: Array<number> = []
  for (const open of [
    () => rewindSide(join(dir, "rewind.db")),
    async () => official(join(dir, "official.db")),
  ]) {
    const side = await open()
    const next = checkpointStream(shape.channels, shape.valueBytes, 1)
    let config: { configurable: Record<string, unknown> } = {
      configurable: { thread_id: "size", checkpoint_ns: "" },
    }
    try {
      for (let i = 0; i < shape.sizeCheckpoints; i++) {
        const stored = await side.put(config, next())
        config = { configurable: { ...stored.configurable } }
      }
    } finally {
      await side.close()
    }
    sizes.push(fileBytes(join(dir, sizes.length === 0 ? "rewind.db" : "official.db")))
  }
  const [ours, theirs] = sizes as [number, number]
  ctx.record({
    kind: "size",
    series: "store size after N checkpoints, one channel of ten changing per step",
    size: { value: shape.sizeCheckpoints, unit: "checkpoints" },
    unit: "bytes",
    subject: { label: "RewindCheckpointSaver (SQLite store)", stats: single(ours) },
    baseline: { label: "official SqliteSaver", stats: single(theirs), ratio: single(ours / theirs) },
    expectedGrowth: "change",
    notes: [
      `10 channels of ~${shape.valueBytes} bytes; file + WAL after a WAL checkpoint`,
      "Rewind stores each (channel, version) once; the official saver keeps every channel value in each checkpoint row",
    ],
  })
}

export const langgraph: BenchCase = {
  name: "langgraph",
  group: "store",
  description:
    "the Rewind LangGraph saver on the SQLite store against the official SqliteSaver: put + getTuple of a 10-channel checkpoint, and store size after N checkpoints",
  run: async (ctx) => {
    await measurePutGet(ctx, 1)
    await measurePutGet(ctx, 10)
    await measureSize(ctx)
  },
}
