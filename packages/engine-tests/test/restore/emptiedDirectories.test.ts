// A point restore that deletes files removes the directories those deletions left empty (as git's
// checkout does), deepest first, and nothing else: a directory that still holds anything stays with
// its ancestors, an empty directory the restore did not empty stays, and a redo makes them again.
import { describe, expect, it } from "@effect/vitest"
import type { SessionId, TurnId } from "@rewind/contracts"
import { applyPointRestore, capturePoint, previewPointRestore, redo } from "@rewind/core"
import { Effect } from "effect"
import { makeEnv, newSession, ROOT } from "../support/fileRewindEnv.js"

const captured = (sessionId: SessionId, turn: string) =>
  Effect.gen(function* () {
    const outcome = yield* capturePoint(sessionId, turn as TurnId)
    if (outcome._tag !== "Captured") return yield* Effect.dieMessage(outcome.reason)
    return outcome.point
  })

describe("directories a restore's deletions leave empty", () => {
  it.effect("go; one still holding a file stays, and so does an empty one the restore did not empty", () => {
    const env = makeEnv()
    const tree = () => {
      env.fs.writeFile(`${ROOT}/a.txt`, "a")
      env.fs.writeFile(`${ROOT}/gen/deep/er/x.txt`, "x")
      env.fs.writeFile(`${ROOT}/gen/y.txt`, "y")
      env.fs.writeFile(`${ROOT}/keep/k.txt`, "k")
    }
    const kind = (path: string) => env.fs.node(`${ROOT}/${path}`)?.kind
    tree()
    env.fs.mkdirp(`${ROOT}/empty-before`)
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      yield* captured(sessionId, "turn-1")
      // A shell removed them: the next point records them as absent (tombstones).
      env.fs.remove(`${ROOT}/gen`)
      env.fs.remove(`${ROOT}/keep/k.txt`)
      const without = yield* captured(sessionId, "turn-2")
      expect(without.tombstones).toBe(3)
      // They came back, and a file the points never saw sits beside one of them.
      tree()
      env.fs.writeFile(`${ROOT}/keep/other.txt`, "mine")

      const preview = yield* previewPointRestore(sessionId, without.pointId)
      yield* applyPointRestore(sessionId, without.pointId, preview.token!)
      expect(env.files()).toEqual({ "a.txt": "a", "keep/other.txt": "mine" })
      expect(kind("gen/deep/er")).toBeUndefined()
      expect(kind("gen/deep")).toBeUndefined()
      expect(kind("gen")).toBeUndefined()
      expect(kind("keep")).toBe("directory")
      expect(kind("empty-before")).toBe("directory")

      // The redo puts the files back, their directories made again.
      yield* redo(sessionId)
      expect(env.files()).toEqual({
        "a.txt": "a",
        "gen/deep/er/x.txt": "x",
        "gen/y.txt": "y",
        "keep/k.txt": "k",
        "keep/other.txt": "mine",
      })
      expect(env.outsideAccesses()).toEqual([])
    }).pipe(Effect.provide(env.layer()))
  })
})
