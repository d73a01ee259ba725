// Names that are not UTF-8 (issue 20, item 10): a real directory holding a file `\xff.txt` and a
// directory `\xfe` (raw bytes) is scanned by the native scanner and by the JavaScript one. Both
// report each such entry, flagged `unsupportedName`, under its escaped display form, with its
// real `lstat`; neither drops it nor mangles it into U+FFFD.
import { mkdirSync, realpathSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { workspacePathProblem } from "@rewind/contracts"
import { Effect, Either } from "effect"
import { NodeWorkspace } from "../src/index.js"
import { escapedName } from "../src/internal/names.js"
import { tempDirectory } from "./fsFixture.js"

const bytes = (...parts: Array<string | ReadonlyArray<number>>) =>
  Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p))))

describe("escapedName", () => {
  it("escapes bytes outside well-formed UTF-8 and backslashes, and keeps the rest", () => {
    expect(escapedName(bytes([0xff], ".txt"))).toBe("\\xff.txt")
    expect(escapedName(bytes("é", [0xc3], "\\", "日"))).toBe("é\\xc3\\\\日")
    // An overlong form and an encoded surrogate are not UTF-8 either.
    expect(escapedName(Buffer.from([0xc0, 0xaf]))).toBe("\\xc0\\xaf")
    expect(escapedName(Buffer.from([0xed, 0xa0, 0x80]))).toBe("\\xed\\xa0\\x80")
    // Every form holds a backslash, so none is ever a workspace path.
    expect(workspacePathProblem(escapedName(Buffer.from([0xfe])))).toBeDefined()
  })
})

describe.each([
  ["native scanner", true],
  ["JavaScript scanner", false],
])("names that are not UTF-8 (%s)", (_, nativeScan) => {
  it.scoped.skipIf(nativeScan && !NodeWorkspace.nativeScanAvailable)(
    "are reported, flagged and escaped, beside the ordinary names",
    () =>
      Effect.gen(function* () {
        const root = realpathSync(yield* tempDirectory("names"))
        writeFileSync(bytes(root, "/", [0xff], ".txt"), "bad name\n")
        mkdirSync(bytes(root, "/", [0xfe]))
        writeFileSync(join(root, "ok.txt"), "good name\n")
        writeFileSync(join(root, "é.txt"), "good too\n")
        const workspace = yield* NodeWorkspace.make(root, { nativeScan })
        const [listing] = yield* workspace.scanDirectories([undefined])
        const entries = Either.getOrThrow(listing!)
        const summary = entries.map((e) => [e.name, e.stat.kind, e.unsupportedName === true])
        expect(summary).toEqual([
          ["\\xfe", "directory", true],
          ["\\xff.txt", "file", true],
          ["ok.txt", "file", false],
          ["é.txt", "file", false],
        ])
        expect(entries.find((e) => e.name === "\\xff.txt")!.stat.size).toBe("bad name\n".length)
        expect(entries.some((e) => e.name.includes("\uFFFD"))).toBe(false)
        // The single-directory scan says the same.
        expect(yield* workspace.scanDirectory()).toEqual(entries)
      }),
  )
})
