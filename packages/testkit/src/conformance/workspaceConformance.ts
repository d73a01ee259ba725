/**
 * The Workspace conformance suite: confinement (no `..`, no absolute paths, no NUL, and no symlink
 * ever followed, inside the root or out, for reads, writes, deletes, scans and the directories a
 * write creates), atomic writes that keep the mode, deletes that never remove a directory or a
 * symlink's target, and stat/list/readLink/symlink behaviour. Every Workspace adapter runs it with
 * its own fixture.
 */
import { describe, expect, it } from "@effect/vitest"
import type { WorkspacePath } from "@rewind/contracts"
import { Effect, Either, Option, type Scope } from "effect"
import { expectedReadConformance } from "./expectedReadConformance.js"
import type { WorkspaceFixture } from "./workspaceFixture.js"

export interface WorkspaceHarness {
  /** A fresh root (with a sentinel directory outside it) for one test. */
  readonly make: Effect.Effect<WorkspaceFixture, unknown, Scope.Scope>
}

const p = (path: string) => path as WorkspacePath
const text = (s: string) => new TextEncoder().encode(s)
const decode = (b: Uint8Array) => new TextDecoder().decode(b)

const refusalOfPath = <A, E extends { _tag: string }>(effect: Effect.Effect<A, E>) =>
  Effect.flatMap(Effect.either(effect), (result) =>
    result._tag === "Left" && result.left._tag === "PathRefused"
      ? Effect.succeed(result.left as unknown as { reason: string; message: string })
      : Effect.dieMessage(`expected PathRefused, got ${JSON.stringify(result)}`),
  )

