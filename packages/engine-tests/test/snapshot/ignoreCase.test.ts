// Ignore patterns match case-sensitively, as git's do on a case-sensitive filesystem: `build/`
// and `tags` in a .gitignore leave out `build/` and `tags` but not a `Build/` or `Tags/` directory
// of sources git tracks, `*.log` leaves out `x.log` but not `NOTES.LOG`, and a negation re-includes
// only the spelling it names. The library's default (case-insensitive) left those files out of
// every point, unprotected and unreported.
import { describe, expect, it } from "@effect/vitest"
import type { TurnId } from "@rewind/contracts"
import { capturePoint, loadManifest } from "@rewind/core"
import { Effect } from "effect"
import { makeEnv, newSession, ROOT } from "../support/fileRewindEnv.js"

describe("ignore rules and letter case", () => {
  it.effect("leave out only the spelling a pattern names", () => {
    const env = makeEnv()
    const files: Record<string, string> = {
      ".gitignore": "tags\nbuild/\n*.log\n!Keep.log\n",
      "Tags/src.c": "int x;\n",
      tags: "ctags output\n",
      "Build/main.c": "int main;\n",
      "build/out.o": "object\n",
      "NOTES.LOG": "notes\n",
      "x.log": "log\n",
      "keep.log": "lower\n",
      "Keep.log": "upper\n",
    }
    for (const [path, content] of Object.entries(files)) env.fs.writeFile(`${ROOT}/${path}`, content)
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      const outcome = yield* capturePoint(sessionId, "turn-1" as TurnId)
      if (outcome._tag !== "Captured") return yield* Effect.dieMessage(outcome.reason)
      const manifest = yield* loadManifest(outcome.point.manifestHash)
      expect([...manifest.keys()].sort()).toEqual([
        ".gitignore",
        "Build/main.c",
        "Keep.log",
        "NOTES.LOG",
        "Tags/src.c",
      ])
      expect(outcome.point.skipped).toEqual([])
    }).pipe(Effect.provide(env.layer()))
  })
})
