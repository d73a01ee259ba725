import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { checkSymlinkTarget, type ProbedEntry, resolveConfined } from "../src/workspaceConfinement.js"

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

const resolve = (fs: ReturnType<typeof fakeFs>, path: string, followFinalSymlink = true) =>
  Effect.either(
    resolveConfined(path, {
      root: ROOT,
      probe: fs.probe,
      followFinalSymlink,
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

  it.effect("expands symlinks that stay inside, relative or absolute", () =>
    Effect.gen(function* () {
      const fs = fakeFs({
        "/ws/real": dir,
        "/ws/real/a.ts": file,
        "/ws/alias": link("real"),
        "/ws/abs": link("/ws/real/a.ts"),
        "/ws/real/up": link("../real/./a.ts"),
      })
      expect(Either.getOrThrow(yield* resolve(fs, "alias/a.ts")).absolute).toBe("/ws/real/a.ts")
      expect(Either.getOrThrow(yield* resolve(fs, "abs")).relative).toBe("real/a.ts")
      expect(Either.getOrThrow(yield* resolve(fs, "real/up")).relative).toBe("real/a.ts")
      expect(Either.getOrThrow(yield* resolve(fs, "abs", false)).kind).toBe("symlink")
    }),
  )

  it.effect("refuses a way out before probing anything outside the root", () =>
    Effect.gen(function* () {
      const fs = fakeFs({
        "/ws/out": link("/etc"),
        "/ws/up": link(".."),
        "/ws/sub": dir,
        "/ws/sub/sneaky": link("../../ws-other/x"),
        "/ws/prefix": link("/ws-evil/x"),
      })
      for (const path of ["out/passwd", "up/ws-other", "sub/sneaky", "prefix"]) {
        const result = yield* resolve(fs, path)
        expect(Either.isLeft(result) && (result.left as { reason?: string }).reason, path).toBe(
          "symlink_escape",
        )
      }
      for (const path of ["../x", "/etc/passwd", "a/../../x"]) {
        const result = yield* resolve(fs, path)
        expect(Either.isLeft(result) && (result.left as { reason?: string }).reason, path).toBe(
          "outside_root",
        )
      }
      expect(fs.probed.every((p) => p === ROOT || p.startsWith(`${ROOT}/`))).toBe(true)
    }),
  )

  it.effect("refuses loops and reports a file in the middle of a path", () =>
    Effect.gen(function* () {
      const fs = fakeFs({ "/ws/a": link("b"), "/ws/b": link("a"), "/ws/f": file })
      const loop = yield* resolve(fs, "a")
      expect(Either.isLeft(loop) && (loop.left as { reason?: string }).reason).toBe("symlink_loop")
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
