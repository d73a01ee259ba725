/**
 * Test helpers for the reliability suites: temp directories (under the OS temp dir, removed after
 * each test), a workspace root with a sentinel directory beside it (anything appearing there was
 * written outside the root), an agent turn through the facade, and a snapshot of a tree.
 */
import * as fs from "node:fs"
import { join, relative } from "node:path"
import { expect } from "@effect/vitest"
import type { Rewind } from "../src/index.js"
import { okValue } from "./okValue.js"
import { tempDir as makeTempDir } from "./tempDirs.js"

/** A temp directory removed after the test (test/tempDirs.ts). */
export const tempDir = (prefix = "rewind-reliability-"): string => makeTempDir(prefix)

export interface Sandbox {
  readonly base: string
  /** The workspace root. */
  readonly root: string
  /** A directory next to the root that nothing may ever write into. */
  readonly sentinel: string
}

export const sandbox = (): Sandbox => {
  const base = tempDir()
  const root = join(base, "ws")
  const sentinel = join(base, "outside")
  fs.mkdirSync(root)
  fs.mkdirSync(sentinel)
  fs.writeFileSync(join(sentinel, "secret.txt"), "do not touch")
  return { base, root, sentinel }
}

/**
 * Makes the embedded default keep blobs as files under `<root>/.rewind/artifacts` (the layout a
 * store made before blobs moved into SQLite keeps), for tests that damage blob files on disk.
 */
export const withBlobFiles = (box: Sandbox): Sandbox => {
  fs.mkdirSync(join(box.root, ".rewind", "artifacts"), { recursive: true })
  return box
}

/** Every file under `dir` with its content (symlinks as `-> target`), for before/after comparison. */
export const treeOf = (dir: string): Record<string, string> => {
  const out: Record<string, string> = {}
  const walk = (d: string) => {
    for (const name of fs.readdirSync(d)) {
      const p = join(d, name)
      const s = fs.lstatSync(p)
      if (s.isSymbolicLink()) out[relative(dir, p)] = `-> ${fs.readlinkSync(p)}`
      else if (s.isDirectory()) walk(p)
      else out[relative(dir, p)] = fs.readFileSync(p, "latin1")
    }
  }
  walk(dir)
  return out
}

/** Asserts the sentinel directory holds exactly what `sandbox()` put there. */
export const expectSentinelUntouched = (box: Sandbox) =>
  expect(treeOf(box.sentinel)).toEqual({ "secret.txt": "do not touch" })

export const value = <A>(
  o: { ok: true; value: A } | { ok: false; refusal: { kind: string; message: string } },
): A => {
  if (!o.ok) throw new Error(`refused: ${o.refusal.kind}: ${o.refusal.message}`)
  return o.value
}

type Sid = Parameters<Rewind["transcript"]>[0]

/** One agent turn that writes `path` (through the real filesystem) and records the checkpoint. */
export const agentTurn = async (rewind: Rewind, sessionId: string, path: string, content: string | null) => {
  const sid = sessionId as Sid
  const { messageId, turnId } = value(await rewind.appendUserMessage(sid, { text: `write ${path}` }))
  const file = join(rewind.workspaceRoot, path)
  const before = fs.existsSync(file) ? new Uint8Array(fs.readFileSync(file)) : null
  if (content === null) fs.rmSync(file, { force: true })
  else {
    fs.mkdirSync(join(file, ".."), { recursive: true })
    fs.writeFileSync(file, content)
  }
  const recorded = okValue(
    await rewind.recordFileMutation({
      sessionId: sid,
      turnId,
      path,
      toolName: "write",
      before,
      after: content,
    }),
  )
  expect(recorded.recorded).toBe(true)
  value(await rewind.appendReply(sid, { turnId, parts: [{ kind: "text", text: `wrote ${path}` }] }))
  value(await rewind.completeTurnWithBoundary(sid, turnId))
  return { messageId, turnId }
}

/** Every blob file under an FsArtifactStore directory. */
export const blobFiles = (artifacts: string): Array<string> => {
  const objects = join(artifacts, "objects")
  const out: Array<string> = []
  for (const shard of fs.readdirSync(objects)) {
    for (const name of fs.readdirSync(join(objects, shard))) out.push(join(objects, shard, name))
  }
  return out
}

export const blobPath = (artifacts: string, hash: string) =>
  join(artifacts, "objects", hash.slice(0, 2), hash.slice(2))

/**
 * Seed and run count for a fuzz target: one fixed default seed for the whole suite (so a CI run is
 * reproducible), `REWIND_FUZZ_SEED` to replay another, `REWIND_FUZZ_SCALE` to multiply every
 * target's run count (a full run uses 10). Printed so a failure can be replayed.
 */
export const DEFAULT_FUZZ_SEED = 20_261_130

export const fuzzParameters = (name: string, defaultRuns: number) => {
  const seedText = process.env.REWIND_FUZZ_SEED
  const scaleText = process.env.REWIND_FUZZ_SCALE
  const seed = seedText === undefined || seedText === "" ? DEFAULT_FUZZ_SEED : Number.parseInt(seedText, 10)
  const scale = scaleText === undefined || scaleText === "" ? 1 : Number(scaleText)
  if (!Number.isFinite(seed) || !Number.isFinite(scale) || scale <= 0) {
    throw new Error("REWIND_FUZZ_SEED must be an integer and REWIND_FUZZ_SCALE a positive number")
  }
  const numRuns = Math.max(1, Math.round(defaultRuns * scale))
  console.info(`[fuzz] ${name}: seed=${seed} runs=${numRuns} (replay with REWIND_FUZZ_SEED=${seed})`)
  return { seed, numRuns }
}

/** Figures a fuzz target records (cases, duration, outcomes); printed at the end of its test. */
export const fuzzTally = (name: string) => {
  const started = performance.now()
  const outcomes = new Map<string, number>()
  return {
    count: (outcome: string) => outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1),
    report: () => {
      const cases = [...outcomes.values()].reduce((a, b) => a + b, 0)
      const seconds = (performance.now() - started) / 1000
      console.info(
        `[fuzz] ${name}: ${cases} cases in ${seconds.toFixed(1)} s; ${[...outcomes.entries()]
          .sort()
          .map(([k, v]) => `${k}=${v}`)
          .join(", ")}`,
      )
      return { cases, seconds, outcomes }
    },
  }
}
