// `unseenBy`: which paths a capture did not see, from what it reported leaving out. A table of
// skips and paths, then a property against a direct reading of the rule (budget: every path;
// otherwise: the path or a directory above it was left out).
import { describe, expect, it } from "@effect/vitest"
import type { SkippedPath, SkipReason } from "@rewind/contracts"
import { FastCheck as fc } from "effect"
import { unseenBy } from "../src/snapshot/unseenPaths.js"

const skip = (path: string, reason: SkipReason): SkippedPath => ({ path, reason })

describe("unseenBy", () => {
  const skipped = [
    skip("vendor/lib", "skipped_directory"),
    skip("fixtures/.svn", "skipped_directory"),
    skip("big.bin", "over_size_limit"),
    skip("locked", "unreadable"),
    skip("pipe", "not_a_regular_file"),
    skip("caf\\xe9", "unsupported_name"),
  ]
  const unseen = unseenBy(skipped)
  const cases: ReadonlyArray<[string, string | undefined]> = [
    ["vendor/lib", "vendor/lib"],
    ["vendor/lib/index.js", "vendor/lib"],
    ["vendor/lib/deep/er.js", "vendor/lib"],
    ["vendor/library.js", undefined], // a name that only starts like a left-out directory
    ["vendor/other.js", undefined],
    ["vendor", undefined],
    ["fixtures/.svn/entries", "fixtures/.svn"],
    ["big.bin", "big.bin"],
    ["big.bin2", undefined],
    ["locked/a/b.txt", "locked"],
    ["pipe", "pipe"],
    ["NOTES.md", undefined],
    ["src/new/file.ts", undefined],
  ]
  for (const [path, by] of cases)
    it(`${path}: ${by === undefined ? "seen" : `unseen (${by})`}`, () => {
      expect(unseen(path)?.path).toBe(by)
    })

  it("nothing left out: every path seen", () => {
    expect(unseenBy([])("a/b")).toBeUndefined()
  })

  it("a scan cut by its budget may have missed any path, wherever the cut was", () => {
    const cut = unseenBy([skip("big.bin", "over_size_limit"), skip("deep/dir", "budget")])
    for (const path of ["NOTES.md", "deep/dir/x", "other/y"]) expect(cut(path)?.reason).toBe("budget")
  })

  it("the root left out (reported as '.'): every path unseen", () => {
    expect(unseenBy([skip(".", "unreadable")])("a/b")?.reason).toBe("unreadable")
  })

  it("agrees with the rule read directly, on generated paths and skips", () => {
    const segment = fc.constantFrom("a", "b", "ab", "a.b")
    const path = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join("/"))
    const reason = fc.constantFrom<SkipReason>("unreadable", "skipped_directory", "over_size_limit", "budget")
    fc.assert(
      fc.property(fc.array(fc.tuple(path, reason), { maxLength: 5 }), path, (skips, probe) => {
        const given = skips.map(([p, r]) => skip(p, r))
        const expected = given.some((s) => s.reason === "budget")
          ? true
          : given.some((s) => probe === s.path || probe.startsWith(`${s.path}/`))
        expect(unseenBy(given)(probe) !== undefined).toBe(expected)
      }),
      { seed: 23, numRuns: 300 },
    )
  })
})
