// capturePoint, write intents and restoreToPoint on the memory adapters: scope rules, skip
// reasons, the stat cache and its racy rule, tombstones, idempotency, and restore refusals.
import { describe, expect, it } from "@effect/vitest"
import type { PointCaptured, SessionId, TurnId } from "@rewind/contracts"
import {
  ArtifactStore,
  applyPointRestore,
  type CaptureOptions,
  capturePoint,
  cleanup,
  declareWriteIntent,
  loadManifest,
  pointIdFor,
  previewCleanup,
  previewPointRestore,
  readPointIndex,
  snapshotStatus,
} from "@rewind/core"
import { refusalOf } from "@rewind/testkit"
import { Effect, TestClock } from "effect"
import { type Env, makeEnv, newSession, OUTSIDE, ROOT } from "../support/fileRewindEnv.js"

const turn = (n: number) => `turn-${n}` as TurnId

const capture = (sessionId: SessionId, n: number, options?: CaptureOptions) =>
  Effect.gen(function* () {
    const outcome = yield* capturePoint(sessionId, turn(n), options)
    if (outcome._tag !== "Captured") return yield* Effect.dieMessage(outcome.reason)
    return outcome
  })

const entries = (point: PointCaptured) =>
  Effect.map(loadManifest(point.manifestHash), (m) => Object.fromEntries([...m].map(([p, e]) => [p, e.kind])))

const reads = (env: Env, from: number) =>
  env.fs.accesses
    .slice(from)
    .filter((a) => a.operation === "read" && !a.path.endsWith("ignore"))
    .map((a) => a.path.slice(ROOT.length + 1))

describe("capturePoint scope", () => {
  it.effect("applies ignore files at every level, the skip list, caps, and records links as links", () => {
    const env = makeEnv()
    const w = (p: string, c: string) => env.fs.writeFile(`${ROOT}/${p}`, c)
    w(".gitignore", "*.log\nbuild/\n")
    w("src/.gitignore", "gen.ts\n")
    w(".rewindignore", "secret.env\n")
    w("src/app.ts", "app")
    w("src/gen.ts", "generated")
    w("gen.ts", "root gen is not ignored by src/.gitignore")
    w("debug.log", "log")
    w("build/out.js", "out")
    w("secret.env", "KEY=1")
    w("node_modules/x/index.js", "dep")
    w(".git/HEAD", "ref")
    w("vendor/lib/.git/HEAD", "nested repository")
    w("vendor/lib/code.c", "int main;")
    w("big.bin", "x".repeat(200))
    env.fs.fifo(`${ROOT}/pipe`)
    env.fs.symlink(`${ROOT}/out-link`, OUTSIDE)
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const { point } = yield* capture(sessionId, 1, { settings: { maxFileBytes: 100 } })
      expect(yield* entries(point)).toEqual({
        ".gitignore": "file",
        ".rewindignore": "file",
        "gen.ts": "file",
        "out-link": "link",
        "src/.gitignore": "file",
        "src/app.ts": "file",
      })
      expect(point.skipped.map((s) => [s.path, s.reason])).toEqual(
        expect.arrayContaining([
          ["big.bin", "over_size_limit"],
          ["pipe", "not_a_regular_file"],
          // Left out by the skip list and as a nested repository: reported once per directory
          // (issue 20 item 11: never silent); `.git` itself is protected, not a gap.
          ["node_modules", "skipped_directory"],
          ["vendor/lib", "skipped_directory"],
        ]),
      )
      expect(point.skipped).toHaveLength(4)
      const manifest = yield* loadManifest(point.manifestHash)
      expect(manifest.get("out-link" as never)).toEqual({ kind: "link", target: OUTSIDE })
      // Nothing outside the root, and nothing inside a skipped tree, was ever touched.
      expect(env.outsideAccesses()).toEqual([])
      expect(
        env.fs.accesses.some((a) => a.path.includes("node_modules") || /\/\.git(\/|$)/.test(a.path)),
      ).toBe(false)
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("a spent file-count or time budget is reported, never silent", () => {
    const env = makeEnv()
    for (const d of ["a", "b", "c"]) env.fs.writeFile(`${ROOT}/${d}/f.txt`, d)
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const byCount = yield* capture(sessionId, 1, { settings: { maxFiles: 1 } })
      expect(byCount.point.skipped.filter((s) => s.reason === "budget").length).toBeGreaterThan(0)
      expect(byCount.point.files).toBeLessThan(3)
      const byTime = yield* capture(sessionId, 2, { settings: { timeBudgetMs: -1 } })
      expect(byTime.point.skipped.map((s) => [s.path, s.reason])).toEqual([[".", "budget"]])
    }).pipe(Effect.provide(env.layer()))
  })
})

