// The workspace's `sealListings` (native `sealBeneath`): equal listings give equal checks; any
// change to an entry (content, mode, name, a link's target, a same-size rewrite stamped back)
// changes that directory's check and no other; `.git` and the store count by name and kind only;
// a missing directory, a file or a symlink on the way is listed as failed with a zero check.
import { execFileSync } from "node:child_process"
import { chmodSync, mkdirSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { WorkspacePath } from "@rewind/contracts"
import { type ListingSeal, Workspace } from "@rewind/core"
import { Effect, Layer, Option } from "effect"
import { NodeWorkspace } from "../src/index.js"
import { type Sandbox, sandbox } from "./treeOps.js"

const available = NodeWorkspace.nativeScanAvailable && process.platform === "linux"
const FREE = { names: [".git", ".rewind"], paths: [] }
const DIRS = ["", "a", "a/b"]

const tree = (): Sandbox => {
  const box = sandbox()
  mkdirSync(join(box.root, "a/b"), { recursive: true })
  mkdirSync(join(box.root, ".git"))
  mkdirSync(join(box.root, ".rewind"))
  writeFileSync(join(box.root, "a/x.txt"), "x")
  writeFileSync(join(box.root, "a/b/y.txt"), "y")
  writeFileSync(join(box.root, ".git/HEAD"), "ref")
  symlinkSync("x.txt", join(box.root, "a/link"))
  return box
}

/** The seal of `directories` now. */
const sealOf = (directories: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    return Option.getOrUndefined(yield* workspace.sealListings!(directories, FREE))
  })

const sealed = (answer: ListingSeal | undefined): ListingSeal => {
  if (answer === undefined) throw new Error("no seal")
  return answer
}

/** Each directory's check, as hex. */
const checksOf = (seal: ListingSeal) =>
  DIRS.map((_, i) => Buffer.from(seal.checks.subarray(16 * i, 16 * i + 16)).toString("hex"))

const inTree = (test: (box: Sandbox) => Effect.Effect<void, never, Workspace>) => {
  const box = tree()
  return Effect.provide(test(box), Layer.orDie(NodeWorkspace.layer(box.root, { durability: "atomic" }))).pipe(
    Effect.ensuring(Effect.sync(() => rmSync(box.base, { recursive: true, force: true }))),
  )
}

