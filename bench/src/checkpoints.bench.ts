/**
 * Checkpoint benchmark: what one tool-level checkpoint costs against a shadow-git checkpoint of the
 * same workspace, and what restoring one file costs against `git checkout <tree> -- <file>`, on the
 * shared generated workspace (1,000 and 10,000 files in full mode, 100,000 with
 * BENCH_WORKSPACE_100K=1; 10,000 files are about 100 MB).
 *
 * Each iteration edits one ~10 KB file (three regions, about a tenth of its lines, rewritten: the
 * common shape of a Write/Edit) and times:
 *   record:  `recordFileMutation` (fs artifact store, memory session store) against
 *            `git add -A` + `git write-tree` in a shadow repository, spawned as processes;
 *   restore: `rewindToCheckpoint` (Node workspace) against `git checkout <tree> -- <file>`.
 * Rewind is measured with three stores, each in the same rounds as git:
 *   `sqlite`: the embedded default — events, blobs and the operation journal in one SQLite file
 *     (WAL, synchronous NORMAL: a commit survives a process crash; the WAL keeps blobs ordered
 *     before the event that uses them), restored files written atomically (temp + rename) without
 *     fsync, as the embedded default does under NORMAL;
 *   `sqlite-full`: the same with synchronous FULL (every commit flushed: survives a power cut) and
 *     restored files flushed with fsync, as the embedded default does under FULL;
 *   `fs-fsync`: the previous default for blobs, one file per blob with temp + fsync + rename and a
 *     directory fsync, beside a memory session store (kept as the "before" reference).
 */
import { join } from "node:path"
import { FsArtifactStore, NodeWorkspace } from "@rewind/adapter-fs"
import { MemoryOperationJournal, MemorySessionStore } from "@rewind/adapter-memory"
import { SqliteArtifactStore, SqliteSessionStore } from "@rewind/adapter-sqlite"
import type { CheckpointId, SessionId, TurnId } from "@rewind/contracts"
import {
  appendUserMessage,
  createSession,
  hashContent,
  IdGenerators,
  layerSessionStateCache,
  recordFileMutation,
  rewindToCheckpoint,
} from "@rewind/core"
import { Effect, Layer, ManagedRuntime } from "effect"
import { changeRestoreLimit } from "./baselines/changeLimits.js"
import { engineWorkspaceSizes } from "./harness/options.js"
import type { BenchCase, BenchContext } from "./harness/types.js"
import type { BenchWorkspace } from "./workspace/benchWorkspace.js"
import { pickDistinct } from "./workspace/mutations.js"
import { makeRng } from "./workspace/prng.js"

/** Edited files are drawn from the generated files of about this size (bytes). */
const EDITED_FILE_SIZE = [9_000, 12_000] as const
/** How many distinct files the iterations cycle through. */
const EDITED_FILES = 200

/**
 * The edit: the whole file written back with three regions (about a tenth of its lines) rewritten.
 * (The diff is the part of a checkpoint whose cost grows with how scattered the changes are: with
 * every other line changed it is several milliseconds on its own.)
 */
const editOf = (text: string, round: number): string => {
  const lines = text.split("\n")
  const starts = [0.2, 0.5, 0.8].map((f) => Math.floor(lines.length * f))
  const span = Math.max(1, Math.floor(lines.length / 30))
  return lines
    .map((line, i) =>
      starts.some((s) => i >= s && i < s + span) && line.length > 0
        ? `${line} // rewritten in round ${round}`
        : line,
    )
    .join("\n")
}

interface Edit {
  readonly path: string
  readonly before: string
  readonly after: string
}

/** Hands out one edit per call, cycling through ~10 KB files of the workspace. */
const editor = (ws: BenchWorkspace, seed: number) => {
  const sized = ws.files.filter((f) => f.size >= EDITED_FILE_SIZE[0] && f.size <= EDITED_FILE_SIZE[1])
  const candidates = sized.length > 0 ? sized : ws.files
  const pool = pickDistinct(candidates, Math.min(EDITED_FILES, candidates.length), makeRng(seed))
  let round = 0
  return {
    meanBytes: pool.reduce((sum, f) => sum + f.size, 0) / pool.length,
    /** Writes the next edit to its file (the tool's own write, never timed) and returns it. */
    next: (): Edit => {
      const path = pool[round % pool.length]!.path
      const before = ws.original(path).toString("utf8")
      const after = editOf(before, round++)
      ws.rewrite(path, after)
      return { path, before, after }
    },
  }
}

type Durability = "sqlite" | "sqlite-full" | "fs-fsync"

const storesFor = (ctx: BenchContext, durability: Durability) => {
  if (durability === "fs-fsync") {
    return Layer.mergeAll(
      MemorySessionStore.layer,
      FsArtifactStore.layer({ directory: ctx.tempDir("artifacts-fs"), durability: "fsync" }),
      MemoryOperationJournal.layer,
    )
  }
  return SqliteArtifactStore.layer.pipe(
    Layer.provideMerge(
      SqliteSessionStore.layer({
        path: join(ctx.tempDir(`store-${durability}`), "rewind.db"),
        synchronous: durability === "sqlite-full" ? "FULL" : "NORMAL",
      }),
    ),
  )
}

