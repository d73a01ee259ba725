// A path that changes kind between points: a symlinked directory replaced by a real one (a real
// repository does this when a linked package is vendored). The capture records the link as gone (a
// tombstone, as it does for files under a directory that became a link) and reports nothing left
// out; a restore to that point from the linked state takes the link away before writing beneath
// it (never through it), a directory standing where the point records a tombstone holds already,
// the diff shows the link deleted and the files added, and the redo reports the link it put back.
import { describe, expect, it } from "@effect/vitest"
import type { SessionId, TurnId } from "@rewind/contracts"
import { applyPointRestore, capturePoint, diffPoint, previewPointRestore, redo } from "@rewind/core"
import { Effect } from "effect"
import { makeEnv, newSession, ROOT } from "../support/fileRewindEnv.js"

const captured = (sessionId: SessionId, turn: string) =>
  Effect.gen(function* () {
    const outcome = yield* capturePoint(sessionId, turn as TurnId)
    if (outcome._tag !== "Captured") return yield* Effect.dieMessage(outcome.reason)
    return outcome
  })

describe("a symlinked directory that became a real one", () => {
  it.effect("is captured as gone, restored over the link without going through it, and redone", () => {
    const env = makeEnv()
    const kind = (path: string) => env.fs.node(`${ROOT}/${path}`)?.kind
    env.fs.writeFile(`${ROOT}/shared/t.txt`, "t")
    env.fs.symlink(`${ROOT}/lib/pkg`, "../shared")
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const linked = (yield* captured(sessionId, "turn-1")).point
      expect(linked.links).toBe(1)

      env.fs.remove(`${ROOT}/lib/pkg`)
      env.fs.writeFile(`${ROOT}/lib/pkg/f.txt`, "vendored")
      const vendored = (yield* captured(sessionId, "turn-2")).point
      expect(vendored.skipped).toEqual([])
      expect(vendored).toMatchObject({ files: 2, links: 0, tombstones: 1 })
      // A full scan over the same tree keeps the tombstone and reports nothing, as the live
      // engine's capture (which only looks at what changed) does.
      const again = (yield* captured(sessionId, "turn-2b")).point
      expect(again.skipped).toEqual([])
      expect(again).toMatchObject({ files: 2, links: 0, tombstones: 1 })

      // The diff against the linked point: the link is gone, the directory's file is new.
      const diff = yield* diffPoint(sessionId, linked.pointId)
      expect(diff.skipped).toEqual([])
      expect(diff.entries.map((e) => [e.path, e.change])).toEqual([
        ["lib/pkg", "deleted"],
        ["lib/pkg/f.txt", "added"],
      ])

      // Where the directory stands, the vendored point holds already: nothing to do.
      const same = yield* previewPointRestore(sessionId, vendored.pointId)
      expect(same.conflicts).toEqual([])
      expect(same.changes).toEqual([])

      // A shell put the link back; the vendored point is restored over it.
      env.fs.remove(`${ROOT}/lib/pkg`)
      env.fs.symlink(`${ROOT}/lib/pkg`, "../shared")
      const preview = yield* previewPointRestore(sessionId, vendored.pointId)
      expect(preview.conflicts).toEqual([])
      expect(preview.changes.map((c) => [c.path, c.action])).toEqual([
        ["lib/pkg", "delete"],
        ["lib/pkg/f.txt", "write"],
      ])
      const applied = yield* applyPointRestore(sessionId, vendored.pointId, preview.token!)
      expect(applied.event.files.map((f) => [f.path, f.action])).toEqual([
        ["lib/pkg", "deleted"],
        ["lib/pkg/f.txt", "written"],
      ])
      expect(kind("lib/pkg")).toBe("directory")
      // Nothing went through the link: its target holds what it held.
      expect(env.files()).toEqual({ "lib/pkg/f.txt": "vendored", "shared/t.txt": "t" })

      // The redo takes the file away and puts the link back, and says so.
      const undone = yield* redo(sessionId)
      expect(kind("lib/pkg")).toBe("symlink")
      expect(env.files()).toEqual({ "shared/t.txt": "t" })
      expect(undone.files.map((f) => [f.path, f.action])).toEqual([
        ["lib/pkg/f.txt", "deleted"],
        ["lib/pkg", "restored"],
      ])
      expect(env.outsideAccesses()).toEqual([])
    }).pipe(Effect.provide(env.layer()))
  })
})

describe("a redo's outcome", () => {
  it.effect("reports a file whose mode alone it put back as restored, not unchanged", () => {
    const env = makeEnv()
    env.fs.writeFile(`${ROOT}/run.sh`, "echo hi\n", 0o644)
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const plain = (yield* captured(sessionId, "turn-1")).point
      env.fs.writeFile(`${ROOT}/run.sh`, "echo hi\n", 0o755)
      yield* captured(sessionId, "turn-2")
      const preview = yield* previewPointRestore(sessionId, plain.pointId)
      yield* applyPointRestore(sessionId, plain.pointId, preview.token!)
      expect(env.fs.node(`${ROOT}/run.sh`)).toMatchObject({ mode: 0o644 })
      const undone = yield* redo(sessionId)
      expect(env.fs.node(`${ROOT}/run.sh`)).toMatchObject({ mode: 0o755 })
      expect(undone.files).toEqual([{ path: "run.sh", action: "restored" }])
    }).pipe(Effect.provide(env.layer()))
  })
})
