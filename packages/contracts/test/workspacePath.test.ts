// Host paths are normalised (empty and "." segments dropped) and then checked; never trimmed.
import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck, Schema } from "effect"
import { normaliseWorkspacePath, WorkspacePathFromHost, workspacePathProblem } from "../src/index.js"
import { explainProblem } from "../src/internal/workspacePathCheck.js"

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

// The one-pass proof of validity (`plainlyValid`) must never accept what the full check refuses,
// and the check as a whole must word every refusal as the full check does.
const referenceProblem = explainProblem

describe("workspacePathProblem's fast path", () => {
  it("agrees with the full check on random paths of tricky characters", () => {
    const unit = FastCheck.constantFrom(
      "a",
      "B",
      "/",
      ".",
      "..",
      ":",
      "\\",
      " ",
      "\u0000",
      "\u001f",
      "\u007f",
      "\u0080",
      "é",
      "\ud83d",
      "\ude00",
      "\ud83d\ude00",
      "C:",
    )
    FastCheck.assert(
      FastCheck.property(FastCheck.string({ unit, maxLength: 12 }), (p) => {
        expect(workspacePathProblem(p)).toBe(referenceProblem(p))
      }),
      { seed: 23, numRuns: 5_000 },
    )
  })

  it("agrees at the length limit and on the usual shapes", () => {
    for (const p of [
      "a".repeat(4096),
      "a".repeat(4097),
      `${"a/".repeat(2047)}b`,
      "packages/core/src/index.ts",
      ".gitignore",
      "a/.b/..c/...",
      "a/./b",
      "a/../b",
      "a/",
      "/a",
      "a:",
      "1:b",
      "x/C:/y",
    ]) {
      expect(workspacePathProblem(p), p).toBe(referenceProblem(p))
    }
  })
})
