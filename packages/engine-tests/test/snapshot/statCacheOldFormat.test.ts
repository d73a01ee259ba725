// A store written before the stat cache became binary (format 1: JSON, an array per entry) keeps
// working: its cache is read and vouches for unchanged files, the next capture stores it whole in
// the binary form, and the point is the one a capture without any cache (every file read) gives.
import { describe, expect, it } from "@effect/vitest"
import type { SessionId, TurnId, WorkspacePath } from "@rewind/contracts"
import {
  ArtifactStore,
  capturePoint,
  decodeStatCacheLayer,
  loadManifest,
  loadStatCacheLayers,
  pointIdFor,
  recordPoint,
  type StatCacheEntry,
} from "@rewind/core"
import { Effect, TestClock } from "effect"
import { makeEnv, newSession, ROOT } from "../support/fileRewindEnv.js"

const turn = (n: number) => `turn-${n}` as TurnId

const capture = (sessionId: SessionId, n: number) =>
  Effect.gen(function* () {
    yield* TestClock.adjust("10 seconds")
    const outcome = yield* capturePoint(sessionId, turn(n))
    if (outcome._tag !== "Captured") return yield* Effect.dieMessage(outcome.reason)
    return outcome.point
  })

/** The stat cache as format 1 stored it (`pointManifest.ts` before the binary form). */
const formatOne = (cache: ReadonlyMap<WorkspacePath, StatCacheEntry>, rules: string | undefined) =>
  new TextEncoder().encode(
    JSON.stringify({
      format: "rewind-stat-cache/1",
      ...(rules === undefined ? {} : { rules }),
      entries: [...cache.keys()].sort().map((path) => {
        const e = cache.get(path)!
        return [
          path,
          e.size,
          e.mtimeNs.toString(),
          e.inode.toString(),
          e.mode,
          e.hash,
          ...(e.ctimeNs === undefined ? [] : [e.ctimeNs.toString()]),
        ]
      }),
    }),
  )

describe("a stat cache in the JSON form of format 1", () => {
  it.effect("is read, vouches, is converted once, and the point is the one a full read gives", () => {
    const env = makeEnv()
    for (let i = 0; i < 30; i++) env.fs.writeFile(`${ROOT}/src/f${i}.txt`, `file ${i}`)
    return Effect.gen(function* () {
      const artifacts = yield* ArtifactStore
      const sessionId = yield* newSession
      const first = yield* capture(sessionId, 1)
      const binary = yield* loadStatCacheLayers(first.statCacheHash!)
      expect(binary.map.size).toBe(30)

      // The same point again, as an older Rewind stored it: its stat cache in JSON.
      const oldHash = yield* artifacts.put(formatOne(binary.map, binary.rules))
      expect(decodeStatCacheLayer(yield* artifacts.get(oldHash), 16)).toBeUndefined()
      yield* recordPoint(sessionId, {
        kind: first.kind,
        manifestHash: first.manifestHash,
        reusedManifest: first.reusedManifest,
        files: first.files,
        links: first.links,
        tombstones: first.tombstones,
        bytes: first.bytes,
        skipped: first.skipped,
        pointId: pointIdFor(sessionId, turn(2)),
        turnId: turn(2),
        statCacheHash: oldHash,
      })
      const old = yield* loadStatCacheLayers(oldHash)
      expect(old.map).toEqual(binary.map)
      expect(old.rules).toBe(binary.rules)

      env.fs.writeFile(`${ROOT}/src/f3.txt`, "changed")
      env.fs.remove(`${ROOT}/src/f7.txt`)
      env.fs.writeFile(`${ROOT}/src/new.txt`, "created")
      env.fs.accesses.length = 0
      const third = yield* capture(sessionId, 3)
      // Unchanged files were vouched for by the old cache: only the changed and new ones were read.
      const read = env.fs.accesses
        .filter((a) => a.operation === "read")
        .map((a) => a.path.slice(ROOT.length + 1))
      expect([...new Set(read)].sort()).toEqual(["src/f3.txt", "src/new.txt"])
      // Stored whole in the binary form (converted once), not as a delta over the JSON one.
      const converted = decodeStatCacheLayer(yield* artifacts.get(third.statCacheHash!), 16)
      expect(converted?.base).toBeUndefined()
      expect(converted?.entries.has("src/f7.txt" as WorkspacePath)).toBe(false)
      expect(converted?.entries.size).toBe(30)
      const after = yield* loadStatCacheLayers(third.statCacheHash!)
      expect(after.map.get("src/f1.txt" as WorkspacePath)).toEqual(old.map.get("src/f1.txt" as WorkspacePath))

      // The point is the one a capture with no cache at all gives (every file read), plus the
      // tombstone of the file the session had seen.
      const fresh = yield* newSession
      const full = yield* capture(fresh, 4)
      const expected = new Map(yield* loadManifest(full.manifestHash))
      expected.set("src/f7.txt" as WorkspacePath, { kind: "tombstone" })
      expect(yield* loadManifest(third.manifestHash)).toEqual(expected)
    }).pipe(Effect.provide(env.layer()))
  })
})
