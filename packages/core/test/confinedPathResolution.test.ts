import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import {
  checkSymlinkTarget,
  type ProbedEntry,
  resolveConfined,
} from "../src/workspace/confinedPathResolution.js"

/** A fake filesystem as absolute path -> entry, logging every path the resolver probes. */
const fakeFs = (entries: Record<string, ProbedEntry>) => {
  const probed: Array<string> = []
  const probe = (absolute: string) =>
    Effect.sync((): ProbedEntry => {
      probed.push(absolute)
      return entries[absolute] ?? { kind: "missing" }
    })
  return { probed, probe }
}

const ROOT = "/ws"
const dir: ProbedEntry = { kind: "directory" }
const file: ProbedEntry = { kind: "file" }
const link = (target: string): ProbedEntry => ({ kind: "symlink", target })

const resolve = (fs: ReturnType<typeof fakeFs>, path: string, finalSymlink: "refuse" | "report" = "refuse") =>
  Effect.either(
    resolveConfined(path, {
      root: ROOT,
      probe: fs.probe,
      finalSymlink,
      operation: "read",
      notADirectory: (p, at) => ({ notADirectory: `${p} at ${at}` }),
    }),
  )

describe("resolveConfined", () => {
  it.effect("walks a plain path and reports what is missing under the deepest directory", () =>
    Effect.gen(function* () {
      const fs = fakeFs({ "/ws/src": dir, "/ws/src/a.ts": file })
      const found = yield* resolve(fs, "src/a.ts")
      expect(found).toEqual(
        Either.right({
          kind: "file",
          absolute: "/ws/src/a.ts",
          relative: "src/a.ts",
          existingParent: "/ws/src",
          missing: [],
        }),
      )
      const missing = yield* resolve(fs, "src/new/deep.ts")
      expect(Either.getOrThrow(missing)).toMatchObject({
        kind: "missing",
        existingParent: "/ws/src",
        missing: ["new", "deep.ts"],
        absolute: "/ws/src/new/deep.ts",
      })
    }),
  )

  // DESIGN §5: no symlink is followed, inside the root or out. This test replaces one that
  // expected links staying inside the root to be expanded.
  it.effect(
    "never follows a symlink: one on the way refuses the path, one at its end is refused or reported",
    () =>
      Effect.gen(function* () {
        const fs = fakeFs({
          "/ws/real": dir,
          "/ws/real/a.ts": file,
          "/ws/alias": link("real"),
          "/ws/abs": link("/ws/real/a.ts"),
          "/ws/real/up": link("../real/./a.ts"),
          "/ws/out": link("/etc"),
          "/ws/up": link(".."),
        })
        const reasonOf = (r: Either.Either<unknown, unknown>) =>
          Either.isLeft(r) && (r.left as { reason?: string }).reason
        for (const path of ["alias/a.ts", "alias/new/deep.ts", "out/passwd", "up/ws-other", "real/up/x"]) {
          expect(reasonOf(yield* resolve(fs, path)), path).toBe("symlink_in_path")
          expect(reasonOf(yield* resolve(fs, path, "report")), path).toBe("symlink_in_path")
        }
        for (const path of ["abs", "real/up", "out", "alias"]) {
          expect(reasonOf(yield* resolve(fs, path)), path).toBe("symlink_in_path")
          expect(Either.getOrThrow(yield* resolve(fs, path, "report"))).toMatchObject({
            kind: "symlink",
            absolute: `/ws/${path}`,
            relative: path,
          })
        }
        const refused = yield* resolve(fs, "alias/a.ts")
        expect(Either.isLeft(refused) && (refused.left as { message: string }).message).toContain('"alias"')
        // Nothing behind a link is ever probed.
        expect(fs.probed.filter((p) => p.startsWith("/ws/alias/") || p.startsWith("/ws/out/"))).toEqual([])
      }),
  )

  it.effect("refuses a way out before probing anything outside the root", () =>
    Effect.gen(function* () {
      const fs = fakeFs({ "/ws/sub": dir })
      for (const path of ["../x", "/etc/passwd", "a/../../x"]) {
        const result = yield* resolve(fs, path)
        expect(Either.isLeft(result) && (result.left as { reason?: string }).reason, path).toBe(
          "outside_root",
        )
      }
      expect(fs.probed).toEqual([])
    }),
  )

  it.effect("refuses a loop (a link like any other) and reports a file in the middle of a path", () =>
    Effect.gen(function* () {
      const fs = fakeFs({ "/ws/a": link("b"), "/ws/b": link("a"), "/ws/f": file })
      const loop = yield* resolve(fs, "a")
      expect(Either.isLeft(loop) && (loop.left as { reason?: string }).reason).toBe("symlink_in_path")
      const through = yield* resolve(fs, "f/child")
      expect(through).toEqual(Either.left({ notADirectory: "f/child at f" }))
    }),
  )
})

describe("checkSymlinkTarget", () => {
  it.effect("allows targets that stay inside and refuses absolute or climbing ones", () =>
    Effect.gen(function* () {
      expect(Either.isRight(yield* Effect.either(checkSymlinkTarget("a/l", ["a"], "../b/c")))).toBe(true)
      for (const target of ["../../x", "/etc", "", "a/../../.."]) {
        expect(Either.isLeft(yield* Effect.either(checkSymlinkTarget("a/l", ["a"], target))), target).toBe(
          true,
        )
      }
    }),
  )
})
