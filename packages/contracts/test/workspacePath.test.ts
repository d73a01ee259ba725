// Host paths are normalised (empty and "." segments dropped) and then checked; never trimmed.
import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck, Schema } from "effect"
import { normaliseWorkspacePath, WorkspacePathFromHost, workspacePathProblem } from "../src/index.js"

const decode = Schema.decodeUnknownEither(WorkspacePathFromHost)

describe("normaliseWorkspacePath", () => {
  it("drops empty and '.' segments", () => {
    expect(normaliseWorkspacePath("./a.txt")).toBe("a.txt")
    expect(normaliseWorkspacePath("a//b")).toBe("a/b")
    expect(normaliseWorkspacePath("a/./b/")).toBe("a/b")
    expect(normaliseWorkspacePath("a.txt")).toBe("a.txt")
  })

  it("never trims: a space is part of a name", () => {
    expect(normaliseWorkspacePath(" lead.txt")).toBe(" lead.txt")
    expect(normaliseWorkspacePath(" ")).toBe(" ")
    expect(Either.getOrThrow(decode(" lead.txt"))).toBe(" lead.txt")
    expect(Either.getOrThrow(decode(" "))).toBe(" ")
  })

  it("leaves '..', absolute paths, NUL and nothing-at-all for WorkspacePath to refuse", () => {
    for (const bad of ["../a", "a/../../b", "/etc/passwd", "C:/x", "a\u0000b", "a\\b", "", ".", "./"]) {
      expect(Either.isLeft(decode(bad)), bad).toBe(true)
    }
  })

  it("what it returns is a valid workspace path, or the input unchanged", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.string({ unit: FastCheck.constantFrom("a", "/", ".", " ", "..", "\u0000") }),
        (p) => {
          const n = normaliseWorkspacePath(p)
          return n === p || workspacePathProblem(n) === undefined || n.split("/").includes("..")
        },
      ),
      { seed: 21, numRuns: 500 },
    )
  })
})