describe.skipIf(!available)("sealListings", () => {
  it.live(
    "answers the same checks for unchanged listings, and another check for exactly the directory that changed",
    () =>
      inTree((box) =>
        Effect.gen(function* () {
          const first = sealed(yield* sealOf(DIRS))
          expect(first.checks.length).toBe(16 * DIRS.length)
          expect(first.failed ?? []).toEqual([])
          const again = sealed(yield* sealOf(DIRS))
          expect(checksOf(again)).toEqual(checksOf(first))
          // What git and every capture change: counted by name and kind only.
          writeFileSync(join(box.root, ".git/index.lock"), "lock")
          writeFileSync(join(box.root, ".rewind/store.db-wal"), "wal")
          expect(checksOf(sealed(yield* sealOf(DIRS)))).toEqual(checksOf(first))

          // Each change and the directories (of DIRS) whose listings it changes: an entry added or
          // removed in `a` changes `a`'s own stat, which the root's listing holds.
          const changes: ReadonlyArray<readonly [string, ReadonlyArray<string>, () => void]> = [
            ["content", ["a/b"], () => writeFileSync(join(box.root, "a/b/y.txt"), "Y")],
            ["mode", ["a"], () => chmodSync(join(box.root, "a/x.txt"), 0o755)],
            ["name", ["", "a"], () => renameSync(join(box.root, "a/x.txt"), join(box.root, "a/x2.txt"))],
            [
              "link target",
              ["", "a"],
              () => {
                rmSync(join(box.root, "a/link"))
                symlinkSync("b", join(box.root, "a/link"))
              },
            ],
            [
              "same size, mtime stamped back",
              ["a/b"],
              () => {
                const stamp = new Date("2020-01-01T00:00:00Z")
                utimesSync(join(box.root, "a/b/y.txt"), stamp, stamp)
              },
            ],
            [
              "a .git directory becoming a file",
              [""],
              () => {
                rmSync(join(box.root, ".git"), { recursive: true })
                writeFileSync(join(box.root, ".git"), "gitdir: elsewhere")
              },
            ],
          ]
          let before = checksOf(first)
          for (const [what, where, change] of changes) {
            yield* Effect.sleep("15 millis")
            change()
            const now = checksOf(sealed(yield* sealOf(DIRS)))
            const changed = DIRS.filter((_, i) => now[i] !== before[i])
            expect({ what, changed }).toEqual({ what, changed: where })
            before = now
          }
        }),
      ),
  )

  it.live("stamped back to the very same mtime, a rewrite of the same size still differs (ctime)", () =>
    inTree((box) =>
      Effect.gen(function* () {
        const file = join(box.root, "a/b/y.txt")
        const stamp = new Date("2020-01-01T00:00:00Z")
        utimesSync(file, stamp, stamp)
        const first = sealed(yield* sealOf(DIRS))
        yield* Effect.sleep("15 millis")
        writeFileSync(file, "z")
        utimesSync(file, stamp, stamp)
        const second = sealed(yield* sealOf(DIRS))
        expect(checksOf(second)[2]).not.toBe(checksOf(first)[2])
        expect(second.newestByDirectory[2]).toBeGreaterThan(first.newestByDirectory[2]!)
      }),
    ),
  )

  it.live(
    "lists a missing directory, a file or one reached through a symlink as failed, with a zero check",
    () =>
      inTree((box) =>
        Effect.gen(function* () {
          symlinkSync("a", join(box.root, "linked"))
          const zero = "0".repeat(32)
          const seal = sealed(yield* sealOf(["", "gone", "linked", "a/x.txt", "a/link/b", "a"]))
          expect(seal.failed).toEqual([1, 2, 3, 4])
          const checks = [0, 1, 2, 3, 4, 5].map((i) =>
            Buffer.from(seal.checks.subarray(16 * i, 16 * i + 16)).toString("hex"),
          )
          expect(checks.slice(1, 5)).toEqual([zero, zero, zero, zero])
          expect(checks[0]).not.toBe(zero)
          expect(checks[5]).not.toBe(zero)
          expect(seal.newestByDirectory[1]).toBe(-(2n ** 63n))
        }),
      ),
  )

  it.live(
    "a sealing scan (scanDirectoriesSealed) lists as scanDirectories does and seals each listing as sealListings does",
    () =>
      inTree((box) =>
        Effect.gen(function* () {
          const workspace = yield* Workspace
          // Names whose byte order differs from UTF-16's, a name that is not UTF-8, a FIFO, a
          // nested repository's `.git` file, a store path, a symlink to a directory and a dangling one.
          writeFileSync(join(box.root, "a/\u{1F600}.txt"), "emoji")
          writeFileSync(join(box.root, "a/\uFFFD.txt"), "replacement")
          writeFileSync(join(box.root, "a/Zed"), "z")
          writeFileSync(
            Buffer.concat([Buffer.from(join(box.root, "a/b/")), Buffer.from([0x6e, 0xff])]),
            "bad",
          )
          execFileSync("mkfifo", [join(box.root, "a/b/pipe")])
          mkdirSync(join(box.root, "a/nested"))
          writeFileSync(join(box.root, "a/nested/.git"), "gitdir: elsewhere")
          mkdirSync(join(box.root, "a/store"))
          symlinkSync("b", join(box.root, "a/dirlink"))
          symlinkSync("nowhere", join(box.root, "a/dangling"))
          const free = { names: FREE.names, paths: ["a/store"] }
          const asked = ["", "a", "a/b", "a/nested", "a/store", "gone", "a/dirlink", "a/x.txt"]
          const directories = asked.map((d) => (d === "" ? undefined : (d as WorkspacePath)))
          const sealing = yield* workspace.scanDirectoriesSealed!(directories, free)
          const plain = yield* workspace.scanDirectories(directories)
          expect(sealing.listings).toEqual(plain)
          const listed = sealed(Option.getOrUndefined(yield* workspace.sealListings!(asked, free)))
          const seal = sealed(sealing.seal)
          // What cannot be listed beneath the root is not sealed (nor listed: `plain` says so too).
          expect(seal.failed).toEqual([5, 6, 7])
          expect(listed.failed).toEqual([5, 6, 7])
          expect(Buffer.from(seal.checks).toString("hex")).toBe(Buffer.from(listed.checks).toString("hex"))
          expect([...seal.newestByDirectory]).toEqual([...listed.newestByDirectory])
          // A listing scanned again (the scanner's cache answers "the same") is sealed all the same.
          const again = yield* workspace.scanDirectoriesSealed!(directories, free)
          expect(Buffer.from(sealed(again.seal).checks).toString("hex")).toBe(
            Buffer.from(listed.checks).toString("hex"),
          )
          // The store path counts by name and kind only there, and nowhere else.
          const other = sealed((yield* workspace.scanDirectoriesSealed!(directories, FREE)).seal)
          expect(Buffer.from(other.checks.subarray(16, 32))).not.toEqual(
            Buffer.from(seal.checks.subarray(16, 32)),
          )
          expect(Buffer.from(other.checks.subarray(0, 16))).toEqual(Buffer.from(seal.checks.subarray(0, 16)))
        }),
      ),
  )

  it.live("cannot seal at all under a root that is gone", () =>
    inTree((box) =>
      Effect.gen(function* () {
        rmSync(box.root, { recursive: true, force: true })
        expect(yield* sealOf([""])).toBeUndefined()
      }),
    ),
  )
})
