// The confined workspace's use of a primitive's `readdirStatBeneath`: directories it lists are
// answered from it (in name order, the same array when it already is), the ones it declines and
// paths that are not workspace paths go the checked way, with the checked way's answers.
import { describe, expect, it } from "@effect/vitest"
import { MemoryFileSystem } from "@rewind/adapter-memory"
import type { WorkspacePath } from "@rewind/contracts"
import { makeConfinedWorkspace, type ScannedEntry } from "@rewind/core"
import { Effect, Either } from "effect"

const p = (path: string) => path as WorkspacePath

describe("scanDirectories over readdirStatBeneath", () => {
  it.effect("answers from the primitive where it can, and the checked way elsewhere", () =>
    Effect.gen(function* () {
      const fs = new MemoryFileSystem()
      fs.mkdirp("/ws/src")
      fs.mkdirp("/ws/docs")
      fs.mkdirp("/outside")
      const plain = makeConfinedWorkspace("/ws", fs.primitives())
      yield* plain.write(p("src/a.ts"), new TextEncoder().encode("a"))
      yield* plain.write(p("docs/r.md"), new TextEncoder().encode("r"))
      yield* plain.symlink(p("alias"), "src")

      const stat = { kind: "file" as const, size: 1, mode: 0o644, mtimeNs: 1n, ctimeNs: 1n, inode: 1n }
      const sorted: ReadonlyArray<ScannedEntry> = [
        { name: "a", stat },
        { name: "b", stat },
      ]
      const unsorted: ReadonlyArray<ScannedEntry> = [
        { name: "z", stat },
        { name: "y", stat },
      ]
      const asked: Array<ReadonlyArray<string>> = []
      const workspace = makeConfinedWorkspace("/ws", {
        ...fs.primitives(),
        readdirStatBeneath: (root, relatives) =>
          Effect.sync(() => {
            expect(root).toBe("/ws")
            asked.push(relatives)
            // Answers the root and src; declines everything else (as a symlink on the way would).
            return {
              listings: relatives.map((r) => (r === "" ? sorted : r === "src" ? unsorted : undefined)),
              seal: undefined,
            }
          }),
      })
      const directories = [undefined, p("src"), p("docs"), p("alias"), p("../outside"), p("missing")]
      const results = yield* workspace.scanDirectories(directories)
      // Only workspace paths reach the primitive; "../outside" is refused without it.
      expect(asked).toEqual([["", "src", "docs", "alias", "missing"]])
      expect(Either.getOrThrow(results[0]!)).toBe(sorted)
      expect(Either.getOrThrow(results[1]!).map((e) => e.name)).toEqual(["y", "z"])
      const checked = yield* plain.scanDirectories(directories)
      for (const i of [2, 3, 4, 5]) expect(results[i]).toEqual(checked[i])
      // A symlinked directory is not listed through (DESIGN §5; it was followed to "src" before).
      expect(
        Either.isLeft(results[3]!) && results[3].left._tag === "PathRefused" && results[3].left.reason,
      ).toBe("symlink_in_path")
      expect(Either.isLeft(results[4]!) && results[4].left._tag).toBe("PathRefused")
      expect(Either.isLeft(results[5]!)).toBe(true)
    }),
  )
})
