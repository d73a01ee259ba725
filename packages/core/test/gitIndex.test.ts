/**
 * The git index reader (`workspace/gitIndex.ts`) against indexes written here by an encoder that
 * follows git's format document (versions 2, 3 and 4; SHA-1 and SHA-256 object names; extended
 * flags, stages, long names, extensions): what it reads is exactly the regular files and symlinks
 * named, once each, and every malformed or unsupported file is refused rather than half read.
 * `rewind/test/gitIgnoreOracle.test.ts` checks the same against indexes git itself writes.
 */
import { createHash } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck as fc } from "effect"
import { parseGitIndex, type TrackedFiles, trackedBelow } from "../src/workspace/gitIndex.js"

interface Entry {
  readonly name: Uint8Array
  readonly mode: number
  readonly stage?: number
  readonly skipWorktree?: boolean
}

const utf8 = (s: string) => new TextEncoder().encode(s)

/** Git's offset varint (used by version 4 for the bytes a name strips from its predecessor's). */
const varint = (value: number) => {
  // Each continuation byte holds one less than the rest it stands for: git adds one back per byte.
  const fixed: Array<number> = []
  let rest = value
  fixed.unshift(rest & 127)
  rest >>>= 7
  while (rest > 0) {
    rest -= 1
    fixed.unshift(128 | (rest & 127))
    rest >>>= 7
  }
  return fixed
}

const encodeIndex = (
  entries: ReadonlyArray<Entry>,
  options: {
    version: 2 | 3 | 4
    hashSize?: 20 | 32
    extensions?: ReadonlyArray<[string, number]>
    /** `zero`: git's `index.skipHash`, a trailer of zeros. */
    checksum?: "digest" | "zero"
  },
): Uint8Array => {
  const { version } = options
  const hashSize = options.hashSize ?? 20
  const bytes: Array<number> = []
  const u32 = (v: number) => bytes.push((v >>> 24) & 255, (v >>> 16) & 255, (v >>> 8) & 255, v & 255)
  const u16 = (v: number) => bytes.push((v >>> 8) & 255, v & 255)
  bytes.push(...utf8("DIRC"))
  u32(version)
  u32(entries.length)
  let previous: Uint8Array = new Uint8Array(0)
  for (const e of entries) {
    const start = bytes.length
    for (let i = 0; i < 6; i++) u32(i + 1) // ctime, mtime, dev, ino
    u32(e.mode)
    u32(0) // uid
    u32(0) // gid
    u32(e.name.byteLength) // size (any)
    for (let i = 0; i < hashSize; i++) bytes.push(i)
    const extended = version >= 3 && e.skipWorktree === true
    u16((extended ? 0x4000 : 0) | ((e.stage ?? 0) << 12) | Math.min(e.name.byteLength, 0xfff))
    if (extended) u16(0x4000)
    if (version === 4) {
      let common = 0
      while (
        common < previous.byteLength &&
        common < e.name.byteLength &&
        previous[common] === e.name[common]
      )
        common++
      bytes.push(...varint(previous.byteLength - common), ...e.name.subarray(common), 0)
    } else {
      bytes.push(...e.name)
      const size = (bytes.length - start + 8) & ~7
      while (bytes.length - start < size) bytes.push(0)
    }
    previous = e.name
  }
  for (const [signature, length] of options.extensions ?? []) {
    bytes.push(...utf8(signature))
    u32(length)
    for (let i = 0; i < length; i++) bytes.push(0)
  }
  const body = Uint8Array.from(bytes)
  const trailer =
    options.checksum === "zero"
      ? new Uint8Array(hashSize)
      : createHash(hashSize === 20 ? "sha1" : "sha256")
          .update(body)
          .digest()
  return Uint8Array.from([...body, ...trailer])
}

const FILE = 0o100644
const EXEC = 0o100755
const LINK = 0o120000
const GITLINK = 0o160000
const DIR = 0o040000

const read = (bytes: Uint8Array) => {
  const parsed = parseGitIndex(bytes)
  if (Either.isLeft(parsed)) throw new Error(parsed.left)
  return parsed.right
}

const byBytes = (a: Uint8Array, b: Uint8Array) => {
  for (let i = 0; i < Math.min(a.byteLength, b.byteLength); i++) if (a[i] !== b[i]) return a[i]! - b[i]!
  return a.byteLength - b.byteLength
}

