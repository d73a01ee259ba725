// `ignoredInTree`: the ignore rules a point was captured under, applied to paths it lacks — its
// own `.gitignore` files read back from the store, decided as a scan decides (directory rules, a
// deeper file re-including, nothing re-included under an excluded directory). The tree on disk
// has different rules by then: the answers must be the point's. A rule file that cannot be read
// back makes every answer "may have been ignored".
import { describe, expect, it } from "@effect/vitest"
import type { TurnId, WorkspacePath } from "@rewind/contracts"
import { capturePoint, ignoredInTree, loadManifest } from "@rewind/core"
import { Effect } from "effect"
import { makeEnv, newSession, ROOT } from "../support/fileRewindEnv.js"

const paths = (...p: ReadonlyArray<string>) => p as ReadonlyArray<WorkspacePath>

const pointUnder = (env: ReturnType<typeof makeEnv>) =>
  Effect.gen(function* () {
    env.fs.writeFile(`${ROOT}/.gitignore`, "*.log\nbuild/\n.env\n")
    env.fs.writeFile(`${ROOT}/sub/.gitignore`, "!keep.log\n")
    env.fs.writeFile(`${ROOT}/src/a.ts`, "a\n")
    const sessionId = yield* newSession
    const outcome = yield* capturePoint(sessionId, "turn-1" as TurnId)
    if (outcome._tag !== "Captured") return yield* Effect.dieMessage(outcome.reason)
    // The tree's rules change afterwards (an agent un-ignores everything): not what is asked about.
    env.fs.writeFile(`${ROOT}/.gitignore`, "*.tmp\n")
    env.fs.remove(`${ROOT}/sub/.gitignore`)
    return outcome.point
  })

describe("ignoredInTree", () => {
  it.effect("answers with the point's rules, not the tree's now", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const point = yield* pointUnder(env)
      const manifest = yield* loadManifest(point.manifestHash)
      const asked = paths(
        "x.log",
        "deep/er/y.log",
        "build/out.js",
        ".env",
        "sub/keep.log",
        "sub/other.log",
        "src/b.ts",
        "notes.tmp",
      )
      const found = yield* ignoredInTree(manifest, asked)
      expect(Object.fromEntries(found)).toEqual({
        "x.log": { at: ".", reason: "ignored" },
        "deep/er/y.log": { at: ".", reason: "ignored" },
        "build/out.js": { at: ".", reason: "ignored" },
        ".env": { at: ".", reason: "ignored" },
        "sub/other.log": { at: ".", reason: "ignored" },
      })
      expect(yield* ignoredInTree(manifest, [])).toEqual(new Map())
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect("a rule file the store cannot give back: every path may have been ignored", () => {
    const env = makeEnv()
    return Effect.gen(function* () {
      const point = yield* pointUnder(env)
      const manifest = yield* loadManifest(point.manifestHash)
      const rules = manifest.get(".gitignore" as WorkspacePath)
      if (rules?.kind !== "file") return yield* Effect.dieMessage("no .gitignore in the point")
      env.artifacts.control.inject({ operation: "get", target: rules.hash, as: "missing", persistent: true })
      const found = yield* ignoredInTree(manifest, paths("src/b.ts", "x.log"))
      expect([...found.keys()]).toEqual(["src/b.ts", "x.log"])
      expect(found.get("src/b.ts" as WorkspacePath)).toEqual({ at: ".gitignore", reason: "ignored" })
    }).pipe(Effect.provide(env.layer()))
  })
})
