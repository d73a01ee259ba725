import { existsSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { tempDir } from "./tempDirs.js"

// The removal runs from the setup file after every test of every file, so a directory made by one
// test is gone when the next begins, whichever file of the worker's run this is.
describe("test temp directories", () => {
  let made: string | undefined
  it("are made under the OS temp dir", () => {
    made = tempDir("rewind-tempdirs-")
    expect(existsSync(made)).toBe(true)
  })
  it("are removed once the test that made them finishes", () => {
    expect(made).toBeDefined()
    expect(existsSync(made!)).toBe(false)
  })
})
