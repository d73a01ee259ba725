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
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { PointCaptured, PointId, SessionId, TurnId } from "@rewind/contracts"
import { Effect, FastCheck as fc } from "effect"
import { openRewind, type Rewind } from "../src/index.js"
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

const git = (root: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "core.excludesFile=/dev/null", ...args], { cwd: root, encoding: "utf8" })

/** A repository at `root`, with nothing added yet. */
const gitInit = (root: string) => git(root, "init", "-q")

/** What `git ls-files` lists with `modes` and the standard excludes, sorted, each path once. */
const gitList = (root: string, ...modes: Array<string>) =>
  git(root, "ls-files", "-z", ...modes, "--exclude-standard")
    .split("\0")
    .filter((p) => p !== "")
    .sort()
    .filter((p, i, all) => p !== all[i - 1])

/** The untracked files no rule ignores, in a fresh repository of the tree. */
const gitView = (root: string) => {
  gitInit(root)
  return gitList(root, "-o")
}

/** What git lists of the tree: its tracked files and the untracked ones no rule ignores. */
const gitTrackedAndOthers = (root: string) => gitList(root, "-c", "-o")

/** Adds the picked files by force (tracked although a rule may ignore them); returns them. */
const forceAdd = (root: string, files: ReadonlyArray<string>, picks: ReadonlyArray<number>) => {
  const added = [...new Set(picks.map((i) => files[i % files.length]!))]
  if (added.length > 0) git(root, "add", "-f", "--", ...added)
  return added
}

/**
 * `use` with a session on the workspace at `root` (the store beside it) and `capture`, which takes
 * the point of a turn; the store is closed after.
 */
const withSession = async <A>(
  root: string,
  use: (session: {
    readonly rewind: Rewind
    readonly sessionId: SessionId
    readonly capture: (turn: string) => Promise<PointCaptured>
  }) => Promise<A>,
): Promise<A> => {
  const rewind = await openRewind({ workspaceRoot: root, dir: join(dirname(root), "store") })
  try {
    const session = await rewind.createSession({ title: "oracle", cwd: root })
    if (!session.ok) throw new Error(session.refusal.message)
    const sessionId = session.value.id as SessionId
    const capture = async (turn: string) => {
      const captured = await rewind.capturePoint(sessionId, turn as TurnId)
      if (!captured.ok || captured.value._tag !== "Captured") throw new Error("not captured")
      return captured.value.point
    }
    return await use({ rewind, sessionId, capture })
  } finally {
    await rewind.close()
  }
}

/**
 * The paths a point records: after every file is removed, the diff lists each as deleted.
 * `repeat`: a first point is taken, `repeat` edits the tree, and the second point is the one read
 * (a repeat capture reuses the first one's ignore decisions).
 */
const pointPaths = (root: string, repeat?: () => void) =>
  withSession(root, async ({ rewind, sessionId, capture }) => {
    if (repeat !== undefined) {
      await capture("t0")
      repeat()
    }
    const point = await capture("t1")
    for (const name of readdirSync(root))
      if (name !== ".git") rmSync(join(root, name), { recursive: true, force: true })
    const diff = await rewind.diffPoint(sessionId, point.pointId as PointId, { patches: false })
    if (!diff.ok) throw new Error(diff.refusal.message)
    return diff.value.entries.map((e) => e.path as string).sort()
  })

