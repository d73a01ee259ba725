/**
 * git is the oracle for what a capture takes in: on generated trees with ignore files at several
 * levels (negations, anchors, `**`, directory-only patterns, character classes negated with `!`
 * and `^`, escapes, trailing spaces, mixed case), the files a point records through the embedded
 * default (`openRewind`) are exactly what `git ls-files -o --exclude-standard` lists in a fresh
 * repository of the same tree. Built from differences found against webpack, jest, vite and a
 * fuzzing run: the library's case-insensitive default, its parent rule per ignore file, its
 * `[!a]`, its escaped and bracketed `*` and `?`, and the skip list over rules that name
 * `node_modules`. Needs `git` on the PATH.
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { PointId, SessionId, TurnId } from "@rewind/contracts"
import { Effect, FastCheck as fc } from "effect"
import { openRewind } from "../src/index.js"
import { tempDir } from "./storeFixture.js"

const NAMES = [
  "a",
  "b",
  "ab",
  "bb",
  "src",
  "lib",
  "lib2",
  "build",
  "Build",
  "dist",
  "deep",
  "x.log",
  "keep.log",
  "Keep.LOG",
  "y.txt",
  "doc.md",
  "t1",
  ".hidden",
  "foo bar",
  "q[1]",
  "#h",
  "!bang",
  "c~",
  "b*",
  "a?c",
  "node_modules",
]
const PATTERNS = [
  "*.log",
  "!keep.log",
  "build",
  "build/",
  "/dist",
  "dist/",
  "**/deep",
  "deep/**",
  "a/**/b",
  "src/*.txt",
  "!src/y.txt",
  "*.md",
  "!/lib/",
  "lib",
  "a*",
  "?b",
  "[ab]",
  "[!a]b",
  "[^a]b",
  "!a",
  "\\!bang",
  "ab/",
  "/src/**/x.log",
  "**/b/",
  "t[0-9]",
  "foo\\ bar",
  "*/y.txt",
  "!**/keep.log",
  ".hidden",
  "!.hidden/",
  "b/**",
  "\\#h",
  "/*",
  "!/src",
  "*~",
  "lib?",
  "!lib2",
  "node_modules",
  "/node_modules",
  "!node_modules/",
  "deep/",
  "!deep/",
  "*.txt/",
  "abc ",
  "b\\*",
  "a\\?c",
  "b[*]",
  "a[?]c",
]

/** A tree: files (no path both a file and a directory) and ignore files in some of its directories. */
const tree = fc
  .tuple(
    fc.uniqueArray(fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 4 }), {
      minLength: 5,
      maxLength: 30,
      selector: (parts) => parts.join("/"),
    }),
    fc.array(fc.tuple(fc.nat(), fc.array(fc.constantFrom(...PATTERNS), { minLength: 1, maxLength: 6 })), {
      minLength: 1,
      maxLength: 4,
    }),
  )
  .map(([paths, ignores]) => {
    const files: Array<string> = []
    for (const p of paths.map((parts) => parts.join("/")).sort((x, y) => x.length - y.length)) {
      const clash = files.some((f) => p.startsWith(`${f}/`) || f.startsWith(`${p}/`))
      if (!clash) files.push(p)
    }
    const dirs = [...new Set(["", ...files.map((f) => dirname(f)).filter((d) => d !== ".")])]
    const ignoreFiles = new Map<string, string>()
    for (const [pick, lines] of ignores) ignoreFiles.set(dirs[pick % dirs.length]!, `${lines.join("\n")}\n`)
    return { files, ignoreFiles }
  })

const gitView = (root: string) => {
  execFileSync("git", ["init", "-q"], { cwd: root })
  const out = execFileSync(
    "git",
    ["-c", "core.excludesFile=/dev/null", "ls-files", "-z", "-o", "--exclude-standard"],
    {
      cwd: root,
      encoding: "utf8",
    },
  )
  return out
    .split("\0")
    .filter((p) => p !== "")
    .sort()
}

/** The paths a point records: after every file is removed, the diff lists each as deleted. */
const pointPaths = async (root: string) => {
  const rewind = await openRewind({ workspaceRoot: root, dir: join(dirname(root), "store") })
  try {
    const session = await rewind.createSession({ title: "oracle", cwd: root })
    if (!session.ok) throw new Error(session.refusal.message)
    const sessionId = session.value.id as SessionId
    const captured = await rewind.capturePoint(sessionId, "t1" as TurnId)
    if (!captured.ok || captured.value._tag !== "Captured") throw new Error("not captured")
    for (const name of readdirSync(root))
      if (name !== ".git") rmSync(join(root, name), { recursive: true, force: true })
    const diff = await rewind.diffPoint(sessionId, captured.value.point.pointId as PointId, {
      patches: false,
    })
    if (!diff.ok) throw new Error(diff.refusal.message)
    return diff.value.entries.map((e) => e.path as string).sort()
  } finally {
    await rewind.close()
  }
}

describe("what a capture takes in, against git", () => {
  it.effect(
    "is what git ls-files -o --exclude-standard lists, on generated trees",
    () =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(tree, async ({ files, ignoreFiles }) => {
            const root = join(tempDir("rewind-git-oracle-"), "ws")
            for (const f of files) {
              mkdirSync(join(root, dirname(f)), { recursive: true })
              writeFileSync(join(root, f), `${f}\n`)
            }
            for (const [dir, text] of ignoreFiles) writeFileSync(join(root, dir, ".gitignore"), text)
            // Rewind's one rule git does not have: a node_modules the rules in force there never
            // name is a dependency directory, left out (and reported).
            const named = (dir: string) =>
              [...ignoreFiles].some(
                ([at, text]) =>
                  text.includes("node_modules") && (at === "" || dir === at || dir.startsWith(`${at}/`)),
              )
            const skipped = (path: string) => {
              const parts = path.split("/")
              return parts
                .slice(0, -1)
                .some((part, i) => part === "node_modules" && !named(parts.slice(0, i).join("/")))
            }
            const git = gitView(root).filter((p) => !skipped(p))
            expect(await pointPaths(root), JSON.stringify([...ignoreFiles])).toEqual(git)
          }),
          { numRuns: 25, seed: 2312 },
        ),
      ),
    120_000,
  )
})