describe("capturePoint identity and reuse", () => {
  it.effect("is idempotent per (session, turn), and reuses the manifest of an unchanged workspace", () => {
    const env = makeEnv()
    env.fs.writeFile(`${ROOT}/a.txt`, "a")
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const first = yield* capture(sessionId, 1)
      const again = yield* capture(sessionId, 1)
      expect(again.existing).toBe(true)
      expect(again.point.pointId).toBe(first.point.pointId)
      const second = yield* capture(sessionId, 2)
      expect(second.point.reusedManifest).toBe(true)
      expect(second.point.manifestHash).toBe(first.point.manifestHash)
      expect((yield* readPointIndex(sessionId)).points).toHaveLength(2)
      // Another session (a fork) gets its own id for the same turn.
      expect(pointIdFor("other" as SessionId, turn(1))).not.toBe(first.point.pointId)
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("a capture that cannot run reports why and records no point", () => {
    const env = makeEnv()
    env.workspace.control.inject({ operation: "scanDirectory", target: ".", persistent: true })
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const outcome = yield* capturePoint(sessionId, turn(1))
      expect(outcome._tag).toBe("NotCaptured")
      if (outcome._tag === "NotCaptured") expect(outcome.reason).toContain("injected fault")
      expect((yield* readPointIndex(sessionId)).points).toHaveLength(0)
      const missing = yield* capturePoint("nobody" as SessionId, turn(1))
      expect(missing._tag).toBe("NotCaptured")
    }).pipe(Effect.provide(env.layer()))
  })
})

describe("stat cache", () => {
  it.effect("skips reading unchanged files, but re-reads a racy one", () => {
    const env = makeEnv()
    env.fs.writeFile(`${ROOT}/old.txt`, "old")
    env.fs.writeFile(`${ROOT}/new.txt`, "new")
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      // At time 0 both files (mtime 0) are racy: hashed, not cached.
      yield* capture(sessionId, 1)
      let mark = env.fs.accesses.length
      yield* capture(sessionId, 2)
      expect(reads(env, mark).sort()).toEqual(["new.txt", "old.txt"])
      yield* TestClock.adjust("10 seconds")
      mark = env.fs.accesses.length
      yield* capture(sessionId, 3)
      expect(reads(env, mark).sort()).toEqual(["new.txt", "old.txt"])
      // Now cached: nothing is read again.
      mark = env.fs.accesses.length
      yield* capture(sessionId, 4)
      expect(reads(env, mark)).toEqual([])
      // A file rewritten (new inode, new mtime) is read again, and only it.
      env.fs.writeFile(`${ROOT}/new.txt`, "newer")
      mark = env.fs.accesses.length
      const fifth = yield* capture(sessionId, 5)
      expect(reads(env, mark)).toEqual(["new.txt"])
      expect(fifth.point.reusedManifest).toBe(false)
    }).pipe(Effect.provide(env.layer()))
  })
})

describe("capture reads", () => {
  it.effect(
    "reads a directory's files in bulk: each directory on the way is probed once, and only the first file",
    () => {
      const env = makeEnv()
      for (let i = 0; i < 40; i++) env.fs.writeFile(`${ROOT}/src/lib/f${i}.ts`, `file ${i}`)
      return Effect.gen(function* () {
        const sessionId = yield* newSession
        const mark = env.fs.accesses.length
        const first = yield* capture(sessionId, 1)
        expect(first.point.files).toBe(40)
        const probes = env.fs.accesses
          .slice(mark)
          .filter((a) => a.operation === "probe")
          .map((a) => a.path.slice(ROOT.length + 1))
        const count = (path: string) => probes.filter((p) => p === path).length
        // Once per bulk call, however many files sit below: the scan lists a level per call (src is
        // walked through for the listings of src and of src/lib), and the 40 reads are one call.
        expect(count("src")).toBe(3)
        expect(count("src/lib")).toBe(2)
        // The first read walks the directories; the other 39 open their file straight away.
        expect(probes.filter((p) => p.startsWith("src/lib/"))).toHaveLength(1)
        expect(reads(env, mark)).toHaveLength(40)
      }).pipe(Effect.provide(env.layer()))
    },
  )
})

