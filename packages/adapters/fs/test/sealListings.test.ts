// The workspace's `sealListings` (native `sealBeneath`): equal listings give equal digests and
// checks whatever the thread count; any change to an entry (content, mode, name, a link's target,
// a same-size rewrite stamped back) changes the digest and that directory's check, and given the
// earlier checks the listing answers "differs"; `.git` and the store count by name and kind only;
// a missing directory or a symlink on the way cannot be sealed.
import { chmodSync, mkdirSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
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

/** The seal of `directories` now, with `expected` checks when given. */
const sealOf = (directories: ReadonlyArray<string>, expected?: Uint8Array) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    return Option.getOrUndefined(yield* workspace.sealListings!(directories, FREE, { expected }))
  })

const sealed = (answer: ListingSeal | "differs" | undefined): ListingSeal => {
  if (answer === undefined || answer === "differs") throw new Error(`no seal: ${answer}`)
  return answer
}

const inTree = (test: (box: Sandbox) => Effect.Effect<void, never, Workspace>) => {
  const box = tree()
  return Effect.provide(test(box), Layer.orDie(NodeWorkspace.layer(box.root, { durability: "atomic" }))).pipe(
    Effect.ensuring(Effect.sync(() => rmSync(box.base, { recursive: true, force: true }))),
  )
}

describe.skipIf(!available)("sealListings", () => {
  it.live(
    "answers the same digest and checks for unchanged listings, and 'differs' only when one changed",
    () =>
      inTree((box) =>
        Effect.gen(function* () {
          const first = sealed(yield* sealOf(DIRS))
          expect(first.checks.length).toBe(16 * DIRS.length)
          const again = sealed(yield* sealOf(DIRS, first.checks))
          expect(again.digest).toBe(first.digest)
          expect([...again.checks]).toEqual([...first.checks])
          // What git and every capture change: counted by name and kind only.
          writeFileSync(join(box.root, ".git/index.lock"), "lock")
          writeFileSync(join(box.root, ".rewind/store.db-wal"), "wal")
          expect(sealed(yield* sealOf(DIRS, first.checks)).digest).toBe(first.digest)

          const changes: ReadonlyArray<readonly [string, () => void]> = [
            ["content", () => writeFileSync(join(box.root, "a/b/y.txt"), "Y")],
            ["mode", () => chmodSync(join(box.root, "a/x.txt"), 0o755)],
            ["name", () => renameSync(join(box.root, "a/x.txt"), join(box.root, "a/x2.txt"))],
            [
              "link target",
              () => {
                rmSync(join(box.root, "a/link"))
                symlinkSync("b", join(box.root, "a/link"))
              },
            ],
            [
              "same size, mtime stamped back",
              () => {
                const stamp = new Date("2020-01-01T00:00:00Z")
                utimesSync(join(box.root, "a/b/y.txt"), stamp, stamp)
              },
            ],
            [
              "a .git directory becoming a file",
              () => {
                rmSync(join(box.root, ".git"), { recursive: true })
                writeFileSync(join(box.root, ".git"), "gitdir: elsewhere")
              },
            ],
          ]
          let before = first
          for (const [what, change] of changes) {
            yield* Effect.sleep("15 millis")
            change()
            expect({ what, answer: yield* sealOf(DIRS, before.checks) }).toEqual({ what, answer: "differs" })
            const now = sealed(yield* sealOf(DIRS))
            expect({ what, same: now.digest === before.digest }).toEqual({ what, same: false })
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
        expect(second.digest).not.toBe(first.digest)
        expect(second.newestChangeNs).toBeGreaterThan(first.newestChangeNs)
      }),
    ),
  )

  it.live("cannot seal a missing directory or one reached through a symlink", () =>
    inTree((box) =>
      Effect.gen(function* () {
        symlinkSync("a", join(box.root, "linked"))
        expect(yield* sealOf(["", "gone"])).toBeUndefined()
        expect(yield* sealOf(["", "linked"])).toBeUndefined()
        expect(yield* sealOf(["", "a/x.txt"])).toBeUndefined()
      }),
    ),
  )
})
