// A name the filesystem allows but a workspace path cannot hold (a control character, a `\`) is
// reported by a capture as `unsupported_name` with the path check's own reason, for a file and for
// a directory (whose subtree is then not scanned); it used to reach a read that refused it and be
// reported as an unreadable file. Like every ignored path, an ignored one stays silent.
import { describe, expect, it } from "@effect/vitest"
import type { TurnId } from "@rewind/contracts"
import { capturePoint, loadManifest } from "@rewind/core"
import { Effect } from "effect"
import { makeEnv, newSession, ROOT } from "../support/fileRewindEnv.js"

describe("names a workspace path cannot hold", () => {
  it.effect("are reported as unsupported_name, not unreadable; ignored ones stay silent", () => {
    const env = makeEnv()
    env.fs.writeFile(`${ROOT}/.gitignore`, "*.log\n")
    env.fs.writeFile(`${ROOT}/ok.txt`, "ok\n")
    env.fs.writeFile(`${ROOT}/bell\u0007.txt`, "a\n")
    env.fs.writeFile(`${ROOT}/back\\slash.txt`, "b\n")
    env.fs.writeFile(`${ROOT}/new\nline/inside.txt`, "c\n")
    env.fs.writeFile(`${ROOT}/noise\u0001.log`, "d\n")
    return Effect.gen(function* () {
      const sessionId = yield* newSession
      for (const turn of ["turn-1", "turn-2"]) {
        const outcome = yield* capturePoint(sessionId, turn as TurnId)
        if (outcome._tag !== "Captured") return yield* Effect.dieMessage(`not captured: ${outcome.reason}`)
        const manifest = yield* loadManifest(outcome.point.manifestHash)
        expect([...manifest.keys()].sort()).toEqual([".gitignore", "ok.txt"])
        const skipped = outcome.point.skipped.map((s) => [s.path, s.reason, s.detail])
        expect(skipped.map(([path, reason]) => [path, reason]).sort()).toEqual([
          ["back\\slash.txt", "unsupported_name"],
          ["bell\u0007.txt", "unsupported_name"],
          ["new\nline", "unsupported_name"],
        ])
        for (const [, , detail] of skipped) expect(detail).toMatch(/workspace path/)
      }
    }).pipe(Effect.provide(env.layer()))
  })
})