export const workspaceConformance = (name: string, harness: WorkspaceHarness): void => {
  describe(`Workspace conformance: ${name}`, () => {
    it.scoped("writes atomically (parents created, nothing left behind) and reads back", () =>
      Effect.gen(function* () {
        const { workspace, readRaw } = yield* harness.make
        expect(Option.isNone(yield* workspace.read(p("src/deep/new.ts")))).toBe(true)
        yield* workspace.write(p("src/deep/new.ts"), text("export {}\n"))
        const read = yield* workspace.read(p("src/deep/new.ts"))
        expect(Option.map(read, (f) => decode(f.content))).toEqual(Option.some("export {}\n"))
        expect(yield* readRaw("src/deep/new.ts")).toBe("export {}\n")
        yield* workspace.write(p("src/deep/new.ts"), text("export const x = 1\n"))
        expect((yield* workspace.list(p("src/deep"))).map((e) => e.name)).toEqual(["new.ts"])
        expect(yield* workspace.list()).toEqual([{ name: "src", kind: "directory" }])
      }),
    )

    it.scoped("keeps an existing file's mode, and sets an explicit one exactly", () =>
      Effect.gen(function* () {
        const { workspace, plantFile } = yield* harness.make
        yield* plantFile("bin/run.sh", "#!/bin/sh\n", 0o755)
        yield* workspace.write(p("bin/run.sh"), text("#!/bin/sh\necho hi\n"))
        const stat = Option.getOrThrow(yield* workspace.stat(p("bin/run.sh")))
        expect(stat.mode).toBe(0o755)
        expect(Option.getOrThrow(yield* workspace.read(p("bin/run.sh"))).mode).toBe(0o755)
        yield* workspace.write(p("secret.env"), text("K=V\n"), { mode: 0o600 })
        expect(Option.getOrThrow(yield* workspace.stat(p("secret.env"))).mode).toBe(0o600)
        yield* workspace.write(p("bin/run.sh"), text("#!/bin/sh\n"), { mode: 0o700 })
        expect(Option.getOrThrow(yield* workspace.stat(p("bin/run.sh"))).mode).toBe(0o700)
      }),
    )

    it.scoped("creates a new tree in bulk: parents made, modes exact, bytes as given", () =>
      Effect.gen(function* () {
        const { workspace, readRaw } = yield* harness.make
        yield* workspace.createFiles([
          { path: p("a.txt"), content: text("a\n"), mode: 0o644 },
          { path: p("bin/run.sh"), content: text("#!/bin/sh\n"), mode: 0o755 },
          { path: p("src/deep/x.ts"), content: text("x\n"), mode: 0o600 },
          { path: p("src/deep/y.ts"), content: new Uint8Array(0), mode: 0o640 },
          { path: p("src/z.ts"), content: text("z\n"), mode: 0o755 },
        ])
        expect(yield* readRaw("a.txt")).toBe("a\n")
        expect(yield* readRaw("src/deep/x.ts")).toBe("x\n")
        expect(yield* readRaw("src/deep/y.ts")).toBe("")
        const modes: Record<string, number> = {}
        for (const path of ["a.txt", "bin/run.sh", "src/deep/x.ts", "src/deep/y.ts", "src/z.ts"]) {
          modes[path] = Option.getOrThrow(yield* workspace.stat(p(path))).mode
        }
        expect(modes).toEqual({
          "a.txt": 0o644,
          "bin/run.sh": 0o755,
          "src/deep/x.ts": 0o600,
          "src/deep/y.ts": 0o640,
          "src/z.ts": 0o755,
        })
        // A second batch may add to directories the first made.
        yield* workspace.createFiles([{ path: p("src/deep/w.ts"), content: text("w\n"), mode: 0o644 }])
        expect((yield* workspace.list(p("src/deep"))).map((e) => e.name)).toEqual(["w.ts", "x.ts", "y.ts"])
      }),
    )

    it.scoped("bulk creation never replaces anything, follows no link, and stops at the first failure", () =>
      Effect.gen(function* () {
        const { workspace, plantFile, plantSymlink, readRaw, outsideFromRoot, outsideFingerprint } =
          yield* harness.make
        const before = yield* outsideFingerprint()
        yield* plantFile("kept.txt", "mine\n")
        const exists = yield* Effect.either(
          workspace.createFiles([
            { path: p("first.txt"), content: text("1\n"), mode: 0o644 },
            { path: p("kept.txt"), content: text("theirs\n"), mode: 0o644 },
            { path: p("after.txt"), content: text("2\n"), mode: 0o644 },
          ]),
        )
        expect(Either.isLeft(exists) && exists.left._tag === "WorkspaceIoError" && exists.left.code).toBe(
          "EEXIST",
        )
        expect(Either.isLeft(exists) && exists.left.path).toBe("kept.txt")
        expect(yield* readRaw("kept.txt")).toBe("mine\n")
        expect(yield* readRaw("first.txt")).toBe("1\n")
        expect(yield* readRaw("after.txt")).toBeUndefined()
        // A link at the path itself (even a dangling one) is not followed or replaced.
        yield* plantSymlink("escape.txt", `${outsideFromRoot}/created-through-link.txt`)
        const linked = yield* Effect.either(
          workspace.createFiles([{ path: p("escape.txt"), content: text("x\n"), mode: 0o644 }]),
        )
        expect(Either.isLeft(linked)).toBe(true)
        // A link on the way is refused before anything is created under it.
        yield* plantSymlink("out", outsideFromRoot)
        const through = yield* refusalOfPath(
          workspace.createFiles([{ path: p("out/secret2.txt"), content: text("x\n"), mode: 0o644 }]),
        )
        expect(through.reason).toBe("symlink_in_path")
        const bad = yield* refusalOfPath(
          workspace.createFiles([{ path: p("../x.txt"), content: text("x\n"), mode: 0o644 }]),
        )
        expect(bad.reason).toBe("outside_root")
        expect(yield* outsideFingerprint()).toBe(before)
      }),
    )

    it.scoped("stats files, directories and symlinks without following the last one", () =>
      Effect.gen(function* () {
        const { workspace, plantFile, plantSymlink } = yield* harness.make
        yield* plantFile("dir/a.txt", "12345")
        yield* plantSymlink("link", "dir/a.txt")
        const file = Option.getOrThrow(yield* workspace.stat(p("dir/a.txt")))
        expect(file.kind).toBe("file")
        expect(file.size).toBe(5)
        expect(typeof file.mtimeNs).toBe("bigint")
        expect(typeof file.inode).toBe("bigint")
        expect(Option.getOrThrow(yield* workspace.stat(p("dir"))).kind).toBe("directory")
        expect(Option.getOrThrow(yield* workspace.stat(p("link"))).kind).toBe("symlink")
        expect(Option.isNone(yield* workspace.stat(p("nope")))).toBe(true)
        expect(yield* workspace.readLink(p("link"))).toBe("dir/a.txt")
      }),
    )

    it.scoped("deletes files and symlinks (never their target), refuses directories", () =>
      Effect.gen(function* () {
        const { workspace, plantFile, plantSymlink, readRaw } = yield* harness.make
        yield* plantFile("a.txt", "a")
        yield* plantFile("dir/b.txt", "b")
        yield* plantSymlink("to-b", "dir/b.txt")
        expect(yield* workspace.delete(p("a.txt"))).toBe(true)
        expect(yield* readRaw("a.txt")).toBeUndefined()
        expect(yield* workspace.delete(p("a.txt"))).toBe(false)
        expect(yield* workspace.delete(p("to-b"))).toBe(true)
        expect(yield* readRaw("dir/b.txt")).toBe("b")
        const refused = yield* refusalOfPath(workspace.delete(p("dir")))
        expect(refused.reason).toBe("not_a_regular_file")
        expect(yield* readRaw("dir/b.txt")).toBe("b")
      }),
    )

    it.scoped("removes an empty directory only: never a full one, a file, or through a link", () =>
      Effect.gen(function* () {
        const { workspace, plantFile, plantDirectory, plantSymlink, readRaw } = yield* harness.make
        yield* plantDirectory("empty/inner")
        yield* plantFile("full/f.txt", "f")
        yield* plantSymlink("link", "empty")
        expect(yield* workspace.removeEmptyDirectory(p("empty/inner"))).toBe(true)
        expect(Option.isNone(yield* workspace.stat(p("empty/inner")))).toBe(true)
        expect(yield* workspace.removeEmptyDirectory(p("full"))).toBe(false)
        expect(yield* workspace.removeEmptyDirectory(p("full/f.txt"))).toBe(false)
        expect(yield* workspace.removeEmptyDirectory(p("missing"))).toBe(false)
        expect(yield* readRaw("full/f.txt")).toBe("f")
        // Through a link: refused, and the directory it points to stays.
        yield* plantDirectory("empty/again")
        const refused = yield* refusalOfPath(workspace.removeEmptyDirectory(p("link/again")))
        expect(refused.reason).toBe("symlink_in_path")
        expect(Option.isSome(yield* workspace.stat(p("empty/again")))).toBe(true)
      }),
    )

    it.scoped("refuses to read or write a directory or a FIFO", () =>
      Effect.gen(function* () {
        const { workspace, plantDirectory, plantFifo } = yield* harness.make
        yield* plantDirectory("dir")
        expect((yield* refusalOfPath(workspace.read(p("dir")))).reason).toBe("not_a_regular_file")
        expect(yield* refusalOfPath(workspace.write(p("dir"), text("x")))).toMatchObject({
          reason: "not_a_regular_file",
        })
        if (plantFifo !== undefined) {
          yield* plantFifo("pipe")
          expect((yield* refusalOfPath(workspace.read(p("pipe")))).reason).toBe("not_a_regular_file")
          expect((yield* refusalOfPath(workspace.write(p("pipe"), text("x")))).reason).toBe(
            "not_a_regular_file",
          )
        }
      }),
    )

    it.scoped("refuses `..`, absolute paths, NUL and unnormalised paths before touching anything", () =>
      Effect.gen(function* () {
        const fixture = yield* harness.make
        const { workspace } = fixture
        const before = yield* fixture.outsideFingerprint()
        const cases: Array<[string, string]> = [
          ["../escape.txt", "outside_root"],
          ["a/../../escape.txt", "outside_root"],
          [`${fixture.outside}/secret.txt`, "outside_root"],
          ["/etc/passwd", "outside_root"],
          ["C:/Windows/x", "outside_root"],
          ["a\u0000b", "malformed"],
          ["", "malformed"],
          ["a//b", "malformed"],
          ["./a", "malformed"],
          // Backslashes are not separators here, but `..` between them would be on Windows.
          ["a\\..\\b", "outside_root"],
        ]
        for (const [path, reason] of cases) {
          for (const op of [
            workspace.read(p(path)),
            workspace.write(p(path), text("pwned")),
            workspace.delete(p(path)),
            workspace.stat(p(path)),
          ]) {
            const refused = yield* refusalOfPath(op as Effect.Effect<unknown, { _tag: string }>)
            expect(refused.reason, `${JSON.stringify(path)}`).toBe(reason)
          }
        }
        expect(yield* fixture.outsideFingerprint()).toBe(before)
        expect(fixture.outsideAccesses?.() ?? []).toEqual([])
      }),
    )

    it.scoped("never follows a symlink out of the root, for reads, writes, deletes or scans", () =>
      Effect.gen(function* () {
        const fixture = yield* harness.make
        const { workspace, plantSymlink, plantDirectory } = fixture
        yield* plantSymlink("abs-out", fixture.outside)
        yield* plantSymlink("rel-out", fixture.outsideFromRoot)
        yield* plantSymlink("secret-link", `${fixture.outside}/secret.txt`)
        yield* plantDirectory("nested")
        yield* plantSymlink("nested/up-out", `../${fixture.outsideFromRoot}`)
        yield* plantSymlink("chain", "abs-out")
        const before = yield* fixture.outsideFingerprint()

        const attempts: Array<Effect.Effect<unknown, { _tag: string }>> = [
          workspace.read(p("abs-out/secret.txt")),
          workspace.read(p("rel-out/secret.txt")),
          workspace.read(p("secret-link")),
          workspace.read(p("nested/up-out/secret.txt")),
          workspace.read(p("chain/secret.txt")),
          workspace.write(p("abs-out/new.txt"), text("pwned")),
          workspace.write(p("abs-out/secret.txt"), text("pwned")),
          workspace.write(p("rel-out/deeper/new.txt"), text("pwned")),
          workspace.write(p("secret-link"), text("pwned")),
          workspace.write(p("chain/secret.txt"), text("pwned")),
          workspace.delete(p("abs-out/secret.txt")),
          workspace.stat(p("rel-out/secret.txt")),
          workspace.list(p("abs-out")),
          workspace.readLink(p("chain/secret.txt")),
        ]
        for (const attempt of attempts) {
          expect((yield* refusalOfPath(attempt)).reason).toBe("symlink_in_path")
        }
        for (const target of ["../..", "../outside", "/etc", `${fixture.outside}`]) {
          expect((yield* refusalOfPath(workspace.symlink(p("made-link"), target))).reason).toBe(
            "symlink_escape",
          )
        }
        expect(yield* fixture.outsideFingerprint()).toBe(before)
        expect(fixture.outsideAccesses?.() ?? []).toEqual([])

        // Deleting the escaping link removes the link, never what it points at.
        expect(yield* workspace.delete(p("abs-out"))).toBe(true)
        expect(yield* fixture.outsideFingerprint()).toBe(before)
      }),
    )

    // DESIGN §5 forbids writing through any link: this replaces the test that expected a write
    // through an in-root link to reach its target.
    it.scoped("never goes through a symlink that stays inside the root either; acts on a link itself", () =>
      Effect.gen(function* () {
        const { workspace, plantFile, plantSymlink, readRaw } = yield* harness.make
        yield* plantFile("real/a.txt", "a")
        yield* plantSymlink("alias", "real")
        yield* plantSymlink("file-link", "real/a.txt")
        yield* plantSymlink("real/up", "../real/a.txt")
        const refusals: Array<Effect.Effect<unknown, { _tag: string }>> = [
          workspace.read(p("alias/a.txt")),
          workspace.read(p("real/up")),
          workspace.read(p("file-link")),
          workspace.write(p("alias/b.txt"), text("b")),
          workspace.write(p("alias/new/deep.txt"), text("b")),
          workspace.write(p("file-link"), text("through")),
          workspace.write(p("real/up"), text("through")),
          workspace.delete(p("alias/a.txt")),
          workspace.stat(p("alias/a.txt")),
          workspace.readLink(p("alias/up")),
          workspace.symlink(p("alias/made"), "a.txt"),
          workspace.discardPartialWrites(p("alias/a.txt")),
          workspace.list(p("alias")),
          workspace.scanDirectory(p("alias")),
        ]
        for (const attempt of refusals) {
          const refused = yield* refusalOfPath(attempt)
          expect(refused.reason).toBe("symlink_in_path")
        }
        // Nothing changed behind the links, and no directory was made under the linked one.
        expect(yield* readRaw("real/a.txt")).toBe("a")
        expect(yield* readRaw("real/b.txt")).toBeUndefined()
        expect((yield* workspace.list(p("real"))).map((e) => e.name)).toEqual(["a.txt", "up"])
        // A link itself can be stat'ed, read as a link, cleaned next to, and deleted.
        expect(Option.getOrThrow(yield* workspace.stat(p("file-link"))).kind).toBe("symlink")
        expect(yield* workspace.readLink(p("real/up"))).toBe("../real/a.txt")
        expect(yield* workspace.discardPartialWrites(p("file-link"))).toEqual([])
        expect(yield* workspace.delete(p("file-link"))).toBe(true)
        expect(yield* readRaw("real/a.txt")).toBe("a")
        // With the link gone, the path is a plain missing file again.
        yield* workspace.write(p("file-link"), text("now a file"))
        expect(yield* readRaw("file-link")).toBe("now a file")
        // Creating a link that stays inside works; reading through it does not.
        yield* workspace.symlink(p("links/to-a"), "../real/a.txt")
        expect(yield* workspace.readLink(p("links/to-a"))).toBe("../real/a.txt")
        expect((yield* refusalOfPath(workspace.read(p("links/to-a")))).reason).toBe("symlink_in_path")
      }),
    )

    it.scoped("scans several directories at once, each with its own answer, as scanDirectory would", () =>
      Effect.gen(function* () {
        const fixture = yield* harness.make
        const { workspace, plantFile, plantSymlink, plantDirectory } = fixture
        yield* plantFile("top.txt", "t")
        yield* plantFile("src/b.ts", "bb")
        yield* plantFile("src/a.ts", "a", 0o755)
        yield* plantSymlink("src/link", "a.ts")
        yield* plantDirectory("src/empty")
        yield* plantFile("docs/readme.md", "r")
        yield* plantSymlink("out", fixture.outside)
        yield* plantSymlink("alias", "src")
        const before = yield* fixture.outsideFingerprint()
        // No symlink is followed, whether it stays inside (`alias`) or leads out (`out`), at the
        // end of the path or on the way; a path that climbs out is refused too.
        const asked: Array<WorkspacePath | undefined> = [
          p("src"),
          undefined,
          p("missing"),
          p("top.txt"),
          p("src/empty"),
          p("out"),
          p("docs"),
          p("alias"),
          p("alias/empty"),
          p("../outside"),
          p("out/nested"),
        ]
        const results = yield* workspace.scanDirectories(asked)
        expect(results).toHaveLength(asked.length)
        // Every answer is what the single-directory scan gives for the same directory.
        for (const [i, directory] of asked.entries()) {
          const one = yield* Effect.either(workspace.scanDirectory(directory))
          const many = results[i]!
          expect(many._tag).toBe(one._tag)
          if (Either.isRight(many) && Either.isRight(one)) expect(many.right).toEqual(one.right)
          if (Either.isLeft(many) && Either.isLeft(one)) expect(many.left._tag).toBe(one.left._tag)
        }
        const src = Either.getOrThrow(results[0]!)
        expect(src.map((e) => e.name)).toEqual(["a.ts", "b.ts", "empty", "link"])
        expect(src.map((e) => e.stat.kind)).toEqual(["file", "file", "directory", "symlink"])
        expect(src[0]!.stat.mode).toBe(0o755)
        expect(src[1]!.stat.size).toBe(2)
        expect(src[3]!.target).toBe("a.ts")
        expect(Either.getOrThrow(results[1]!).map((e) => e.name)).toEqual([
          "alias",
          "docs",
          "out",
          "src",
          "top.txt",
        ])
        expect(Either.isLeft(results[2]!)).toBe(true)
        expect(Either.isLeft(results[3]!)).toBe(true)
        expect(Either.getOrThrow(results[4]!)).toEqual([])
        for (const i of [5, 7, 8, 10]) {
          const refused = results[i]!
          expect(
            Either.isLeft(refused) && refused.left._tag === "PathRefused" && refused.left.reason,
            String(asked[i]),
          ).toBe("symlink_in_path")
        }
        expect(Either.isLeft(results[9]!) && results[9]!.left._tag).toBe("PathRefused")
        expect(yield* workspace.scanDirectories([])).toEqual([])
        expect(yield* fixture.outsideFingerprint()).toBe(before)
        expect(fixture.outsideAccesses?.() ?? []).toEqual([])
      }),
    )

    it.scoped("reads several files at once, each with its own answer, as read would", () =>
      Effect.gen(function* () {
        const fixture = yield* harness.make
        const { workspace, plantFile, plantSymlink, plantDirectory } = fixture
        yield* plantFile("src/a.ts", "a", 0o755)
        yield* plantFile("src/b.ts", "bb")
        yield* plantFile("src/deep/c.ts", "ccc")
        yield* plantFile("top.txt", "t")
        yield* plantSymlink("alias", "src")
        yield* plantSymlink("out", fixture.outside)
        yield* plantDirectory("src/dir")
        yield* plantSymlink("src/link.ts", "a.ts")
        yield* plantSymlink("src/escape.ts", `${fixture.outside}/secret.txt`)
        const before = yield* fixture.outsideFingerprint()
        // Shared directories, a symlinked one, a missing file, a directory, an escape, a file
        // used as a directory, a malformed path, and one path twice. The symlinks named last in a
        // directory already walked (one staying inside, one leading out) are asked after a file
        // of the same directory, where a bulk read no longer walks the directories: neither is
        // followed (DESIGN §5; "alias/b.ts" and "src/link.ts" read through in-root links before).
        const asked = [
          "src/a.ts",
          "src/b.ts",
          "src/deep/c.ts",
          "alias/b.ts",
          "src/missing.ts",
          "src/dir",
          "out/secret.txt",
          "top.txt/x",
          "src/../top.txt",
          "top.txt",
          "src/a.ts",
          "src/link.ts",
          "src/escape.ts",
        ].map(p)
        const results = yield* workspace.readMany(asked)
        expect(results).toHaveLength(asked.length)
        for (const [i, path] of asked.entries()) {
          const one = yield* Effect.either(workspace.read(path))
          const many = results[i]!
          expect(many._tag).toBe(one._tag)
          if (Either.isRight(many) && Either.isRight(one)) expect(many.right).toEqual(one.right)
          if (Either.isLeft(many) && Either.isLeft(one)) expect(many.left).toEqual(one.left)
        }
        const contents = results.map((r) =>
          Either.isRight(r)
            ? Option.getOrElse(
                Option.map(r.right, (f) => decode(f.content)),
                () => "<none>",
              )
            : r.left._tag,
        )
        expect(contents).toEqual([
          "a",
          "bb",
          "ccc",
          "PathRefused",
          "<none>",
          "PathRefused",
          "PathRefused",
          "WorkspaceIoError",
          "PathRefused",
          "t",
          "a",
          "PathRefused",
          "PathRefused",
        ])
        for (const i of [3, 6, 11, 12]) {
          const refused = results[i]!
          expect(Either.isLeft(refused) && refused.left._tag === "PathRefused" && refused.left.reason).toBe(
            "symlink_in_path",
          )
        }
        expect(Option.getOrThrow(Either.getOrThrow(results[0]!)).mode).toBe(0o755)
        expect(yield* workspace.readMany([])).toEqual([])
        expect(yield* fixture.outsideFingerprint()).toBe(before)
        expect(fixture.outsideAccesses?.() ?? []).toEqual([])
      }),
    )

    it.scoped("statMany answers each path as stat does, in order, and follows no link", () =>
      Effect.gen(function* () {
        const fixture = yield* harness.make
        const { workspace, plantFile, plantSymlink, plantDirectory } = fixture
        yield* plantFile("src/a.ts", "a", 0o755)
        yield* plantFile("src/deep/c.ts", "ccc")
        yield* plantFile("top.txt", "t")
        yield* plantSymlink("alias", "src")
        yield* plantSymlink("out", fixture.outside)
        yield* plantDirectory("src/dir")
        yield* plantSymlink("src/link.ts", "a.ts")
        const before = yield* fixture.outsideFingerprint()
        // Files, a directory, a missing name, a link at the end (reported), links on the way
        // (refused, also after the directory behind them was walked for another path), a file
        // used as a directory, a malformed path, one path twice.
        const asked = [
          "src/a.ts",
          "src/deep/c.ts",
          "src/dir",
          "src/.gitignore",
          "src/link.ts",
          "alias/a.ts",
          "out/secret.txt",
          "top.txt/x",
          "src/../top.txt",
          "src/a.ts",
          "alias",
        ].map(p)
        const results = yield* workspace.statMany(asked)
        expect(results).toHaveLength(asked.length)
        for (const [i, path] of asked.entries()) {
          const one = yield* Effect.either(workspace.stat(path))
          const many = results[i]!
          expect(many._tag).toBe(one._tag)
          if (Either.isRight(many) && Either.isRight(one)) expect(many.right).toEqual(one.right)
          if (Either.isLeft(many) && Either.isLeft(one)) expect(many.left).toEqual(one.left)
        }
        const kinds = results.map((r) =>
          Either.isRight(r)
            ? Option.getOrElse(
                Option.map(r.right, (s) => s.kind),
                () => "<none>",
              )
            : r.left._tag,
        )
        expect(kinds).toEqual([
          "file",
          "file",
          "directory",
          "<none>",
          "symlink",
          "PathRefused",
          "PathRefused",
          "WorkspaceIoError",
          "PathRefused",
          "file",
          "symlink",
        ])
        for (const i of [5, 6]) {
          const refused = results[i]!
          expect(Either.isLeft(refused) && refused.left._tag === "PathRefused" && refused.left.reason).toBe(
            "symlink_in_path",
          )
        }
        expect(Option.getOrThrow(Either.getOrThrow(results[0]!)).mode).toBe(0o755)
        expect(yield* workspace.statMany([])).toEqual([])
        expect(yield* fixture.outsideFingerprint()).toBe(before)
        expect(fixture.outsideAccesses?.() ?? []).toEqual([])
      }),
    )

    it.scoped("a directory swapped for a symlink between two bulk calls is seen by the second", () =>
      Effect.gen(function* () {
        const fixture = yield* harness.make
        const { workspace, plantFile, plantSymlink } = fixture
        yield* plantFile("moving/a.txt", "inside")
        const first = yield* workspace.readMany([p("moving/a.txt")])
        expect(Either.isRight(first[0]!)).toBe(true)
        // What one call learned about a directory is not carried into the next.
        yield* fixture.removeRaw("moving")
        yield* plantSymlink("moving", fixture.outside)
        const before = yield* fixture.outsideFingerprint()
        const second = yield* workspace.readMany([p("moving/a.txt"), p("moving/secret.txt")])
        for (const r of second) {
          expect(Either.isLeft(r) && r.left._tag === "PathRefused" && r.left.reason).toBe("symlink_in_path")
        }
        expect(yield* fixture.outsideFingerprint()).toBe(before)
      }),
    )

    it.scoped("refuses symlink loops and paths through a file", () =>
      Effect.gen(function* () {
        const { workspace, plantSymlink, plantFile } = yield* harness.make
        yield* plantSymlink("loop1", "loop2")
        yield* plantSymlink("loop2", "loop1")
        // A loop is a symlink like any other: refused without being followed once.
        expect((yield* refusalOfPath(workspace.read(p("loop1")))).reason).toBe("symlink_in_path")
        expect((yield* refusalOfPath(workspace.write(p("loop1/x"), text("x")))).reason).toBe(
          "symlink_in_path",
        )
        yield* plantFile("plain.txt", "x")
        const error = yield* Effect.flip(workspace.write(p("plain.txt/child"), text("x")))
        expect(error._tag).toBe("WorkspaceIoError")
      }),
    )
    expectedReadConformance(harness)
  })
}
