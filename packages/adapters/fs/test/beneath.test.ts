// The native module's directory open beneath the root, both ways (openat2 with RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS, and the component walk with openat(O_NOFOLLOW) that systems without
// openat2 use): a real directory opens, a symlink anywhere on the way is ELOOP (whether it stays
// inside, leads out, or is the last component), a file in the way is ENOTDIR, a missing one
// ENOENT, and a path that is not relative or not normalised is refused; the two ways agree.
import { closeSync, fstatSync, mkdirSync, realpathSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { constants } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { NodeWorkspace } from "../src/index.js"
import { nativeModule } from "../src/internal/nativeModule.js"
import { tempDirectory } from "./fsFixture.js"

interface Module {
  readonly openDirBeneath: (root: string, relative: string, walk?: boolean) => number
}
const native = nativeModule as Module | undefined
/** The module's answer for a failure: the errno, negated. */
const errno = (code: string) => -(constants.errno as Record<string, number>)[code]!

describe("openDirBeneath", () => {
  it.scoped.skipIf(
    NodeWorkspace.implementation.fileOperations !== "kernel-confined" || process.platform !== "linux",
  )(
    "opens real directories and refuses links, files and missing components, by openat2 and by the walk alike",
    () =>
      Effect.gen(function* () {
        const base = realpathSync(yield* tempDirectory("beneath"))
        const root = join(base, "root")
        mkdirSync(join(root, "a", "b"), { recursive: true })
        mkdirSync(join(base, "outside"))
        writeFileSync(join(root, "f"), "file")
        symlinkSync("a", join(root, "link"))
        symlinkSync("..", join(root, "a", "up"))
        symlinkSync(join(base, "outside"), join(root, "out"))
        symlinkSync("../outside", join(root, "a", "b", "rel-out"))
        const cases: Array<[string, string | undefined]> = [
          ["", "root"],
          ["a", "a"],
          ["a/b", "a/b"],
          ["f", "ENOTDIR"],
          ["f/x", "ENOTDIR"],
          ["link", "ELOOP"],
          ["link/b", "ELOOP"],
          ["a/up", "ELOOP"],
          ["a/up/a", "ELOOP"],
          ["out", "ELOOP"],
          ["a/b/rel-out", "ELOOP"],
          ["missing", "ENOENT"],
          ["a/missing/deeper", "ENOENT"],
          ["/etc", "EINVAL"],
        ]
        for (const walk of [false, true]) {
          for (const [relative, expected] of cases) {
            const answer = native!.openDirBeneath(root, relative, walk)
            const label = `${walk ? "walk" : "openat2"}: ${JSON.stringify(relative)}`
            if (expected === "root" || expected === "a" || expected === "a/b") {
              expect(answer, label).toBeGreaterThanOrEqual(0)
              const where = expected === "root" ? root : join(root, expected)
              expect(fstatSync(answer).ino, label).toBe(statSync(where).ino)
              closeSync(answer)
            } else expect(answer, label).toBe(errno(expected!))
          }
        }
      }),
  )
})
