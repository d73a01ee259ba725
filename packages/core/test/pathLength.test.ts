// Paths over the system's limits once rooted are refused at the door (issue 21 item 7): nothing is
// probed, so no adapter ever starts making directories for a path it cannot finish.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { type ProbedEntry, resolveConfined } from "../src/workspace/confinedPathResolution.js"

const resolveUnder = (root: string, path: string) => {
  const probed: Array<string> = []
  const probe = (absolute: string) =>
    Effect.sync((): ProbedEntry => {
      probed.push(absolute)
      return { kind: "missing" }
    })
  return Effect.map(
    Effect.either(
      resolveConfined(path, {
        root,
        probe,
        finalSymlink: "refuse",
        operation: "write",
        notADirectory: () => "not a directory",
      }),
    ),
    (result) => ({ result, probed }),
  )
}

const reasonOf = (result: Either.Either<unknown, unknown>) =>
  Either.isLeft(result) && typeof result.left === "object" && result.left !== null && "reason" in result.left
    ? result.left.reason
    : "accepted"

describe("rooted path length", () => {
  const root = "/ws/project"
  // `root/` takes 12 bytes; with the terminating NUL a rooted path may be 4095 bytes at most.
  const deep = (bytes: number) => {
    const parts: Array<string> = []
    let left = bytes
    while (left > 0) {
      const n = Math.min(200, left)
      parts.push("d".repeat(n))
      left -= n + 1
    }
    return parts.join("/")
  }

  it.effect("accepts a path that just fits and refuses one byte more, probing nothing", () =>
    Effect.gen(function* () {
      const fits = deep(4095 - root.length - 1)
      expect(`${root}/${fits}`.length).toBe(4095)
      expect(reasonOf((yield* resolveUnder(root, fits)).result)).toBe("accepted")
      const over = `${fits}x`
      const { result, probed } = yield* resolveUnder(root, over)
      expect(reasonOf(result)).toBe("too_long")
      expect(probed).toEqual([])
      // The message stays short enough to read, whatever the path's length.
      expect(
        Either.isLeft(result) && String((result.left as { message: string }).message).length,
      ).toBeLessThan(300)
    }),
  )

  it.effect("counts bytes, not characters, and refuses a component over 255 bytes", () =>
    Effect.gen(function* () {
      expect(reasonOf((yield* resolveUnder(root, `a/${"x".repeat(255)}`)).result)).toBe("accepted")
      expect(reasonOf((yield* resolveUnder(root, `a/${"x".repeat(256)}`)).result)).toBe("too_long")
      // 128 two-byte characters: 256 bytes.
      const { result, probed } = yield* resolveUnder(root, `${"é".repeat(128)}/b.txt`)
      expect(reasonOf(result)).toBe("too_long")
      expect(probed).toEqual([])
    }),
  )

  it.effect("counts the root: a path that fits under a short root may not fit under a long one", () =>
    Effect.gen(function* () {
      const path = deep(4000)
      expect(reasonOf((yield* resolveUnder("/w", path)).result)).toBe("accepted")
      expect(reasonOf((yield* resolveUnder(`/${"r".repeat(200)}`, path)).result)).toBe("too_long")
    }),
  )
})
