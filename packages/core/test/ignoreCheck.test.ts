// The ignore check decides from one `statMany` answer in synchronous code and keeps each
// directory's rules between operations while its ignore files' stats are unchanged
// (`ignoreRulesCache.ts`). Pinned here: it decides exactly as the check it replaced
// (`support/oldIgnoreCheck.ts`) over random trees that change between operations (nested ignore
// files with negations, `.git` files and directories, store and skip-listed directories, symlinked
// directories and ignore files); an ignore file edited in place with the same size, mtime and
// inode is read again (its ctime moved); and a "racy" file, whose timestamps are too recent to
// trust, is read again even when its whole stat is unchanged. The same verdicts when the stats come
// from a restore plan's directory listings (`knownStats`) instead of `statMany`.
import { describe, expect, it } from "@effect/vitest"
import { type FileStat, PathRefused, type WorkspacePath } from "@rewind/contracts"
import { Effect, Either, FastCheck as fc, Option, TestClock } from "effect"
import { Workspace, type WorkspaceService } from "../src/ports/Workspace.js"
import { knownStats, listDirectoriesOf } from "../src/snapshot/pointInspection.js"
import { makeIgnoreCheck } from "../src/workspace/ignoreCheck.js"
import { RACY_MARGIN_NS } from "../src/workspace/ignoreRulesCache.js"
import { makeOldIgnoreCheck } from "./support/oldIgnoreCheck.js"

/** The Clock of these tests: far after every timestamp the fake gives, unless a test says otherwise. */
const NOW_MS = 1_800_000_000_000

type Node =
  | { readonly kind: "file"; content: Uint8Array; stat: FileStat }
  | { readonly kind: "directory" | "symlink"; stat: FileStat }

/**
 * A Workspace over a map, with only what the check uses (`stat`, `statMany`, `read`), confined as
 * the port says: a symlink on the way is refused, a read never follows one. `reads` counts reads.
 */
const makeFakeWorkspace = () => {
  const nodes = new Map<string, Node>()
  let inode = 1n
  let tick = 1_000_000_000n
  const stamp = (size: number, kind: FileStat["kind"]): FileStat => {
    tick += 1_000n
    return { kind, size, mode: 0o644, mtimeNs: tick, ctimeNs: tick, inode: inode++ }
  }
  const reads: Array<string> = []
  const refused = (path: string) =>
    new PathRefused({ path, reason: "symlink_in_path", message: `${path}: symlink on the way` })
  const throughLink = (path: string) => {
    const parts = path.split("/")
    for (let i = 1; i < parts.length; i++)
      if (nodes.get(parts.slice(0, i).join("/"))?.kind === "symlink") return true
    return false
  }
  const statNow = (path: string): Either.Either<Option.Option<FileStat>, PathRefused> =>
    throughLink(path)
      ? Either.left(refused(path))
      : Either.right(Option.map(Option.fromNullable(nodes.get(path)), (n) => n.stat))
  const service = {
    root: "/fake",
    stat: (path: WorkspacePath) => Effect.suspend(() => statNow(path)),
    statMany: (paths: ReadonlyArray<WorkspacePath>) => Effect.sync(() => paths.map(statNow)),
    // A listing as the port gives it: a directory's entries with their `lstat`, refused through
    // a link or when the path is not a directory (the restore plan's listings, `knownStats`).
    scanDirectories: (directories: ReadonlyArray<WorkspacePath | undefined>) =>
      Effect.sync(() =>
        directories.map((d) => {
          const dir = d ?? ""
          if (dir !== "" && (throughLink(dir) || nodes.get(dir)?.kind !== "directory"))
            return Either.left(refused(dir))
          const entries = [...nodes]
            .filter(([p]) => (p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : "") === dir)
            .map(([p, n]) => ({ name: p.slice(p.lastIndexOf("/") + 1), stat: n.stat }))
          return Either.right(entries)
        }),
      ),
    read: (path: WorkspacePath) =>
      Effect.suspend(() => {
        reads.push(path)
        const node = nodes.get(path)
        if (throughLink(path) || node?.kind === "symlink") return Effect.fail(refused(path))
        if (node === undefined) return Effect.succeed(Option.none())
        if (node.kind !== "file")
          return Effect.fail(new PathRefused({ path, reason: "not_a_regular_file", message: path }))
        return Effect.succeed(Option.some({ content: node.content, mode: 0o644 }))
      }),
  } as unknown as WorkspaceService
  const ensureDirs = (path: string) => {
    const parts = path.split("/")
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join("/")
      if (!nodes.has(dir)) nodes.set(dir, { kind: "directory", stat: stamp(0, "directory") })
    }
  }
  return {
    service,
    reads,
    nodes,
    /** A new file (a new inode, as an atomic replace gives). */
    put: (path: string, text: string) => {
      if (nodes.get(path)?.kind === "directory") return
      ensureDirs(path)
      const content = new TextEncoder().encode(text)
      nodes.set(path, { kind: "file", content, stat: stamp(content.length, "file") })
    },
    /** An edit in place: the same inode and mtime; only the ctime moves (and the size, if it changed). */
    editInPlace: (path: string, text: string) => {
      const node = nodes.get(path)
      if (node?.kind !== "file") return
      tick += 1_000n
      node.content = new TextEncoder().encode(text)
      node.stat = { ...node.stat, size: node.content.length, ctimeNs: tick }
    },
    dir: (path: string) => {
      if (nodes.has(path)) return
      ensureDirs(path)
      nodes.set(path, { kind: "directory", stat: stamp(0, "directory") })
    },
    link: (path: string) => {
      if (nodes.get(path)?.kind === "directory") return
      ensureDirs(path)
      nodes.set(path, { kind: "symlink", stat: stamp(3, "symlink") })
    },
    remove: (path: string) => {
      for (const key of [...nodes.keys()]) if (key === path || key.startsWith(`${path}/`)) nodes.delete(key)
    },
  }
}
type Fake = ReturnType<typeof makeFakeWorkspace>

