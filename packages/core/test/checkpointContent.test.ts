import { describe, expect, it } from "@effect/vitest"
import { applyPatch } from "diff"
import { diffMutation, MAX_PATCH_EDIT_LINES } from "../src/files/checkpointContent.js"
import { toBytes } from "../src/workspace/contentHash.js"

const lines = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag} line ${i}\n`).join("")

describe("diffMutation", () => {
  it("makes a structured patch that replays the edit, and counts its lines", () => {
    const before = "keep\nold\nkeep too\n"
    const after = "keep\nnew\nextra\nkeep too\n"
    const diff = diffMutation("a.txt", toBytes(before), toBytes(after), 1 << 20)
    expect([diff.linesAdded, diff.linesRemoved]).toEqual([2, 1])
    expect(applyPatch(before, diff.patch!, { fuzzFactor: 0, autoConvertLineEndings: false })).toBe(after)
  })

  it("counts a created file as all added and a deleted one as all removed", () => {
    const created = diffMutation("a", null, toBytes("a\nb\nc"), 1 << 20)
    expect([created.linesAdded, created.linesRemoved]).toEqual([3, 0])
    const deleted = diffMutation("a", toBytes("a\nb\n"), null, 1 << 20)
    expect([deleted.linesAdded, deleted.linesRemoved]).toEqual([0, 2])
  })

  it("keeps no patch for binary content", () => {
    const diff = diffMutation("x.bin", new Uint8Array([0xff, 0xfe]), new Uint8Array([0xff]), 1 << 20)
    expect(diff).toEqual({ patch: undefined, linesAdded: 0, linesRemoved: 0 })
  })

  it("skips the patch of an edit too long to diff quickly, still counting its lines", () => {
    const n = MAX_PATCH_EDIT_LINES
    const rewrite = diffMutation("big.txt", toBytes(lines(n, "old")), toBytes(lines(n, "new")), 1 << 24)
    expect(rewrite).toEqual({ patch: undefined, linesAdded: n, linesRemoved: n })
    // Reordered lines are not a change to the bound, so the diff is tried, and gives up.
    const ordered = lines(n, "same")
    const reversed = ordered.split("\n").slice(0, -1).reverse().join("\n").concat("\n")
    const moved = diffMutation("moved.txt", toBytes(ordered), toBytes(reversed), 1 << 24)
    expect(moved.patch).toBeUndefined()
    expect([moved.linesAdded, moved.linesRemoved]).toEqual([0, 0])
  })

  it("skips the patch of a file over the size limit", () => {
    const diff = diffMutation("a", toBytes("a\nb\n"), toBytes("a\nc\n"), 3)
    expect(diff).toEqual({ patch: undefined, linesAdded: 1, linesRemoved: 1 })
  })
})
