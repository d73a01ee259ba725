// The confined workspace's use of a primitive's `readFilesBeneath`: files it reads are answered
// from it, the ones it declines and paths that are not workspace paths go the walked way, with the
// walked way's answers (a refusal, an absence, the file itself).
import { describe, expect, it } from "@effect/vitest"
import { MemoryFileSystem } from "@rewind/adapter-memory"
import type { WorkspacePath } from "@rewind/contracts"
import { makeConfinedWorkspace } from "@rewind/core"
import { Effect, Either, Option } from "effect"

const p = (path: string) => path as WorkspacePath
const text = (s: string) => new TextEncoder().encode(s)

describe("readMany over readFilesBeneath", () => {
  it.effect("answers from the primitive where it can, and the walked way elsewhere", () =>
    Effect.gen(function* () {
      const fs = new MemoryFileSystem()
      fs.mkdirp("/ws")
      fs.mkdirp("/outside")
      const plain = makeConfinedWorkspace("/ws", fs.primitives())
      yield* plain.write(p("src/a.ts"), text("a"))
      yield* plain.write(p("src/b.ts"), text("b"))
      yield* plain.write(p("top.md"), text("top"))
      yield* plain.symlink(p("alias"), "src")

      const asked: Array<ReadonlyArray<string>> = []
      const fromPrimitive = { content: text("from the primitive"), mode: 0o600 }
      const workspace = makeConfinedWorkspace("/ws", {
        ...fs.primitives(),
        readFilesBeneath: (root, relatives) =>
          Effect.sync(() => {
            expect(root).toBe("/ws")
            asked.push(relatives)
            // Reads src/a.ts (with bytes of its own, to tell where an answer came from); declines
            // everything else, as a symlink on the way, a missing file or a changing one would be.
            return relatives.map((r) => (r === "src/a.ts" ? fromPrimitive : undefined))
          }),
      })
      const paths = [
        p("src/a.ts"),
        p("src/b.ts"),
        p("top.md"),
        p("alias/a.ts"),
        p("../outside/x"),
        p("missing"),
      ]
      const results = yield* workspace.readMany(paths)
      // Only workspace paths reach the primitive, all in one call.
      expect(asked).toEqual([["src/a.ts", "src/b.ts", "top.md", "alias/a.ts", "missing"]])
      expect(results[0]).toEqual(yield* Effect.either(Effect.succeed(fromPrimitive).pipe(Effect.asSome)))
      const walked = yield* plain.readMany(paths)
      for (const i of [1, 2, 3, 4, 5]) expect(results[i]).toEqual(walked[i])
      expect(results[1]).toEqual(Either.right(Option.some({ content: text("b"), mode: 0o644 })))
      // A symlinked directory is not read through (DESIGN §5), nor is a path leaving the root.
      const refused = results[3]!
      expect(Either.isLeft(refused) && refused.left._tag === "PathRefused" && refused.left.reason).toBe(
        "symlink_in_path",
      )
      expect(Either.isLeft(results[4]!) && results[4].left._tag).toBe("PathRefused")
      expect(results[5]).toEqual(Either.right(Option.none()))
    }),
  )
})