const writeTree = (
  root: string,
  files: ReadonlyArray<string>,
  ignoreFiles: ReadonlyMap<string, string>,
): ((path: string) => boolean) => {
  for (const f of files) {
    mkdirSync(join(root, dirname(f)), { recursive: true })
    writeFileSync(join(root, f), `${f}\n`)
  }
  for (const [dir, text] of ignoreFiles) writeFileSync(join(root, dir, ".gitignore"), text)
  // Rewind's one rule git does not have: a node_modules the rules in force there never name is
  // a dependency directory, left out (and reported). Returns which paths that leaves out.
  const named = (dir: string) =>
    [...ignoreFiles].some(
      ([at, text]) => text.includes("node_modules") && (at === "" || dir === at || dir.startsWith(`${at}/`)),
    )
  return (path: string) => {
    const parts = path.split("/")
    return parts
      .slice(0, -1)
      .some((part, i) => part === "node_modules" && !named(parts.slice(0, i).join("/")))
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
            const skipped = writeTree(root, files, ignoreFiles)
            const git = gitView(root).filter((p) => !skipped(p))
            expect(await pointPaths(root), JSON.stringify([...ignoreFiles])).toEqual(git)
          }),
          { numRuns: 25, seed: 2312 },
        ),
      ),
    120_000,
  )

  it.effect(
    "takes the files git tracks whatever the rules say: git ls-files -c -o --exclude-standard, first and repeat captures, index versions 2 to 4",
    () =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(
            tree,
            fc.array(fc.nat(), { minLength: 1, maxLength: 8 }),
            fc.constantFrom("2", "3", "4"),
            fc.boolean(),
            async ({ files, ignoreFiles }, picks, version, repeat) => {
              const root = join(tempDir("rewind-git-tracked-"), "ws")
              const skipped = writeTree(root, files, ignoreFiles)
              gitInit(root)
              // Force-added: tracked although a rule or a directory above ignores them (some
              // with untracked, ignored neighbours in the same ignored directory).
              const added = forceAdd(root, files, picks)
              git(root, "update-index", "--index-version", version)
              const tracked = new Set(git(root, "ls-files", "-z", "-c").split("\0"))
              const expected = gitTrackedAndOthers(root).filter((p) => tracked.has(p) || !skipped(p))
              const edit = () => writeFileSync(join(root, added[0]!), "edited\n")
              const context = JSON.stringify({ ignoreFiles: [...ignoreFiles], added, version })
              expect(await pointPaths(root, repeat ? edit : undefined), context).toEqual(expected)
            },
          ),
          { numRuns: 25, seed: 1812 },
        ),
      ),
    120_000,
  )

  it.effect(
    "a workspace below its repository's top takes what git lists there: the rules above it and info/exclude apply, tracked files are kept",
    () =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(
            tree,
            fc.array(fc.nat(), { minLength: 0, maxLength: 6 }),
            fc.nat(),
            fc.array(fc.constantFrom(...PATTERNS), { minLength: 1, maxLength: 3 }),
            fc.array(fc.constantFrom(...PATTERNS), { minLength: 1, maxLength: 4 }),
            async ({ files, ignoreFiles }, picks, pick, excludes, topRules) => {
              const top = join(tempDir("rewind-git-subdir-"), "repo")
              // Rules at the top always, so what lies above the workspace root has a say.
              const rules = new Map(ignoreFiles)
              rules.set("", `${topRules.join("\n")}\n${rules.get("") ?? ""}`)
              const skipped = writeTree(top, files, rules)
              gitInit(top)
              writeFileSync(join(top, ".git/info/exclude"), `${excludes.join("\n")}\n`)
              const added = forceAdd(top, files, picks)
              // A directory of the tree that git itself does not ignore (nor one above it): the
              // workspace root is always in scope, whatever a rule above it says.
              const dirs = [...new Set(files.map((f) => dirname(f)).filter((d) => d !== "."))].sort()
              const notIgnored = (dir: string) => {
                const parts = dir.split("/")
                return parts.every((_, i) => {
                  try {
                    git(top, "check-ignore", "-q", "--no-index", `${parts.slice(0, i + 1).join("/")}/`)
                    return false
                  } catch {
                    return true
                  }
                })
              }
              // (A root inside a node_modules is scanned: the skip list is for directories below it.)
              const candidates = dirs.filter((d) => !d.split("/").includes("node_modules") && notIgnored(d))
              fc.pre(candidates.length > 0)
              const sub = candidates[pick % candidates.length]!
              const tracked = new Set(git(top, "ls-files", "-z", "-c").split("\0"))
              const expected = gitTrackedAndOthers(top)
                .filter((p) => p.startsWith(`${sub}/`) && (tracked.has(p) || !skipped(p)))
                .map((p) => p.slice(sub.length + 1))
              const context = JSON.stringify({ rules: [...rules], excludes, added, sub })
              expect(await pointPaths(join(top, sub)), context).toEqual(expected)
            },
          ),
          { numRuns: 40, seed: 2024 },
        ),
      ),
    120_000,
  )

  it.effect(
    "a worktree (its .git a file naming a git directory elsewhere) has its index read: git ls-files -c -o --exclude-standard",
    () =>
      Effect.promise(async () => {
        const base = tempDir("rewind-git-worktree-")
        const main = join(base, "main")
        writeTree(
          main,
          ["build/tracked.js", "build/untracked.js", "src/a.js", "x.log"],
          new Map([["", "build/\n*.log\n"]]),
        )
        gitInit(main)
        git(main, "add", "-A")
        git(main, "add", "-f", "--", "build/tracked.js")
        git(main, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
        git(main, "worktree", "add", "-q", join(base, "wt"))
        const root = join(base, "wt")
        writeFileSync(join(root, "build/untracked.js"), "ignored\n")
        writeFileSync(join(root, "y.log"), "ignored\n")
        const expected = gitTrackedAndOthers(root)
        expect(expected).toEqual([".gitignore", "build/tracked.js", "src/a.js"])
        expect(await pointPaths(root)).toEqual(expected)
      }),
    60_000,
  )

  it.effect(
    "the search for the repository stops below the home directory and GIT_CEILING_DIRECTORIES: a home kept in git with `*` ignored leaves a project below it whole",
    () =>
      Effect.promise(async () => {
        const home = join(tempDir("rewind-git-home-"), "home")
        writeTree(home, ["dotfile", "projects/p/a.js", "projects/p/b/c.txt"], new Map([["", "*\n"]]))
        gitInit(home)
        git(home, "add", "-f", "--", "dotfile")
        const root = join(home, "projects/p")
        // git itself, from inside the project, ignores everything in it.
        expect(gitTrackedAndOthers(root)).toEqual([])
        const saved = { home: process.env.HOME, ceilings: process.env.GIT_CEILING_DIRECTORIES }
        try {
          process.env.HOME = home
          expect(await pointPaths(root)).toEqual(["a.js", "b/c.txt"])
          writeTree(home, ["projects/p/a.js", "projects/p/b/c.txt"], new Map())
          process.env.HOME = "/nonexistent-home"
          process.env.GIT_CEILING_DIRECTORIES = `/nowhere:${join(home, "projects")}`
          expect(await pointPaths(root)).toEqual(["a.js", "b/c.txt"])
          // Without a ceiling, git's answer. `*` ignores the root itself (`projects` matches):
          // git lists nothing, so the home's rules stop at the root and everything is taken.
          delete process.env.GIT_CEILING_DIRECTORIES
          writeTree(home, ["projects/p/a.js", "projects/p/b/c.txt"], new Map())
          expect(await pointPaths(root)).toEqual(["a.js", "b/c.txt"])
          // Rules that leave the root in scope apply below it, as git's do.
          writeTree(home, ["projects/p/a.js", "projects/p/b/c.txt"], new Map([["", "*.js\n"]]))
          expect(gitTrackedAndOthers(root)).toEqual(["b/c.txt"])
          expect(await pointPaths(root)).toEqual(["b/c.txt"])
        } finally {
          for (const [key, value] of [
            ["HOME", saved.home],
            ["GIT_CEILING_DIRECTORIES", saved.ceilings],
          ] as const)
            if (value === undefined) delete process.env[key]
            else process.env[key] = value
        }
      }),
    60_000,
  )

  it.effect(
    "a workspace the repository itself ignores (a scratch tree in its tmp/) is not left empty: the repository's rules stop at its root",
    () =>
      Effect.promise(async () => {
        for (const rule of ["tmp/", "tmp/**", "/tmp/*"]) {
          const top = join(tempDir("rewind-git-scratch-"), "repo")
          writeTree(
            top,
            ["src/a.js", "tmp/ws/a.js", "tmp/ws/b.log", "tmp/ws/sub/c.txt"],
            new Map([["", `${rule}\n*.log\n`]]),
          )
          gitInit(top)
          const root = join(top, "tmp/ws")
          // git lists nothing there: the whole tree is ignored.
          expect(gitTrackedAndOthers(root), rule).toEqual([])
          expect(await pointPaths(root), rule).toEqual(["a.js", "b.log", "sub/c.txt"])
        }
      }),
    60_000,
  )

  it.effect(
    "a directory taken only for its tracked file stays ignored for its other files in a repeat capture",
    () =>
      Effect.promise(async () => {
        const root = join(tempDir("rewind-git-tracked-"), "ws")
        // `build` is ignored as a directory; build/tracked.js is force-added, so a repeat capture
        // that reused "build was in scope" from the first point would take build/untracked.js.
        writeTree(
          root,
          ["build/tracked.js", "build/untracked.js", "build/sub/x.js", "src/a.js"],
          new Map([["", "build\n"]]),
        )
        gitInit(root)
        git(root, "add", "-f", "--", "build/tracked.js")
        const expected = ["build/tracked.js", "src/a.js"]
        expect(gitTrackedAndOthers(root).filter((p) => p !== ".gitignore")).toEqual(expected)
        const edit = () => writeFileSync(join(root, "src/a.js"), "edited\n")
        expect(await pointPaths(root, edit)).toEqual([".gitignore", ...expected])
      }),
    60_000,
  )

  it.effect(
    "a tracked file below an ignored directory that is now a FIFO is reported, as the listing reports one anywhere else",
    () =>
      Effect.promise(async () => {
        const root = join(tempDir("rewind-git-tracked-"), "ws")
        writeTree(root, ["build/pipe", "build/tracked.js", "src/a.js"], new Map([["", "build/\n"]]))
        gitInit(root)
        git(root, "add", "-f", "--", "build/pipe", "build/tracked.js")
        rmSync(join(root, "build/pipe"))
        execFileSync("mkfifo", [join(root, "build/pipe")])
        const point = await withSession(root, ({ capture }) => capture("t0"))
        expect(point.skipped.map((s) => [s.path, s.reason])).toEqual([["build/pipe", "not_a_regular_file"]])
        expect(point.files).toBe(3)
      }),
    60_000,
  )

  it.effect(
    "a restore puts back a tracked file the rules ignore, and leaves the ignored files beside it alone",
    () =>
      Effect.promise(async () => {
        const root = join(tempDir("rewind-git-tracked-"), "ws")
        writeTree(root, ["build/tracked.js", "build/untracked.js", "src/a.js"], new Map([["", "build/\n"]]))
        gitInit(root)
        git(root, "add", "-f", "--", "build/tracked.js")
        await withSession(root, async ({ rewind, sessionId, capture }) => {
          const pointId = (await capture("t0")).pointId as PointId
          writeFileSync(join(root, "build/tracked.js"), "agent edit\n")
          writeFileSync(join(root, "build/untracked.js"), "agent edit\n")
          const preview = await rewind.previewPointRestore(sessionId, pointId)
          if (!preview.ok) throw new Error(preview.refusal.message)
          expect(preview.value.token).toBeDefined()
          const restored = await rewind.restorePoint(sessionId, pointId, preview.value.token!)
          if (!restored.ok) throw new Error(restored.refusal.message)
        })
        expect(readFileSync(join(root, "build/tracked.js"), "utf8")).toBe("build/tracked.js\n")
        expect(readFileSync(join(root, "build/untracked.js"), "utf8")).toBe("agent edit\n")
      }),
    60_000,
  )
})
