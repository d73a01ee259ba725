// A session's tree read again (`currentTree`, what `previewMerge` and `diffSessions` read each side
// with) on the memory adapters: with the tree stat cache, a repeat reads only the files changed
// since, a file modified within the racy window is read every time until it is older, and random
// edits — including in-place edits that keep size, inode and a recent mtime — are always seen.
import { describe, expect, it } from "@effect/vitest"
import type { SessionId } from "@rewind/contracts"
import {
  cleanup,
  currentTree,
  diffSessions,
  hashContent,
  layerTreeStatCache,
  previewCleanup,
} from "@rewind/core"
import { Effect, FastCheck as fc, Layer, TestClock, TestContext } from "effect"
import { type Env, makeEnv, newSession, ROOT } from "../support/fileRewindEnv.js"

const SEED = 20261205

const reads = (env: Env, from: number) =>
  env.fs.accesses
    .slice(from)
    .filter((a) => a.operation === "read" && !a.path.endsWith("ignore"))
    .map((a) => a.path.slice(ROOT.length + 1))
    .sort()

const layer = (env: Env) => Layer.merge(env.layer(), layerTreeStatCache())

/** The files the tree's manifest holds, as path -> hash. */
const hashes = (sessionId: SessionId) =>
  Effect.map(currentTree(sessionId), (tree) => {
    const out: Record<string, string> = {}
    for (const [path, e] of tree.manifest) if (e.kind === "file") out[path] = e.hash
    return out
  })

/** What the tree holds on disk, as path -> hash. */
const truth = (env: Env) => {
  const out: Record<string, string> = {}
  for (const [path, text] of Object.entries(env.files())) out[path] = hashContent(text)
  return out
}

/** An edit in place at the clock's time: same inode; mtime and ctime set to `nowNs`. */
const editInPlace = (env: Env, path: string, text: string, nowNs: bigint) => {
  const node = env.fs.node(`${ROOT}/${path}`)
  if (node?.kind !== "file") throw new Error(`${path} is not a file`)
  node.content = new TextEncoder().encode(text)
  node.mtimeNs = nowNs
  node.ctimeNs = nowNs
}

describe("a session's tree read again", () => {
  it.effect("reads only the files changed since, and re-reads a racy one until it is older", () => {
    const env = makeEnv()
    for (let i = 0; i < 6; i++) env.fs.writeFile(`${ROOT}/src/f${i}.ts`, `file ${i}`)
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      yield* TestClock.adjust("10 seconds")
      let mark = env.fs.accesses.length
      expect(yield* hashes(sessionId)).toEqual(truth(env))
      expect(reads(env, mark)).toHaveLength(6)
      // The repeat: every file vouched for by the stat the last read recorded.
      mark = env.fs.accesses.length
      expect(yield* hashes(sessionId)).toEqual(truth(env))
      expect(reads(env, mark)).toEqual([])
      // A file replaced (new inode) is read, and only it.
      env.fs.writeFile(`${ROOT}/src/f2.ts`, "file 2, changed")
      mark = env.fs.accesses.length
      expect(yield* hashes(sessionId)).toEqual(truth(env))
      expect(reads(env, mark)).toEqual(["src/f2.ts"])
      // A file edited in place just now (same size) is read, and not vouched for next time either.
      const now = BigInt(10_000) * 1_000_000n
      editInPlace(env, "src/f4.ts", "FILE 4", now)
      for (let i = 0; i < 2; i++) {
        mark = env.fs.accesses.length
        expect(yield* hashes(sessionId)).toEqual(truth(env))
        expect(reads(env, mark)).toEqual(["src/f4.ts"])
      }
      // The same edit again within the same clock tick: the stat is the same, the content is not.
      editInPlace(env, "src/f4.ts", "file 4", now)
      mark = env.fs.accesses.length
      expect(yield* hashes(sessionId)).toEqual(truth(env))
      expect(reads(env, mark)).toEqual(["src/f4.ts"])
      // Older than the racy window: read once more, then vouched for.
      yield* TestClock.adjust("10 seconds")
      mark = env.fs.accesses.length
      yield* hashes(sessionId)
      expect(reads(env, mark)).toEqual(["src/f4.ts"])
      mark = env.fs.accesses.length
      expect(yield* hashes(sessionId)).toEqual(truth(env))
      expect(reads(env, mark)).toEqual([])
    }).pipe(Effect.provide(layer(env)))
  })

  it.effect("a repeat diff of two sessions reads only the changed file, once per session", () => {
    const env = makeEnv()
    for (let i = 0; i < 4; i++) env.fs.writeFile(`${ROOT}/f${i}.md`, `doc ${i}`)
    return Effect.gen(function* () {
      const a = yield* newSession
      const b = yield* newSession
      yield* TestClock.adjust("10 seconds")
      let mark = env.fs.accesses.length
      yield* diffSessions(a, b)
      expect(reads(env, mark)).toHaveLength(8)
      mark = env.fs.accesses.length
      expect((yield* diffSessions(a, b)).unchanged).toBe(4)
      expect(reads(env, mark)).toEqual([])
      env.fs.writeFile(`${ROOT}/f1.md`, "doc one")
      mark = env.fs.accesses.length
      expect((yield* diffSessions(a, b)).entries).toEqual([])
      expect(reads(env, mark)).toEqual(["f1.md", "f1.md"])
    }).pipe(Effect.provide(layer(env)))
  })

  it.effect("a GC sweep forgets the trees: their hashes name content no point holds", () => {
    const env = makeEnv()
    for (let i = 0; i < 3; i++) env.fs.writeFile(`${ROOT}/f${i}.md`, `doc ${i}`)
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      yield* TestClock.adjust("10 seconds")
      yield* hashes(sessionId)
      let mark = env.fs.accesses.length
      yield* hashes(sessionId)
      expect(reads(env, mark)).toEqual([])
      // A preview of the collection deletes nothing and forgets nothing.
      yield* previewCleanup({ graceMs: 0 })
      mark = env.fs.accesses.length
      yield* hashes(sessionId)
      expect(reads(env, mark)).toEqual([])
      yield* cleanup({ graceMs: 0 })
      mark = env.fs.accesses.length
      expect(yield* hashes(sessionId)).toEqual(truth(env))
      expect(reads(env, mark)).toHaveLength(3)
    }).pipe(Effect.provide(layer(env)))
  })

  it.effect("without the cache every read of the tree reads every file (what it replaces)", () => {
    const env = makeEnv()
    for (let i = 0; i < 3; i++) env.fs.writeFile(`${ROOT}/f${i}.md`, `doc ${i}`)
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      yield* TestClock.adjust("10 seconds")
      yield* hashes(sessionId)
      const mark = env.fs.accesses.length
      expect(yield* hashes(sessionId)).toEqual(truth(env))
      expect(reads(env, mark)).toHaveLength(3)
    }).pipe(Effect.provide(env.layer()))
  })
})