/** What `byDirectory` visits, each directory once, in the order visited. */
const grouped = (tracked: TrackedFiles) => {
  const out: Array<[string, ReadonlyArray<string>]> = []
  tracked.byDirectory((directory, names) => out.push([directory, [...names]]))
  return out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
}

/** The same, from the paths (in index order): each parent directory with its names in that order. */
const groupedPaths = (paths: ReadonlyArray<string>) => {
  const by = new Map<string, Array<string>>()
  for (const path of paths) {
    const slash = path.lastIndexOf("/")
    const directory = slash < 0 ? "" : path.slice(0, slash)
    by.set(directory, [...(by.get(directory) ?? []), path.slice(slash + 1)])
  }
  return [...by].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
}

const segment = fc.constantFrom("a", "b", "src", "lib", "node_modules", "x.js", "é", "日本", "a b", "z~", "A")
const entryArb = fc.record({
  path: fc.array(segment, { minLength: 1, maxLength: 4 }).map((p) => p.join("/")),
  mode: fc.constantFrom(FILE, FILE, EXEC, LINK, GITLINK, DIR),
  stages: fc.constantFrom(0, 0, 0, 3),
  skipWorktree: fc.boolean(),
})

describe("git index", () => {
  it("reads the regular files and symlinks of any version, once each, in order", () =>
    fc.assert(
      fc.property(
        fc.uniqueArray(entryArb, { selector: (e) => e.path, maxLength: 40 }),
        fc.constantFrom<2 | 3 | 4>(2, 3, 4),
        fc.constantFrom<20 | 32>(20, 32),
        fc.constantFrom<"digest" | "zero">("digest", "zero"),
        (drawn, version, hashSize, checksum) => {
          const sorted = [...drawn].sort((x, y) => byBytes(utf8(x.path), utf8(y.path)))
          const entries: Array<Entry> = []
          for (const e of sorted) {
            const skipWorktree = version >= 3 && e.skipWorktree
            // A conflicted path: stages 1 to 3, side by side.
            if (e.stages === 3)
              for (const stage of [1, 2, 3]) entries.push({ name: utf8(e.path), mode: e.mode, stage })
            else entries.push({ name: utf8(e.path), mode: e.mode, skipWorktree })
          }
          const expected = sorted
            .filter(
              (e) =>
                (e.mode === FILE || e.mode === EXEC || e.mode === LINK) &&
                !(version >= 3 && e.skipWorktree && e.stages === 0),
            )
            .map((e) => e.path)
          const tracked = read(
            encodeIndex(entries, { version, hashSize, checksum, extensions: [["TREE", 13]] }),
          )
          expect(tracked.atOrBelow("")).toEqual(expected)
          expect(grouped(tracked)).toEqual(groupedPaths(expected))
          // Below a prefix (a workspace in a subdirectory of its repository): the same, relative.
          const below = trackedBelow(tracked, "a")
          expect(grouped(below)).toEqual(
            groupedPaths(expected.filter((p) => p.startsWith("a/")).map((p) => p.slice(2))),
          )
          for (const e of sorted) expect(tracked.has(e.path)).toBe(expected.includes(e.path))
          for (const dir of ["a", "src", "node_modules", "a/b"])
            expect(tracked.atOrBelow(dir)).toEqual(
              expected.filter((p) => p === dir || p.startsWith(`${dir}/`)),
            )
        },
      ),
      { numRuns: 200, seed: 23 },
    ))

  it("visits each directory once with the names tracked in it, however its subdirectories interleave", () => {
    const paths = ["a.txt", "a/a", "a/b/c/d", "a/b/e", "a/b0", "a/b.c", "a/z", "b", "é/x", "é/y/z"].sort(
      (x, y) => byBytes(utf8(x), utf8(y)),
    )
    const tracked = read(
      encodeIndex(
        paths.map((p) => ({ name: utf8(p), mode: FILE })),
        { version: 2 },
      ),
    )
    expect(grouped(tracked)).toEqual([
      ["", ["a.txt", "b"]],
      ["a", ["a", "b.c", "b0", "z"]],
      ["a/b", ["e"]],
      ["a/b/c", ["d"]],
      ["é", ["x"]],
      ["é/y", ["z"]],
    ])
    expect(grouped(trackedBelow(tracked, "a"))).toEqual([
      ["", ["a", "b.c", "b0", "z"]],
      ["b", ["e"]],
      ["b/c", ["d"]],
    ])
  })

  it("reads a name of 4095 bytes or more, whose length the flags cannot hold", () => {
    const long = `${"d/".repeat(1000)}${"f".repeat(3000)}`
    for (const version of [2, 3, 4] as const) {
      const tracked = read(
        encodeIndex(
          [
            { name: utf8("a"), mode: FILE },
            { name: utf8(long), mode: FILE },
          ],
          { version },
        ),
      )
      expect(tracked.atOrBelow("")).toEqual(["a", long])
    }
  })

  it("reads a version 4 index whose names, written out, are many times its size", () => {
    // Each name shares all but a few bytes with the one before: the file holds those few.
    const names = Array.from(
      { length: 300 },
      (_, i) => `${"deep/".repeat(100)}f${String(i).padStart(3, "0")}`,
    )
    const bytes = encodeIndex(
      names.map((name) => ({ name: utf8(name), mode: FILE })),
      { version: 4 },
    )
    expect(names.join("").length).toBeGreaterThan(bytes.byteLength * 5)
    expect(read(bytes).atOrBelow("")).toEqual(names)
  })

  it("leaves out a name that is not UTF-8 and keeps the rest", () => {
    const bad = Uint8Array.from([0x62, 0xff, 0x2e, 0x6a, 0x73])
    const tracked = read(
      encodeIndex(
        [
          { name: utf8("a.js"), mode: FILE },
          { name: bad, mode: FILE },
          { name: utf8("c.js"), mode: FILE },
        ],
        { version: 2 },
      ),
    )
    expect(tracked.atOrBelow("")).toEqual(["a.js", "c.js"])
    expect(tracked.has("b\uFFFD.js")).toBe(false)
  })

  it("gives the same identity for the same paths and another for other paths", () => {
    const one = encodeIndex([{ name: utf8("a"), mode: FILE }], { version: 2 })
    const two = encodeIndex([{ name: utf8("a"), mode: EXEC }], { version: 2 })
    const other = encodeIndex([{ name: utf8("b"), mode: FILE }], { version: 2 })
    expect(read(one).identity).toBe(read(two).identity)
    expect(read(one).identity).not.toBe(read(other).identity)
  })

  it("refuses what it cannot read whole: signature, version, truncation, a split index, overrun", () => {
    const good = encodeIndex([{ name: utf8("a/b.js"), mode: FILE }], { version: 2 })
    const refused = (bytes: Uint8Array) => Either.isLeft(parseGitIndex(bytes))
    expect(refused(new Uint8Array(4))).toBe(true)
    expect(refused(Uint8Array.from([...utf8("DIRX"), ...good.subarray(4)]))).toBe(true)
    const v5 = good.slice()
    v5[7] = 5
    expect(refused(v5)).toBe(true)
    for (const cut of [13, 40, 70, good.byteLength - 21]) expect(refused(good.subarray(0, cut))).toBe(true)
    expect(
      refused(encodeIndex([{ name: utf8("a"), mode: FILE }], { version: 2, extensions: [["link", 20]] })),
    ).toBe(true)
    const more = encodeIndex([{ name: utf8("a/b.js"), mode: FILE }], { version: 2, checksum: "zero" })
    more[11] = 2 // claims two entries, holds one
    expect(refused(more)).toBe(true)
    // Read while git rewrote it: the trailer is not the digest of what came before.
    const torn = good.slice()
    torn[20] = torn[20]! ^ 1
    expect(refused(torn)).toBe(true)
    expect(
      refused(
        encodeIndex([{ name: utf8("a"), mode: FILE }], {
          version: 2,
          checksum: "zero",
          extensions: [["link", 20]],
        }),
      ),
    ).toBe(true)
    // An extended entry in a version 2 index.
    const v3 = encodeIndex([{ name: utf8("a"), mode: FILE, skipWorktree: true }], { version: 3 })
    const asV2 = v3.slice(0, v3.byteLength - 20)
    asV2[7] = 2
    expect(refused(Uint8Array.from([...asV2, ...createHash("sha1").update(asV2).digest()]))).toBe(true)
  })
})