const render = (e: Option.Option<{ readonly by: string }>) =>
  Option.isNone(e) ? "free" : JSON.stringify(e.value)

/** Each path's verdict from a fresh checker (one operation). */
const verdicts = (
  fake: Fake,
  make: typeof makeIgnoreCheck | typeof makeOldIgnoreCheck,
  paths: ReadonlyArray<readonly [string, boolean]>,
) =>
  Effect.gen(function* () {
    const check = yield* make()
    const out: Array<string> = []
    for (const [path, isDirectory] of paths)
      out.push(render(yield* check(path as WorkspacePath, isDirectory)))
    return out
  }).pipe(Effect.provideService(Workspace, fake.service))

const segment = fc.constantFrom("a", "b", "keep", "node_modules", ".rewind", "x.log", "y.tmp", "deep")
const relPath = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join("/"))
const dirPath = fc.array(segment, { minLength: 0, maxLength: 3 }).map((s) => s.join("/"))
const ruleLine = fc.constantFrom(
  "*.log",
  "!keep.log",
  "!x.log",
  "b/",
  "/a",
  "node_modules",
  "!node_modules",
  "!.rewind",
  "keep/",
  "!keep",
  "**/y.tmp",
  "a/**",
  "*.tmp",
  "!b",
  "deep/*",
  "# comment",
  "",
)
const ignoreText = fc.array(ruleLine, { maxLength: 6 }).map((lines) => lines.join("\n"))
const ignoreName = fc.constantFrom(".gitignore", ".rewindignore")
const within = (dir: string, name: string) => (dir === "" ? name : `${dir}/${name}`)

/** One change to the tree between two operations. */
const change = fc.oneof(
  fc.record({ op: fc.constant("ignore" as const), dir: dirPath, name: ignoreName, text: ignoreText }),
  fc.record({ op: fc.constant("editInPlace" as const), dir: dirPath, name: ignoreName, text: ignoreText }),
  fc.record({ op: fc.constant("file" as const), path: relPath }),
  fc.record({ op: fc.constant("gitFile" as const), dir: dirPath }),
  fc.record({ op: fc.constant("gitDir" as const), dir: dirPath }),
  fc.record({ op: fc.constant("linkDir" as const), path: relPath }),
  fc.record({ op: fc.constant("linkIgnore" as const), dir: dirPath, name: ignoreName }),
  fc.record({ op: fc.constant("remove" as const), path: relPath }),
)
type Change = typeof change extends fc.Arbitrary<infer C> ? C : never

const apply = (fake: Fake, c: Change) => {
  switch (c.op) {
    case "ignore":
      return fake.put(within(c.dir, c.name), c.text)
    case "editInPlace":
      return fake.editInPlace(within(c.dir, c.name), c.text)
    case "file":
      return fake.put(c.path, "content")
    case "gitFile":
      return c.dir === "" ? undefined : fake.put(`${c.dir}/.git`, "gitdir: elsewhere")
    case "gitDir":
      return c.dir === "" ? undefined : fake.dir(`${c.dir}/.git`)
    case "linkDir":
      return fake.link(c.path)
    case "linkIgnore":
      return fake.link(within(c.dir, c.name))
    case "remove":
      return fake.remove(c.path)
  }
}

