// The settle rule's one exception (internal/stableRead.ts): a file stamped moments before the
// read is refused (ECHANGED, to be read again once it settled) unless its bytes are exactly the
// ones the caller expects. The read's clock is given, not read, so "moments before" is exact and
// no test waits or times anything.
import { closeSync, fstatSync, openSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { readHeldStill, SETTLE_NS } from "../src/internal/stableRead.js"
import { tempDirectory } from "./fsFixture.js"

const bytes = (s: string) => new TextEncoder().encode(s)

/** Reads `path` as if `age` ns had passed since its last change. */
const readAged = (path: string, age: bigint, expected?: Uint8Array) => {
  const fd = openSync(path, "r")
  try {
    const stamped = fstatSync(fd, { bigint: true }).ctimeNs
    return readHeldStill(fd, path, expected, stamped + age)
  } finally {
    closeSync(fd)
  }
}

const codeOf = (run: () => unknown) => {
  try {
    run()
    return "read"
  } catch (e) {
    return (e as { code?: string }).code
  }
}

describe("stable reads of a file changed moments ago", () => {
  it.scoped("are refused without an expectation, and with a wrong one", () =>
    Effect.gen(function* () {
      const path = join(yield* tempDirectory("settle"), "a.txt")
      writeFileSync(path, "written\n")
      const fresh = SETTLE_NS / 10n
      expect(codeOf(() => readAged(path, fresh))).toBe("ECHANGED")
      expect(codeOf(() => readAged(path, fresh, bytes("written")))).toBe("ECHANGED")
      expect(codeOf(() => readAged(path, fresh, bytes("something else\n")))).toBe("ECHANGED")
      // Once settled, read as ever, whatever was expected.
      expect(Buffer.from(readAged(path, SETTLE_NS, bytes("nope")).content).toString()).toBe("written\n")
    }),
  )

  it.scoped("wait when the file holds part of the expected bytes, or more than them", () =>
    Effect.gen(function* () {
      const path = join(yield* tempDirectory("settle"), "a.txt")
      // A write caught partway: a prefix of what the tool wrote is not what it wrote.
      writeFileSync(path, "writ")
      expect(codeOf(() => readAged(path, 0n, bytes("written\n")))).toBe("ECHANGED")
      // Nor is the expected content with more after it (a write going on past it).
      writeFileSync(path, "written\nand more")
      expect(codeOf(() => readAged(path, 0n, bytes("written\n")))).toBe("ECHANGED")
      // The same text with other line endings is other bytes: it waits too.
      writeFileSync(path, "written\r\n")
      expect(codeOf(() => readAged(path, 0n, bytes("written\n")))).toBe("ECHANGED")
    }),
  )

  it.scoped("are accepted at once when the bytes are exactly the expected ones", () =>
    Effect.gen(function* () {
      const path = join(yield* tempDirectory("settle"), "a.txt")
      writeFileSync(path, "written\n", { mode: 0o600 })
      const read = readAged(path, 0n, bytes("written\n"))
      expect(Buffer.from(read.content).toString()).toBe("written\n")
      expect(read.mode).toBe(0o600)
      // An empty file expected empty, too.
      writeFileSync(path, "")
      expect(readAged(path, 0n, new Uint8Array(0)).content.byteLength).toBe(0)
    }),
  )
})
