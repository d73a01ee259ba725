// A first capture of a tree larger than one read group, one store batch and the store pipeline's
// window (several batches in flight): the point must be exactly what reading and hashing every file
// one by one gives, and a failure in the middle must leave either a complete point or none. Its
// reads start while the scan still lists (`readDuringScan`), and the point is the one reading after
// the scan records.
import { describe, expect, it } from "@effect/vitest"
import type { SessionId, TurnId, WorkspacePath } from "@rewind/contracts"
import {
  ArtifactStore,
  CaptureShortcuts,
  capturePoint,
  hashContent,
  loadManifest,
  type ManifestEntry,
  readPointIndex,
  Workspace,
} from "@rewind/core"
import { Effect, Option, TestClock } from "effect"
import { type Env, makeEnv, newSession, ROOT } from "../support/fileRewindEnv.js"

const turn = (n: number) => `turn-${n}` as TurnId

/**
 * 5,000 files in 100 directories (five read groups and five store batches by count: more than the
 * three batches the pipeline keeps in flight beside the one being read), three of 3 MB (batches
 * cut by bytes too), empty files, executables, and copies of the same content.
 */
const plantTree = (env: Env) => {
  const paths: Array<string> = []
  for (let i = 0; i < 5_000; i++) {
    const path = `pkg${i % 100}/src/file${i}.ts`
    const size = (i * 7_919) % 1_500
    const content = i % 97 === 0 ? "a copy of the same content\n" : `// ${i}\n${"x".repeat(size)}`
    env.fs.writeFile(`${ROOT}/${path}`, i % 13 === 0 ? "" : content, i % 11 === 0 ? 0o755 : 0o644)
    paths.push(path)
  }
  for (let i = 0; i < 3; i++) {
    const path = `assets/big${i}.bin`
    const big = new Uint8Array(3 * 1024 * 1024)
    for (let j = 0; j < big.length; j += 4_096) big[j] = (i * 31 + j) % 251
    env.fs.writeFile(`${ROOT}/${path}`, big)
    paths.push(path)
  }
  return paths
}

/** The sequential reference: every file read through the workspace on its own and hashed here. */
const readOneByOne = (paths: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const reference = new Map<string, ManifestEntry>()
    for (const path of paths) {
      const read = yield* workspace.read(path as WorkspacePath)
      if (Option.isNone(read)) continue
      const { content, mode } = read.value
      reference.set(path, { kind: "file", hash: hashContent(content), mode, size: content.byteLength })
    }
    return reference
  })

const manifestOf = (sessionId: SessionId, n: number) =>
  Effect.gen(function* () {
    const outcome = yield* capturePoint(sessionId, turn(n))
    if (outcome._tag !== "Captured") return yield* Effect.dieMessage(outcome.reason)
    const manifest = yield* loadManifest(outcome.point.manifestHash)
    return { point: outcome.point, manifest: new Map<string, ManifestEntry>(manifest) }
  })

