// The ignore matcher with literals (`workspace/ruleMatcher.ts`) answers for a path itself exactly
// as the `ignore` library's rule manager does (its `test` without the parent rule, which the
// callers apply over the whole stack): generated ignore files (negations, anchors, `**`, classes,
// escapes, trailing slashes and spaces, mixed case, non-ASCII letters whose case rules differ)
// against generated paths. Negated classes (`[!a]`) are left out here: there the answer is git's,
// not the library's (`withGitClasses`; `gitIgnoreOracle.test.ts` in the rewind package asks git).
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import ignore from "ignore"
import { ruleMatcherOf } from "../src/workspace/ruleMatcher.js"

// Path pieces that meet the patterns' pieces, in several cases and scripts: `σ`/`ς`/`Σ` and `K`
// (Kelvin) / `ſ` (long s) are where lower-casing and case-insensitive matching part ways.
const NAMES = [
  "aς",
  "dist",
  "Dist",
  "DIST",
  "lib",
  "a",
  "b",
  "x.log",
  "X.LOG",
  "node_modules",
  "σς",
  "Σ",
  "K",
  "k",
  "ſ",
  "s",
  "babel-runtime",
  "one two",
  "foo[1]",
  "!bang",
  "#hash",
]
const segment = fc.constantFrom(...NAMES)
const path = fc
  .tuple(fc.array(segment, { minLength: 1, maxLength: 4 }), fc.boolean())
  .map(([parts, dir]) => `${parts.join("/")}${dir ? "/" : ""}`)

const PIECES = [
  "aσ",
  "dist",
  "DIST",
  "lib",
  "*",
  "**",
  "?",
  "x.log",
  "*.log",
  "*.LOG",
  "node_modules",
  "σ",
  "Σ",
  "k",
  "s",
  "babel-runtime",
  "[ab]",
  "\\!bang",
  "\\#hash",
  "one two",
  "foo\\[1\\]",
  "a",
  "b",
]
const pattern = fc
  .tuple(
    fc.constantFrom("", "!", "/", "!/"),
    fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 3 }),
    fc.constantFrom("", "/", "  ", "/**", "\\ "),
    fc.constantFrom("/", ""),
  )
  .map(([lead, parts, tail, join]) => `${lead}${parts.join(join)}${tail}`)
const ignoreFile = fc.array(pattern, { minLength: 1, maxLength: 8 }).map((lines) => lines.join("\n"))

/** The library's answer for the path itself (its rule manager: internal, pinned by the first test). */
const libraryVerdict = (rules: ReturnType<typeof ignore>, path: string) => {
  const manager = (
    rules as unknown as {
      _rules: { test: (p: string, u: boolean, m: string) => { ignored: boolean; unignored: boolean } }
    }
  )._rules
  const { ignored, unignored } = manager.test(path, true, "regex")
  return { ignored, unignored }
}

/** Each path and every directory above it. */
const withDirectories = (paths: ReadonlyArray<string>) => {
  const out: Array<string> = []
  for (const p of paths) {
    const parts = p.split("/").filter(Boolean)
    for (let i = 1; i < parts.length; i++) out.push(`${parts.slice(0, i).join("/")}/`)
    out.push(p)
  }
  return out
}

describe("ruleMatcherOf", () => {
  it("uses literals with the installed ignore library (its rule objects are as this module reads them)", () => {
    const matcher = ruleMatcherOf(ignore().add("dist\n*.log\n!keep.log\n"))
    expect(matcher.usesLiterals).toBe(true)
    expect(matcher.verdict("a/dist/")).toEqual({ ignored: true, unignored: false })
    // The path itself: the directory above is the caller's to decide.
    expect(matcher.verdict("a/dist/x.js")).toEqual({ ignored: false, unignored: false })
    expect(matcher.verdict("keep.log")).toEqual({ ignored: false, unignored: true })
    expect(matcher.verdict("src/x.js")).toEqual({ ignored: false, unignored: false })
  })

  it("answers as the library's rule manager does, for any rules and paths", () => {
    fc.assert(
      fc.property(
        ignoreFile,
        fc.array(path, { minLength: 1, maxLength: 12 }),
        fc.boolean(),
        (text, paths, caseless) => {
          const library = ignore({ ignorecase: caseless }).add(text)
          const matcher = ruleMatcherOf(ignore({ ignorecase: caseless }).add(text))
          expect(matcher.usesLiterals).toBe(true)
          for (const p of withDirectories(paths)) {
            expect(matcher.verdict(p), `${JSON.stringify(text)} ${p}`).toEqual(libraryVerdict(library, p))
          }
        },
      ),
      { numRuns: 600, seed: 23 },
    )
  })
})