describe("capture stores", () => {
  it.effect("stores up to three batches at once while it reads on, and no more", () => {
    const env = makeEnv()
    // 5,000 files: five batches of at most 1,024.
    for (let i = 0; i < 5_000; i++) env.fs.writeFile(`${ROOT}/d${i % 50}/f${i}.txt`, `file ${i}`)
    let inFlight = 0
    let most = 0
    let batches = 0
    const inner = env.artifacts.service
    // A slow store: each batch takes many turns of the scheduler, so the reads get ahead of it.
    const slow = {
      ...inner,
      putMany: (contents: ReadonlyArray<Uint8Array>) =>
        Effect.gen(function* () {
          batches++
          most = Math.max(most, ++inFlight)
          for (let i = 0; i < 200; i++) yield* Effect.yieldNow()
          const hashes = yield* inner.putMany(contents)
          inFlight--
          return hashes
        }),
    }
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const first = yield* capture(sessionId, 1)
      expect(first.point.files).toBe(5_000)
      expect(batches).toBeGreaterThanOrEqual(5)
      expect(most).toBe(3)
      expect(inFlight).toBe(0)
    }).pipe(Effect.provideService(ArtifactStore, slow), Effect.provide(env.layer()))
  })
})

describe("tombstones", () => {
  it.effect("a deleted tracked file is a tombstone; an unreadable one keeps its entry", () => {
    const env = makeEnv()
    env.fs.writeFile(`${ROOT}/gone.txt`, "g")
    env.fs.writeFile(`${ROOT}/locked.txt`, "l")
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const first = yield* capture(sessionId, 1)
      env.fs.remove(`${ROOT}/gone.txt`)
      env.fs.writeFile(`${ROOT}/locked.txt`, "changed but unreadable")
      env.workspace.control.inject({ operation: "read", target: "locked.txt", persistent: true })
      const second = yield* capture(sessionId, 2)
      const before = yield* loadManifest(first.point.manifestHash)
      const after = yield* loadManifest(second.point.manifestHash)
      expect(after.get("gone.txt" as never)).toEqual({ kind: "tombstone" })
      expect(after.get("locked.txt" as never)).toEqual(before.get("locked.txt" as never))
      expect(second.point.skipped.map((s) => [s.path, s.reason])).toEqual([["locked.txt", "unreadable"]])
      expect(second.point.tombstones).toBe(1)
    }).pipe(Effect.provide(env.layer()))
  })
})

describe("write intents", () => {
  it.effect("stores pre-images (unreadable is not absent) and tracks the paths from then on", () => {
    const env = makeEnv()
    env.fs.writeFile(`${ROOT}/.gitignore`, "*.tmp\n")
    env.fs.writeFile(`${ROOT}/a.tmp`, "declared, then ignored")
    env.fs.writeFile(`${ROOT}/b.txt`, "unreadable")
    env.workspace.control.inject({ operation: "read", target: "b.txt" })
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      // An ignored path cannot be declared (the protection policy: it would never be written back).
      const refused = yield* refusalOf(declareWriteIntent(sessionId, turn(1), ["a.tmp", "b.txt"]))
      expect(refused.kind).toBe("unsafe_files")
      env.fs.writeFile(`${ROOT}/.gitignore`, "*.log\n")
      const intent = yield* declareWriteIntent(sessionId, turn(1), ["a.tmp", "b.txt", "c.txt"])
      expect(intent.entries.map((e) => [e.path, e.preImage.state])).toEqual([
        ["a.tmp", "file"],
        ["b.txt", "unreadable"],
        ["c.txt", "absent"],
      ])
      const { point } = yield* capture(sessionId, 1)
      const manifest = yield* entries(point)
      expect(manifest["a.tmp"]).toBe("file")
      expect(manifest["c.txt"]).toBe("tombstone")
      expect((yield* refusalOf(declareWriteIntent(sessionId, turn(1), ["../x"]))).kind).toBe("invalid_input")
    }).pipe(Effect.provide(env.layer()))
  })
})

