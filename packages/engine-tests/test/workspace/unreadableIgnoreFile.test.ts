// Issue 22 item 4: ignore rules live in one module, so an ignore file that cannot be read answers
// the same for a capture and for a restore: it contributes no rules. A capture takes in what it
// would have excluded (and reports the file as refused); a restore's protection check does not
// call that path ignored either, so what the capture took in, a restore may put back. The readable
// case is the control: the same rule excludes the path both ways.
import { describe, expect, it } from "@effect/vitest"
import type { TurnId, WorkspacePath } from "@rewind/contracts"
import { capturePoint, checkProtection, loadManifest } from "@rewind/core"
import { Effect } from "effect"
import { makeEnv, newSession, ROOT } from "../support/fileRewindEnv.js"

const setUp = (unreadable: "no" | "read" | "read and stat") => {
  const env = makeEnv()
  env.fs.writeFile(`${ROOT}/.gitignore`, "*.log\n")
  env.fs.writeFile(`${ROOT}/a.txt`, "a\n")
  env.fs.writeFile(`${ROOT}/x.log`, "x\n")
  if (unreadable !== "no")
    env.workspace.control.inject({ operation: "read", target: ".gitignore", persistent: true })
  if (unreadable === "read and stat")
    env.workspace.control.inject({ operation: "stat", target: ".gitignore", persistent: true })
  return env
}

const bothWays = (unreadable: "no" | "read" | "read and stat") => {
  const env = setUp(unreadable)
  return Effect.gen(function* () {
    const sessionId = yield* newSession
    const outcome = yield* capturePoint(sessionId, "turn-1" as TurnId)
    if (outcome._tag !== "Captured") return yield* Effect.dieMessage(`not captured: ${outcome._tag}`)
    const manifest = yield* loadManifest(outcome.point.manifestHash)
    const protectedPaths = yield* checkProtection(["x.log" as WorkspacePath])
    return {
      captured: manifest.has("x.log" as WorkspacePath),
      refused: outcome.point.skipped.filter((s) => s.reason === "ignore_file_refused").map((s) => s.path),
      ignoredForRestore: protectedPaths.get("x.log" as WorkspacePath)?.kind === "ignored",
    }
  }).pipe(Effect.provide(env.layer()))
}

describe("an unreadable ignore file answers the same for capture and restore", () => {
  it.effect("readable: the rule excludes x.log from the capture and protects it from a restore", () =>
    Effect.gen(function* () {
      expect(yield* bothWays("no")).toEqual({ captured: false, refused: [], ignoredForRestore: true })
    }),
  )
  it.effect("unreadable: no rules either way, and the capture reports the file as refused", () =>
    Effect.gen(function* () {
      expect(yield* bothWays("read")).toEqual({
        captured: true,
        refused: [".gitignore"],
        ignoredForRestore: false,
      })
    }),
  )
  it.effect("not even statable: still no rules for the restore, as for the capture", () =>
    Effect.gen(function* () {
      const answer = yield* bothWays("read and stat")
      expect(answer.captured).toBe(true)
      expect(answer.ignoredForRestore).toBe(false)
    }),
  )
})