describe("the ignore check", () => {
  it.effect("decides exactly as the check it replaced, over random trees changed between operations", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW_MS)
      const scenario = fc.record({
        rounds: fc.array(fc.array(change, { maxLength: 6 }), { minLength: 1, maxLength: 5 }),
        asked: fc.array(fc.tuple(relPath, fc.boolean()), { minLength: 1, maxLength: 12 }),
      })
      const samples = fc.sample(scenario, { numRuns: 150, seed: 20261205 })
      let decided = 0
      for (const { rounds, asked } of samples) {
        // One Workspace for the whole scenario: the new check keeps rules across its operations.
        const fake = makeFakeWorkspace()
        for (const round of rounds) {
          for (const c of round) apply(fake, c)
          const expected = yield* verdicts(fake, makeOldIgnoreCheck, asked)
          const actual = yield* verdicts(fake, makeIgnoreCheck, asked)
          expect(actual).toEqual(expected)
          // With the stats a restore's plan takes from its listings of the asked paths'
          // directories and their ancestors: the very same verdicts.
          const listings = yield* Effect.provideService(
            listDirectoriesOf(asked.map(([p]) => p as WorkspacePath)),
            Workspace,
            fake.service,
          )
          const known = knownStats(listings)
          expect(yield* verdicts(fake, () => makeIgnoreCheck(known), asked)).toEqual(expected)
          decided += expected.filter((v) => v !== "free").length
        }
      }
      // The scenarios do exclude things (a property over trees that exclude nothing proves little).
      expect(decided).toBeGreaterThan(100)
    }),
  )

  it.effect("keeps unchanged rules between operations, and reads an ignore file edited in place again", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW_MS)
      const fake = makeFakeWorkspace()
      fake.put(".gitignore", "*.log\n")
      fake.put("src/a.ts", "x")
      const asked = [["x.log", false] as const, ["x.tmp", false] as const, ["src/a.ts", false] as const]
      expect(yield* verdicts(fake, makeIgnoreCheck, asked)).toEqual([
        JSON.stringify({ by: "rules", rulesOf: "" }),
        "free",
        "free",
      ])
      expect(fake.reads).toEqual([".gitignore"])
      // Unchanged: the next operation reads nothing.
      yield* verdicts(fake, makeIgnoreCheck, asked)
      expect(fake.reads).toEqual([".gitignore"])
      // Same size, same mtime, same inode: only the ctime says the bytes changed.
      const before = fake.nodes.get(".gitignore")!.stat
      fake.editInPlace(".gitignore", "*.tmp\n")
      const after = fake.nodes.get(".gitignore")!.stat
      expect([after.size, after.mtimeNs, after.inode]).toEqual([before.size, before.mtimeNs, before.inode])
      expect(yield* verdicts(fake, makeIgnoreCheck, asked)).toEqual([
        "free",
        JSON.stringify({ by: "rules", rulesOf: "" }),
        "free",
      ])
      expect(fake.reads).toEqual([".gitignore", ".gitignore"])
    }),
  )

  it.effect("reads a racy ignore file again even when its whole stat is unchanged", () =>
    Effect.gen(function* () {
      const fake = makeFakeWorkspace()
      fake.put(".gitignore", "*.log\n")
      // The Clock within the margin of the file's timestamps: a change in the same tick would not
      // show in its stat, so what was read may not be kept.
      const stat = fake.nodes.get(".gitignore")!.stat
      yield* TestClock.setTime(Number((stat.ctimeNs + RACY_MARGIN_NS / 2n) / 1_000_000n))
      const asked = [["x.log", false] as const, ["x.tmp", false] as const]
      expect(yield* verdicts(fake, makeIgnoreCheck, asked)).toEqual([
        JSON.stringify({ by: "rules", rulesOf: "" }),
        "free",
      ])
      // Changed bytes under an identical stat (a coarse-timestamp filesystem, same tick).
      const node = fake.nodes.get(".gitignore")!
      if (node.kind === "file") node.content = new TextEncoder().encode("*.tmp\n")
      expect(fake.nodes.get(".gitignore")!.stat).toEqual(stat)
      expect(yield* verdicts(fake, makeIgnoreCheck, asked)).toEqual([
        "free",
        JSON.stringify({ by: "rules", rulesOf: "" }),
      ])
      expect(fake.reads).toEqual([".gitignore", ".gitignore"])
    }),
  )
})
