import { describe, expect, it } from "@effect/vitest"
import { describeError, StoreError } from "../src/index.js"

describe("describeError", () => {
  it("quotes a failure's own message: a tagged error, an Error, a plain object carrying one", () => {
    expect(describeError(new StoreError({ operation: "append", message: "disk full" }))).toBe("disk full")
    expect(describeError(new Error("boom"))).toBe("boom")
    expect(describeError({ message: "from a plain object" })).toBe("from a plain object")
  })
  it("gives any other value's string form", () => {
    expect(describeError("text")).toBe("text")
    expect(describeError(42)).toBe("42")
    expect(describeError(null)).toBe("null")
    expect(describeError(undefined)).toBe("undefined")
    expect(describeError(Symbol("s"))).toBe("Symbol(s)")
  })
  it("never throws, whatever the value does when inspected", () => {
    const hostile = new Proxy(
      {},
      {
        has: () => {
          throw new Error("trap")
        },
        get: () => {
          throw new Error("trap")
        },
      },
    )
    expect(describeError(hostile)).toBe("a value that could not be described")
    const throwingMessage = Object.defineProperty({}, "message", {
      get: () => {
        throw new Error("getter")
      },
    })
    expect(describeError(throwingMessage)).toBe("a value that could not be described")
    expect(describeError(Object.create(null))).toBe("a value that could not be described")
  })
})