const rewindSide = async (ctx: BenchContext, ws: BenchWorkspace, durability: Durability) => {
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(
      storesFor(ctx, durability),
      NodeWorkspace.layer(ws.root, { durability: durability === "sqlite" ? "atomic" : "fsync" }),
      IdGenerators.layerRandom,
      // As the embedded default: session states are cached between commands.
      layerSessionStateCache(),
    ),
  )
  const { sessionId, turnId } = await runtime.runPromise(
    Effect.gen(function* () {
      const session = yield* createSession({ title: "bench", cwd: ws.root })
      const user = yield* appendUserMessage(session.id, { text: "edit many files" })
      return { sessionId: session.id as SessionId, turnId: user.turnId as TurnId }
    }),
  )
  const record = async (edit: Edit): Promise<CheckpointId> => {
    const result = await runtime.runPromise(
      recordFileMutation({
        sessionId,
        turnId,
        path: edit.path,
        toolName: "Edit",
        before: edit.before,
        after: edit.after,
      }),
    )
    if (!result.recorded) throw new Error(`checkpoint not recorded: ${result.warning.message}`)
    return result.checkpoint.checkpointId
  }
  const rewind = (checkpointId: CheckpointId) =>
    runtime.runPromise(rewindToCheckpoint({ sessionId, checkpointId }))
  return { durability, record, rewind, dispose: () => runtime.dispose() }
}

export const checkpoints: BenchCase = {
  name: "checkpoints",
  group: "workspace",
  description:
    "recordFileMutation of a ~10 KB edit vs shadow git add -A + write-tree, and rewindToCheckpoint of that file vs git checkout",
  // A curve over the workspace size: the cost should follow the one edited file, not the tree.
  sizes: (sizes, mode) => (mode === "quick" ? [sizes.changeCurveFiles] : engineWorkspaceSizes(sizes, mode)),
  sizeUnit: "files",
  run: async (ctx) => {
    const ws = ctx.workspace(ctx.size!)
    const git = ctx.shadowGit(ws.root)
    const pristineTree = git.snapshot().tree
    const edits = editor(ws, ctx.seed)
    const notes = [`edits of ${(edits.meanBytes / 1024).toFixed(1)} KB files on average`]
    // The limits use one file of the edited kind: its generated bytes and an edit of them.
    const sampleFile =
      ws.files.find((f) => f.size >= EDITED_FILE_SIZE[0] && f.size <= EDITED_FILE_SIZE[1]) ?? ws.files[0]!
    const sampleEdit = {
      path: sampleFile.path,
      after: editOf(ws.original(sampleFile.path).toString("utf8"), -1),
    }
    const restored = (edit: Edit) => {
      if (ws.differing([edit.path]).length > 0) throw new Error(`${edit.path} was not restored`)
    }

    const sides = [
      await rewindSide(ctx, ws, "sqlite"),
      await rewindSide(ctx, ws, "sqlite-full"),
      await rewindSide(ctx, ws, "fs-fsync"),
    ]
    try {
      for (const side of sides) {
        let edit: Edit | undefined
        let checkpoint: CheckpointId | undefined
        await ctx.compare({
          series: `checkpoint of one ~10 KB edit (${side.durability} store)`,
          subject: {
            kind: "in-process",
            label: `recordFileMutation (${side.durability})`,
            beforeEach: () => {
              edit = edits.next()
            },
            fn: () => side.record(edit!),
            // Put the file back, so git's next snapshot sees only its own edit.
            afterEach: () => ws.rewrite(edit!.path, edit!.before),
          },
          baseline: {
            kind: "process",
            label: "git add -A + write-tree",
            beforeEach: () => {
              edit = edits.next()
            },
            run: (probe) => git.snapshot({ measureMemory: probe.measureMemory }),
            // Untimed: the file and its index entry back to the first snapshot.
            afterEach: () => {
              git.restorePaths(pristineTree, [edit!.path])
            },
          },
          limit: {
            kind: "in-process",
            label: "read and hash the edited file's before and after",
            fn: () => {
              hashContent(ws.original(sampleEdit.path))
              hashContent(new TextEncoder().encode(sampleEdit.after))
            },
          },
          expectedGrowth: "change",
          notes: [
            ...notes,
            "target: at least 20× faster than git (ratio at most 0.05); limit: hash the file's two versions",
          ],
        })

        await ctx.compare({
          series: `restore one file from a checkpoint (${side.durability} store)`,
          subject: {
            kind: "in-process",
            label: `rewindToCheckpoint (${side.durability})`,
            beforeEach: async () => {
              edit = edits.next()
              checkpoint = await side.record(edit)
            },
            fn: () => side.rewind(checkpoint!),
            afterEach: () => restored(edit!),
          },
          baseline: {
            kind: "process",
            label: "git checkout <tree> -- <file>",
            beforeEach: () => {
              edit = edits.next()
            },
            run: (probe) =>
              git.restorePaths(pristineTree, [edit!.path], { measureMemory: probe.measureMemory }),
            afterEach: () => restored(edit!),
          },
          limit: changeRestoreLimit(ctx, ws, [sampleFile]),
          expectedGrowth: "change",
          notes: [
            ...notes,
            "target: at least 10× faster than git (ratio at most 0.1); limit: replace the file",
          ],
        })
      }
    } finally {
      for (const side of sides) await side.dispose()
    }
  },
}