describe("first capture across many batches", () => {
  it.effect("gives the manifest a one-by-one read and hash gives, with every blob stored whole", () => {
    const env = makeEnv()
    const paths = plantTree(env)
    return Effect.gen(function* () {
      // Out of the racy window, so the stat cache is filled as it would be for real.
      yield* TestClock.adjust("1 minute")
      const sessionId = yield* newSession
      const reference = yield* readOneByOne(paths)
      const { point, manifest } = yield* manifestOf(sessionId, 1)
      expect(point.files).toBe(paths.length)
      expect(point.skipped).toEqual([])
      expect(manifest).toEqual(reference)
      const artifacts = yield* ArtifactStore
      const hashes = [...new Set([...reference.values()].map((e) => (e.kind === "file" ? e.hash : "")))]
      const blobs = yield* artifacts.getMany(hashes as never)
      expect(blobs.map((b, i) => hashContent(b) === hashes[i])).not.toContain(false)
      // Same contents, same point: a second session's first capture finds them all stored.
      const again = yield* manifestOf(yield* newSession, 1)
      expect(again.manifest).toEqual(reference)
      expect(again.point.manifestHash).toBe(point.manifestHash)
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("a store failure in the middle records no point; the next capture is whole", () => {
    const env = makeEnv()
    const paths = plantTree(env)
    // Puts go blob by blob through the fault book: the 3,500th is in the fourth batch, while
    // earlier ones may still be in flight and the next is being read.
    env.artifacts.control.inject({ operation: "put", nth: 3_500 })
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const failed = yield* capturePoint(sessionId, turn(1))
      expect(failed._tag).toBe("NotCaptured")
      if (failed._tag === "NotCaptured") expect(failed.reason).toContain("injected fault: put")
      expect(env.artifacts.control.injected()).toBe(1)
      expect((yield* readPointIndex(sessionId)).points).toEqual([])
      const { manifest } = yield* manifestOf(sessionId, 2)
      expect(manifest).toEqual(yield* readOneByOne(paths))
      expect((yield* readPointIndex(sessionId)).points).toHaveLength(1)
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("a file that cannot be read in the middle is reported, and every other file is captured", () => {
    const env = makeEnv()
    const paths = plantTree(env)
    const locked = paths[2_700]!
    env.workspace.control.inject({ operation: "read", target: locked, persistent: true })
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const { point, manifest } = yield* manifestOf(sessionId, 1)
      expect(point.skipped.map((s) => [s.path, s.reason])).toEqual([[locked, "unreadable"]])
      env.workspace.control.clear()
      const reference = yield* readOneByOne(paths.filter((p) => p !== locked))
      expect(manifest).toEqual(reference)
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("reads while it still lists, and records the point it records when it reads after", () =>
    Effect.gen(function* () {
      // 1,100 directories of 4 files: five waves of listings, each with a read group's worth of files.
      const plant = (env: Env) => {
        for (let d = 0; d < 1_100; d++)
          for (let f = 0; f < 4; f++) env.fs.writeFile(`${ROOT}/d${d}/f${f}.txt`, `${d}/${f}\n`)
      }
      const captureLogged = (readDuringScan: boolean) =>
        Effect.gen(function* () {
          const env = makeEnv()
          plant(env)
          const calls: Array<"list" | "read"> = []
          const inner = env.workspace.service
          const logged = {
            ...inner,
            scanDirectories: (dirs: Parameters<typeof inner.scanDirectories>[0]) =>
              Effect.tap(inner.scanDirectories(dirs), () => calls.push("list")),
            readMany: (paths: Parameters<typeof inner.readMany>[0]) =>
              Effect.tap(inner.readMany(paths), () => calls.push("read")),
            ...(inner.scanDirectoriesSealed === undefined
              ? {}
              : {
                  scanDirectoriesSealed: (
                    ...args: Parameters<NonNullable<typeof inner.scanDirectoriesSealed>>
                  ) => Effect.tap(inner.scanDirectoriesSealed!(...args), () => calls.push("list")),
                }),
          }
          const { point, manifest } = yield* Effect.gen(function* () {
            yield* TestClock.adjust("1 minute")
            return yield* manifestOf(yield* newSession, 1)
          }).pipe(
            Effect.provideService(Workspace, logged),
            Effect.provideService(CaptureShortcuts, {
              matchUnchangedManifest: true,
              scanSeal: true,
              readDuringScan,
            }),
            Effect.provide(env.layer()),
          )
          return { point, manifest, calls }
        })
      const during = yield* captureLogged(true)
      const after = yield* captureLogged(false)
      expect(during.calls.filter((c) => c === "list").length).toBeGreaterThanOrEqual(5)
      expect(during.calls.indexOf("read")).toBeLessThan(during.calls.lastIndexOf("list"))
      expect(after.calls.indexOf("read")).toBeGreaterThan(after.calls.lastIndexOf("list"))
      expect(during.manifest).toEqual(after.manifest)
      const { capturedAt: _a, ...duringPoint } = during.point
      const { capturedAt: _b, ...afterPoint } = after.point
      expect(duringPoint).toEqual(afterPoint)
      expect(during.point.files).toBe(4_400)
    }),
  )
})
