// Ignore rules decide as git's do. Patterns match case-sensitively, as git's do on a
// case-sensitive filesystem: `build/`
// and `tags` in a .gitignore leave out `build/` and `tags` but not a `Build/` or `Tags/` directory
// of sources git tracks, `*.log` leaves out `x.log` but not `NOTES.LOG`, and a negation re-includes
// only the spelling it names. The library's default (case-insensitive) left those files out of
// every point, unprotected and unreported. And a directory a deeper ignore file re-includes
// (`!/node_modules/` beside a test fixture, under a root `node_modules`: vite's layout) has its
// files captured, and a restore may write them: the root's rule is not applied again to each file
// under it.
import { describe, expect, it } from "@effect/vitest"
import type { TurnId } from "@rewind/contracts"
import { applyPointRestore, capturePoint, loadManifest, previewPointRestore } from "@rewind/core"
import { Effect } from "effect"
import { makeEnv, newSession, ROOT } from "../support/fileRewindEnv.js"

/** A memory workspace holding `files` (path: content). */
const envWith = (files: Record<string, string>) => {
  const env = makeEnv()
  for (const [path, content] of Object.entries(files)) env.fs.writeFile(`${ROOT}/${path}`, content)
  return env
}

/** A first point of a new session: the point, and the paths its manifest records, sorted. */
const firstPoint = Effect.gen(function* () {
  const sessionId = yield* newSession
  const outcome = yield* capturePoint(sessionId, "turn-1" as TurnId)
  if (outcome._tag !== "Captured") return yield* Effect.dieMessage(outcome.reason)
  const manifest = yield* loadManifest(outcome.point.manifestHash)
  return { sessionId, point: outcome.point, paths: [...manifest.keys()].sort() }
})

describe("ignore rules and letter case", () => {
  it.effect("leave out only the spelling a pattern names", () => {
    const env = envWith({
      ".gitignore": "tags\nbuild/\n*.log\n!Keep.log\n",
      "Tags/src.c": "int x;\n",
      tags: "ctags output\n",
      "Build/main.c": "int main;\n",
      "build/out.o": "object\n",
      "NOTES.LOG": "notes\n",
      "x.log": "log\n",
      "keep.log": "lower\n",
      "Keep.log": "upper\n",
    })
    return Effect.gen(function* () {
      const { point, paths } = yield* firstPoint
      expect(paths).toEqual([".gitignore", "Build/main.c", "Keep.log", "NOTES.LOG", "Tags/src.c"])
      expect(point.skipped).toEqual([])
    }).pipe(Effect.provide(env.layer()))
  })

  it.effect(
    "capture what a deeper ignore file re-includes under a directory the root excludes, and restore it",
    () => {
      const env = envWith({
        ".gitignore": "node_modules\n",
        "fixture/.gitignore": "!/node_modules/\n",
        "fixture/node_modules/pkg/index.js": "export default 1\n",
        "fixture/node_modules/pkg/deep/a.js": "a\n",
        "other/node_modules/dep/index.js": "dependency\n",
        "node_modules/top/index.js": "dependency\n",
      })
      return Effect.gen(function* () {
        const { sessionId, point, paths } = yield* firstPoint
        expect(paths).toEqual([
          ".gitignore",
          "fixture/.gitignore",
          "fixture/node_modules/pkg/deep/a.js",
          "fixture/node_modules/pkg/index.js",
        ])
        // The restore's protection check decides as the capture did: the fixture is written back.
        env.fs.writeFile(`${ROOT}/fixture/node_modules/pkg/index.js`, "changed\n")
        const preview = yield* previewPointRestore(sessionId, point.pointId)
        expect(preview.conflicts).toEqual([])
        expect(preview.changes.map((c) => c.path)).toEqual(["fixture/node_modules/pkg/index.js"])
        yield* applyPointRestore(sessionId, point.pointId, preview.token!)
        expect(env.files()["fixture/node_modules/pkg/index.js"]).toBe("export default 1\n")
      }).pipe(Effect.provide(env.layer()))
    },
  )

  it.effect(
    "leave a skip-listed name to the repository's rules where they name it, and skip it (reported) where they do not",
    () => {
      // webpack's and jest's layout: only the root's dependencies are ignored; fixtures are tracked.
      const named = envWith({
        ".gitignore": "/node_modules\n",
        "node_modules/dep/index.js": "dependency\n",
        "examples/app/node_modules/a.js": "fixture\n",
        ".rewind-like/x": "kept\n",
      })
      const unnamed = envWith({
        ".gitignore": "*.log\n",
        "node_modules/dep/index.js": "dependency\n",
        "examples/app/node_modules/a.js": "fixture\n",
        "src/a.ts": "a\n",
      })
      const captured = Effect.map(firstPoint, ({ point, paths }) => ({
        paths,
        skipped: point.skipped.map((s) => [s.path, s.reason]),
      }))
      return Effect.gen(function* () {
        const byRules = yield* Effect.provide(captured, named.layer())
        expect(byRules.paths).toEqual([".gitignore", ".rewind-like/x", "examples/app/node_modules/a.js"])
        expect(byRules.skipped).toEqual([])
        const bySkipList = yield* Effect.provide(captured, unnamed.layer())
        expect(bySkipList.paths).toEqual([".gitignore", "src/a.ts"])
        expect([...bySkipList.skipped].sort()).toEqual([
          ["examples/app/node_modules", "skipped_directory"],
          ["node_modules", "skipped_directory"],
        ])
      })
    },
  )
})