describe("restoreToPoint refusals", () => {
  it.effect("refuses when the workspace changed after the preview, and when something is in the way", () => {
    const env = makeEnv()
    env.fs.writeFile(`${ROOT}/a.txt`, "v1")
    env.fs.writeFile(`${ROOT}/d`, "file that becomes a directory")
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const { point } = yield* capture(sessionId, 1)
      env.fs.writeFile(`${ROOT}/a.txt`, "v2")
      const preview = yield* previewPointRestore(sessionId, point.pointId)
      expect(preview.changes.map((c) => [c.path, c.action])).toEqual([["a.txt", "write"]])
      env.fs.writeFile(`${ROOT}/a.txt`, "v3")
      const changed = yield* refusalOf(applyPointRestore(sessionId, point.pointId, preview.token!))
      expect(changed.kind).toBe("conflict")
      expect(env.text("a.txt")).toBe("v3")
      // The token is spent either way.
      const reused = yield* refusalOf(applyPointRestore(sessionId, point.pointId, preview.token!))
      expect(reused.kind).toBe("token_used")
      // A directory where the point has a file, holding what no restore could put back (an empty
      // directory: no point records one), stays in the way.
      env.fs.remove(`${ROOT}/d`)
      env.fs.writeFile(`${ROOT}/d/inner.txt`, "x")
      env.fs.mkdirp(`${ROOT}/d/empty`)
      const blocked = yield* previewPointRestore(sessionId, point.pointId)
      expect(blocked.canApply).toBe(false)
      expect(blocked.token).toBeUndefined()
      expect(blocked.conflicts.map((c) => [c.path, c.reason])).toEqual([["d", "not_a_regular_file"]])
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("a failed apply removes the directories it created (issue 20 item 8)", () => {
    const env = makeEnv()
    env.fs.writeFile(`${ROOT}/new/deep/a.txt`, "a1")
    env.fs.writeFile(`${ROOT}/z.txt`, "z1")
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const { point } = yield* capture(sessionId, 1)
      env.fs.remove(`${ROOT}/new`)
      env.fs.writeFile(`${ROOT}/z.txt`, "z2")
      const preview = yield* previewPointRestore(sessionId, point.pointId)
      expect(preview.changes.map((c) => c.path)).toEqual(["new/deep/a.txt", "z.txt"])
      // The first write creates new/ and new/deep/; the second fails.
      env.workspace.control.inject({ operation: "write", target: "z.txt" })
      const failed = yield* refusalOf(applyPointRestore(sessionId, point.pointId, preview.token!))
      expect(failed.kind).toBe("unavailable")
      expect(env.fs.node(`${ROOT}/new`)).toBeUndefined()
      expect(env.text("z.txt")).toBe("z2")
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("a write that fails part-way leaves the workspace as it was", () => {
    const env = makeEnv()
    env.fs.writeFile(`${ROOT}/a.txt`, "a1")
    env.fs.writeFile(`${ROOT}/b.txt`, "b1")
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const { point } = yield* capture(sessionId, 1)
      env.fs.writeFile(`${ROOT}/a.txt`, "a2")
      env.fs.writeFile(`${ROOT}/b.txt`, "b2")
      const before = env.files()
      const preview = yield* previewPointRestore(sessionId, point.pointId)
      env.workspace.control.inject({ operation: "write", target: "b.txt" })
      const failed = yield* refusalOf(applyPointRestore(sessionId, point.pointId, preview.token!))
      expect(failed.kind).toBe("unavailable")
      expect(env.files()).toEqual(before)
    }).pipe(Effect.provide(env.layer()))
  })
})

describe("restoreToPoint reads", () => {
  it.effect(
    "an apply reads each changed file twice (its check and the writer's) and rescues what it read",
    () => {
      const env = makeEnv()
      env.fs.writeFile(`${ROOT}/a.txt`, "a1")
      env.fs.writeFile(`${ROOT}/b.txt`, "b1")
      env.fs.writeFile(`${ROOT}/same.txt`, "s")
      return Effect.gen(function* () {
        const sessionId = yield* newSession
        const { point } = yield* capture(sessionId, 1)
        env.fs.writeFile(`${ROOT}/a.txt`, "a2")
        env.fs.remove(`${ROOT}/b.txt`)
        const preview = yield* previewPointRestore(sessionId, point.pointId)
        const mark = env.fs.accesses.length
        const applied = yield* applyPointRestore(sessionId, point.pointId, preview.token!)
        const counts = new Map<string, number>()
        for (const path of reads(env, mark)) counts.set(path, (counts.get(path) ?? 0) + 1)
        // same.txt is read by the check alone (the stat cache cannot vouch for a file this young); a
        // missing file is no read.
        expect(Object.fromEntries(counts)).toEqual({ "a.txt": 2, "same.txt": 1 })
        expect(env.files()).toEqual({ "a.txt": "a1", "b.txt": "b1", "same.txt": "s" })
        // The rescue point holds what the restore replaced: a2, and b.txt's absence.
        const rescue = yield* loadManifest(
          (yield* readPointIndex(sessionId)).points.find((p) => p.pointId === applied.rescuePointId)!
            .manifestHash,
        )
        const a = rescue.get("a.txt" as never)
        expect(
          a?.kind === "file" && new TextDecoder().decode(yield* (yield* ArtifactStore).get(a.hash)),
        ).toBe("a2")
        expect(rescue.get("b.txt" as never)).toEqual({ kind: "tombstone" })
        expect(rescue.has("same.txt" as never)).toBe(false)
      }).pipe(Effect.provide(env.layer()))
    },
  )
})

describe("cleanup and status", () => {
  it.effect("an unreadable root stops the sweep; the grace window keeps young blobs; status reports", () => {
    const env = makeEnv()
    env.fs.writeFile(`${ROOT}/a.txt`, "a1")
    env.fs.writeFile(`${ROOT}/big.bin`, "x".repeat(50))
    return Effect.gen(function* () {
      const artifacts = yield* ArtifactStore
      const sessionId = yield* newSession
      const first = yield* capture(sessionId, 1, { settings: { maxFileBytes: 10 } })
      env.fs.writeFile(`${ROOT}/a.txt`, "a2")
      yield* capture(sessionId, 2, { settings: { maxFileBytes: 10 } })
      const orphan = yield* artifacts.put(new TextEncoder().encode("nobody refers to me"))
      // Everything is young (stored at time 0): nothing goes.
      const young = yield* previewCleanup({ graceMs: 1000 })
      expect(young.deleted).toEqual([])
      expect(young.keptYoung).toBeGreaterThan(0)
      yield* TestClock.adjust("1 hour")
      const dry = yield* previewCleanup()
      expect(dry.deleted).toContain(orphan)
      expect(yield* artifacts.has(orphan)).toBe(true)
      // A manifest that cannot be read: nothing at all is deleted.
      env.artifacts.control.inject({ operation: "get", target: first.point.manifestHash, persistent: true })
      const stopped = yield* cleanup()
      expect(stopped.swept).toBe(false)
      expect(stopped.deleted).toEqual([])
      expect(yield* artifacts.has(orphan)).toBe(true)
      env.artifacts.control.clear()
      // Keeping one point releases the first point's content ("a1") but not its manifest.
      const swept = yield* cleanup({ retention: { keepLastPoints: 1 } })
      expect(swept.swept).toBe(true)
      expect(swept.releasedPoints).toEqual([first.point.pointId])
      expect(swept.deleted).toContain(orphan)
      expect(yield* artifacts.has(first.point.manifestHash)).toBe(true)
      const status = yield* snapshotStatus
      expect(status.pointsPerSession).toEqual([{ sessionId, points: 2 }])
      expect(status.unprotected.map((u) => [u.path, u.reason])).toEqual([["big.bin", "over_size_limit"]])
      expect(status.indexBytes).toBeGreaterThan(0)
    }).pipe(Effect.provide(env.layer()))
  })
})
