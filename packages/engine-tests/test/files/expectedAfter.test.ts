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

  it("keeps a file's \\r\\n line endings, as an edit tool that matches \\n in them writes them", () => {
    const before = bytes("one\r\ntwo\r\nthree\r\n")
    // A multi-line old string written with \n: found in the text with its endings normalised.
    const multi = { _tag: "Edited" as const, edits: [edit("one\ntwo\n", "1\n2\n2b\n")] }
    expect(text(expectedAfterContent(multi, before))).toBe("1\r\n2\r\n2b\r\nthree\r\n")
    // A one-line edit that adds a line: the new line ends as the file's do.
    const added = { _tag: "Edited" as const, edits: [edit("three", "three\nfour")] }
    expect(text(expectedAfterContent(added, before))).toBe("one\r\ntwo\r\nthree\r\nfour\r\n")
    // An edit that names the \r itself applies to the text as it is.
    const raw = { _tag: "Edited" as const, edits: [edit("two\r\n", "")] }
    expect(text(expectedAfterContent(raw, before))).toBe("one\r\nthree\r\n")
    // Mixed endings are not the file's own style: the edit applies as it is (and misses here).
    const mixed = bytes("one\r\ntwo\nthree\r\n")
    expect(expectedAfterContent({ _tag: "Edited", edits: [edit("one\ntwo", "x")] }, mixed)).toBeUndefined()
    expect(text(expectedAfterContent({ _tag: "Edited", edits: [edit("two\n", "2\n")] }, mixed))).toBe(
      "one\r\n2\nthree\r\n",
    )
  })

  it("keeps a byte-order mark the file starts with", () => {
    const before = new Uint8Array([0xef, 0xbb, 0xbf, ...bytes("a\n")])
    const got = expectedAfterContent({ _tag: "Edited", edits: [edit("a", "b")] }, before)
    expect([...got!]).toEqual([0xef, 0xbb, 0xbf, ...bytes("b\n")])
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
