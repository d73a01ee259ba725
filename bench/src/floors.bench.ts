/**
 * What issue 23's missed cold-command targets leave room for, on the babel shape, measured in the
 * same rounds as the git baseline they are stated against (a cold `rewind capture` at most 1.0×
 * git's `add -A` + `write-tree` with ≤ 100 MB peak RSS; a store after the first capture at most
 * 0.15× git's). Each figure is one part of what a cold capture or the store cannot avoid today:
 *   - a Node process that does nothing (`node -e 0`);
 *   - the built bin's repeat capture of a one-file workspace: process start, loading the capture
 *     code, opening the store, one trivial capture — what every cold capture pays whatever the tree;
 *   - the fs adapter's native scanner alone over the tree in a fresh process: the listing every
 *     capture without a watcher makes, at today's scanner's cost (not a physical floor: git makes the
 *     same `readdir`s and `lstat`s);
 *   - the tree's distinct contents alone, each brotli-compressed on its own (files under 64 bytes
 *     as they are), against git's store: what any store keeping the tree's bytes holds before its
 *     index, manifest and stat cache.
 * The first three are processes, timed spawn to exit like the baseline; the second plus the third
 * less the first is what a cold capture of this design costs before it compares anything. The case
 * sets no target of its own.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { brotliCompressSync, constants } from "node:zlib"
import { NodeWorkspace } from "@rewind/adapter-fs"
import { SqliteArtifactStore } from "@rewind/adapter-sqlite"
import { hashContent } from "@rewind/core"
import { timeProcess } from "./harness/processTiming.js"
import { single } from "./harness/stats.js"
import type { BenchCase, ProcessSampler } from "./harness/types.js"
import { budgetFor, capturedPoint, cli, describeShape, prepared, SHAPE_CASE, sizeOf } from "./shapes.bench.js"

const SCAN_ONLY = fileURLToPath(new URL("./floors/nativeScanOnly.cjs", import.meta.url))
/** As the SQLite store keeps them: smaller files are stored as they are. */
const STORED_AS_IS_BELOW = SqliteArtifactStore.STORED_AS_IS_BELOW_BYTES
/**
 * Quality 5: on this content (random letters) within 0.3% of qualities 7 and 9, and below the
 * store's own 3 (measured 6 December 2026, qualities 5, 7, 9 and 3: 0.605, 0.603, 0.607 and 0.609
 * of the raw bytes; 7 took 2.7 times as long as 5, and 9 140 times).
 */
const FLOOR_QUALITY = 5

export const shapeFloor: BenchCase = {
  name: "shape-floor",
  ...SHAPE_CASE,
  description:
    "babel shape: the floor under a cold capture (node start, the bin on a one-file workspace, the native scan alone) and under the store (contents alone), against shadow git",
  run: async (ctx) => {
    // The module the adapter itself loaded (its own search: the package's build), or why none.
    const native = NodeWorkspace.implementation.nativeModule
    if (!native.loaded) {
      throw new Error(
        `the fs adapter's native scanner did not load (${native.reason}): there is no scanner to measure`,
      )
    }
    const dirscan = native.path
    const ws = await prepared(ctx)
    const size = sizeOf(ws)
    const git = ctx.shadowGit(ws.root)
    try {
      git.snapshot()
      const baseline: ProcessSampler = {
        kind: "process",
        label: "git add -A + write-tree",
        run: (probe) => git.snapshot({ measureMemory: probe.measureMemory }),
      }
      const notes = [describeShape(ws), "one of three parts of a cold capture's floor: see the case's header"]
      const common = { size, baseline, budget: budgetFor(ctx) }

      await ctx.compare({
        ...common,
        series: "babel shape floor: a Node process that does nothing (node -e 0)",
        subject: {
          kind: "process",
          label: "node -e 0",
          run: (probe) => timeProcess(process.execPath, ["-e", "0"], { measureMemory: probe.measureMemory }),
        },
        expectedGrowth: "constant",
        notes,
      })

      const tiny = ctx.tempDir("one-file-workspace")
      writeFileSync(join(tiny, "README.md"), "one file\n")
      const tinyStore = ctx.tempDir("one-file-store")
      cli({ root: tiny }, tinyStore, "init")
      capturedPoint(cli({ root: tiny }, tinyStore, "capture").stdout)
      await ctx.compare({
        ...common,
        series: "babel shape floor: the rewind bin's repeat capture of a one-file workspace",
        subject: {
          kind: "process",
          label: "rewind capture (1 file)",
          run: (probe) => {
            const run = cli({ root: tiny }, tinyStore, "capture", [], probe.measureMemory)
            capturedPoint(run.stdout)
            return run
          },
        },
        expectedGrowth: "constant",
        notes: [...notes, "REWIND_CAPTURE_SERVER=off, as the cold CLI figures run"],
      })

      await ctx.compare({
        ...common,
        series: "babel shape floor: the native scanner alone over the tree (a fresh node process)",
        subject: {
          kind: "process",
          label: "node nativeScanOnly.cjs",
          run: (probe) => {
            const run = timeProcess(process.execPath, [SCAN_ONLY, dirscan, ws.root], {
              measureMemory: probe.measureMemory,
            })
            const listed = Number(run.stdout.trim())
            if (!(listed >= ws.tally.files)) {
              throw new Error(
                `the native scan listed ${listed} entries, fewer than the tree's ${ws.tally.files} files`,
              )
            }
            return run
          },
        },
        expectedGrowth: "whole",
        notes: [
          ...notes,
          `the module the fs adapter loads (${dirscan}), 256 directories per call, with the adapter's thread count`,
        ],
      })

      // Each distinct content once, as a content-addressed store (and git) keeps it: the copies of
      // a 4× tree hold the same contents.
      let stored = 0
      const seen = new Set<string>()
      for (const file of ws.files) {
        const bytes = readFileSync(join(ws.root, file.path))
        const key = hashContent(bytes)
        if (seen.has(key)) continue
        seen.add(key)
        stored +=
          bytes.byteLength < STORED_AS_IS_BELOW
            ? bytes.byteLength
            : brotliCompressSync(bytes, {
                params: {
                  [constants.BROTLI_PARAM_QUALITY]: FLOOR_QUALITY,
                  [constants.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength,
                },
              }).byteLength
      }
      const gitBytes = git.diskUsageBytes()
      ctx.record({
        kind: "size",
        series: "babel shape floor: the distinct contents alone, each brotli-compressed",
        size,
        unit: "bytes",
        subject: { label: `sum of brotli quality ${FLOOR_QUALITY} sizes`, stats: single(stored) },
        baseline: {
          label: "du of the shadow git dir + index",
          stats: single(gitBytes),
          ratio: single(stored / gitBytes),
        },
        expectedGrowth: "whole",
        notes: [
          describeShape(ws),
          `each distinct content once; files under ${STORED_AS_IS_BELOW} bytes counted as they are; no hash, index, manifest or stat cache, no page slack`,
        ],
      })
    } finally {
      git.remove()
    }
  },
}