type Step =
  | { readonly kind: "later"; readonly ms: number }
  | { readonly kind: "replace"; readonly file: number; readonly text: string }
  | { readonly kind: "inPlace"; readonly file: number; readonly text: string }
  | { readonly kind: "remove"; readonly file: number }
  | { readonly kind: "read" }

const FILES = 5
const text = fc.constantFrom("aaaa", "bbbb", "cccc", "dd", "eeeeee")
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant("later" as const),
    ms: fc.constantFrom(0, 1, 500, 1_999, 2_000, 2_001, 5_000),
  }),
  fc.record({ kind: fc.constant("replace" as const), file: fc.nat(FILES - 1), text }),
  fc.record({ kind: fc.constant("inPlace" as const), file: fc.nat(FILES - 1), text }),
  fc.record({ kind: fc.constant("remove" as const), file: fc.nat(FILES - 1) }),
  fc.constant({ kind: "read" as const }),
)

/** The steps' edits, reading the tree after each step: every read must give the tree on disk. */
const runSteps = (steps: ReadonlyArray<Step>) => {
  const env = makeEnv()
  for (let i = 0; i < FILES; i++) env.fs.writeFile(`${ROOT}/d/f${i}.txt`, "init")
  return Effect.gen(function* () {
    const sessionId = yield* newSession
    let nowMs = 0
    for (const s of steps) {
      const path = `d/f${"file" in s ? s.file : 0}.txt`
      const present = env.fs.node(`${ROOT}/${path}`)?.kind === "file"
      if (s.kind === "later") {
        yield* TestClock.adjust(s.ms)
        nowMs += s.ms
      } else if (s.kind === "replace") env.fs.writeFile(`${ROOT}/${path}`, s.text)
      else if (s.kind === "inPlace" && present)
        // A coarse clock: the edit's mtime is the current second, so edits within one share it.
        editInPlace(env, path, s.text, BigInt(Math.floor(nowMs / 1000) * 1000) * 1_000_000n)
      else if (s.kind === "remove" && present) env.fs.remove(`${ROOT}/${path}`)
      const seen = yield* hashes(sessionId)
      expect(seen).toEqual(truth(env))
    }
  }).pipe(Effect.provide(layer(env)), Effect.provide(TestContext.TestContext))
}

describe("the tree stat cache under random edits", () => {
  it.effect("never reports a file with a hash other than its content's (seeded)", () =>
    Effect.gen(function* () {
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 24 }), async (steps) => {
            await Effect.runPromise(runSteps(steps))
          }),
          { numRuns: 60, seed: SEED },
        ),
      )
    }),
  )
})
