// What a file tool says the file holds after it (core files/expectedAfter.ts): Write's content,
// Edit / MultiEdit / replace edits applied to the before-content in order; no expectation at all
// when it cannot be told (an edit whose old string is missing, a before-content that is not text).
import { describe, expect, it } from "@effect/vitest"
import { expectedAfterContent } from "@rewind/core"
import { FastCheck } from "effect"

const bytes = (s: string) => new TextEncoder().encode(s)
const text = (b: Uint8Array | undefined) => (b === undefined ? undefined : new TextDecoder().decode(b))
const edit = (oldString: string, newString: string, replaceAll?: boolean) => ({
  oldString,
  newString,
  ...(replaceAll === undefined ? {} : { replaceAll }),
})

describe("the content a file tool says it left", () => {
  it("is Write's content, whatever was there", () => {
    expect(text(expectedAfterContent({ _tag: "Written", content: "new\n" }, bytes("old\n")))).toBe("new\n")
    expect(text(expectedAfterContent({ _tag: "Written", content: "" }, null))).toBe("")
    expect(expectedAfterContent(undefined, bytes("x"))).toBeUndefined()
  })

  it("is the edits applied in order: the first occurrence, or every one with replaceAll", () => {
    const before = bytes("a b a b\n")
    const one = { _tag: "Edited" as const, edits: [edit("a", "A")] }
    expect(text(expectedAfterContent(one, before))).toBe("A b a b\n")
    const all = { _tag: "Edited" as const, edits: [edit("a", "A", true)] }
    expect(text(expectedAfterContent(all, before))).toBe("A b A b\n")
    const chained = { _tag: "Edited" as const, edits: [edit("a b", "x"), edit("x a", "y")] }
    expect(text(expectedAfterContent(chained, before))).toBe("y b\n")
    // An edit that creates the file: an empty old string on nothing.
    expect(text(expectedAfterContent({ _tag: "Edited", edits: [edit("", "fresh\n")] }, null))).toBe("fresh\n")
  })

  it("is unknown when it cannot be told", () => {
    const missing = { _tag: "Edited" as const, edits: [edit("zzz", "y")] }
    expect(expectedAfterContent(missing, bytes("a\n"))).toBeUndefined()
    expect(expectedAfterContent({ _tag: "Edited", edits: [edit("a", "b")] }, null)).toBeUndefined()
    expect(
      expectedAfterContent({ _tag: "Edited", edits: [edit("", "x")] }, bytes("not empty")),
    ).toBeUndefined()
    // Not UTF-8: no text to edit.
    expect(
      expectedAfterContent({ _tag: "Edited", edits: [edit("a", "b")] }, new Uint8Array([0x61, 0xff])),
    ).toBeUndefined()
  })

  it("agrees with String.replace on any text (property)", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.string(),
        FastCheck.string({ minLength: 1, maxLength: 3 }),
        FastCheck.string(),
        FastCheck.boolean(),
        (before, oldString, newString, all) => {
          const got = text(
            expectedAfterContent({ _tag: "Edited", edits: [edit(oldString, newString, all)] }, bytes(before)),
          )
          const want = before.includes(oldString)
            ? all
              ? before.split(oldString).join(newString)
              : before.replace(oldString, () => newString)
            : undefined
          expect(got).toBe(want)
        },
      ),
      { seed: 27, numRuns: 300 },
    )
  })
})
