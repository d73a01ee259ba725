// A directory swapped for a symlink to outside the root between the confined walk and the system
// call (the race inside one operation): the walk (and the one-step check, where the kernel-confined
// operations have it) is instrumented to make the swap right after it checked the path, so the race
// is hit every time. Read, write, delete and mkdir must refuse and
// leave the outside untouched, with the kernel-confined file operations and with the checked
// JavaScript ones alike. Both answer `symlink_in_path` (a link met on the way, whoever put it
// there); this test expected a `WorkspaceIoError` with code EXDEV before the workspace stopped
// following links.
import * as fs from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { WorkspacePath } from "@rewind/contracts"
import { makeConfinedWorkspace } from "@rewind/core"
import { Effect } from "effect"
import { NodeWorkspace } from "../src/index.js"
import { writeAtomic } from "../src/internal/durable.js"
import { nodePrimitives } from "../src/NodeWorkspace.js"
import { tempDirectory } from "./fsFixture.js"

/** A root with `sub/f.txt` and, beside it, an `outside` directory with a secret of its own. */
const raceTree = (name: string) =>
  Effect.gen(function* () {
    const base = fs.realpathSync(yield* tempDirectory(name))
    const root = join(base, "ws")
    const outside = join(base, "outside")
    fs.mkdirSync(join(root, "sub"), { recursive: true })
    fs.mkdirSync(outside)
    fs.writeFileSync(join(root, "sub", "f.txt"), "inside")
    fs.writeFileSync(join(outside, "f.txt"), "outside secret")
    return { root, outside }
  })

const setup = (nativeFiles: boolean) =>
  Effect.gen(function* () {
    const { root, outside } = yield* raceTree("race")
    const primitives = nodePrimitives(root, { durability: "atomic", nativeFiles })
    let armed: string | undefined
    // The attacker's move, right after the check of the path: the walk's probe of it, or the
    // one-step check of a whole path that ends there or below it.
    const swapAfter = (absolute: string) =>
      Effect.sync(() => {
        if (armed === undefined || (absolute !== armed && !absolute.startsWith(`${armed}/`))) return
        armed = undefined
        fs.renameSync(join(root, "sub"), join(root, `sub-moved-${Date.now()}-${Math.random()}`))
        fs.symlinkSync("../outside", join(root, "sub"))
      })
    const { probeWhole } = primitives
    const workspace = makeConfinedWorkspace(root, {
      ...primitives,
      probe: (absolute) => Effect.tap(primitives.probe(absolute), () => swapAfter(absolute)),
      ...(probeWhole === undefined
        ? {}
        : { probeWhole: (absolute: string) => Effect.tap(probeWhole(absolute), () => swapAfter(absolute)) }),
    })
    const arm = (relative: string) =>
      Effect.sync(() => {
        // Put a real `sub` back (the previous round left the symlink there).
        if (fs.lstatSync(join(root, "sub")).isSymbolicLink()) fs.unlinkSync(join(root, "sub"))
        if (!fs.existsSync(join(root, "sub"))) fs.mkdirSync(join(root, "sub"))
        fs.writeFileSync(join(root, "sub", "f.txt"), "inside")
        armed = join(root, relative)
      })
    const outsideTree = () =>
      Object.fromEntries(fs.readdirSync(outside).map((n) => [n, fs.readFileSync(join(outside, n), "utf8")]))
    return { workspace, arm, outsideTree }
  })

const reasonOf = (error: { _tag: string }) =>
  error._tag === "PathRefused" ? (error as { reason?: string }).reason : error._tag

describe.each([
  ["kernel-confined", true],
  ["checked JavaScript", false],
])(
  "node workspace (%s file operations): a directory swapped for a symlink mid-operation",
  (_, nativeFiles) => {
    it.scoped.skipIf(nativeFiles && NodeWorkspace.implementation.fileOperations !== "kernel-confined")(
      "write, read, delete and mkdir refuse, and nothing outside the root changes",
      () =>
        Effect.gen(function* () {
          const { workspace, arm, outsideTree } = yield* setup(nativeFiles)
          const before = outsideTree()
          const path = "sub/f.txt" as WorkspacePath

          yield* arm("sub/f.txt")
          const write = yield* Effect.flip(workspace.write(path, new TextEncoder().encode("pwned")))
          expect(reasonOf(write)).toBe("symlink_in_path")
          expect(outsideTree()).toEqual(before)

          yield* arm("sub/f.txt")
          const read = yield* Effect.flip(workspace.read(path))
          expect(reasonOf(read)).toBe("symlink_in_path")

          yield* arm("sub/f.txt")
          const removed = yield* Effect.flip(workspace.delete(path))
          expect(reasonOf(removed)).toBe("symlink_in_path")
          expect(outsideTree()).toEqual(before)

          // A write that must create `sub/new/deep.txt`: the walk stops at the missing `sub/new`.
          yield* arm("sub/new")
          const created = yield* Effect.flip(
            workspace.write("sub/new/deep.txt" as WorkspacePath, new TextEncoder().encode("x")),
          )
          expect(reasonOf(created)).toBe("symlink_in_path")
          expect(outsideTree()).toEqual(before)

          yield* arm("sub/l")
          const linked = yield* Effect.flip(workspace.symlink("sub/l" as WorkspacePath, "f.txt"))
          expect(reasonOf(linked)).toBe("symlink_in_path")
          expect(outsideTree()).toEqual(before)
        }),
    )
  },
)

describe("atomic write: a directory swapped for a symlink after the temp file was written", () => {
  it.scoped("the rename is refused, the target keeps its content, and nothing outside changes", () =>
    Effect.gen(function* () {
      const { root, outside } = yield* raceTree("race-rename")
      const moved = join(root, "sub-moved")
      const failure = yield* Effect.flip(
        writeAtomic(join(root, "sub", "f.txt"), new TextEncoder().encode("pwned"), {
          durability: "atomic",
          confined: true,
          // The attacker's move, once the content is in the temp file and before the rename.
          onWritten: () => {
            fs.renameSync(join(root, "sub"), moved)
            fs.symlinkSync("../outside", join(root, "sub"))
          },
        }),
      )
      expect(failure.code).toBe("EXDEV")
      expect(fs.readFileSync(join(outside, "f.txt"), "utf8")).toBe("outside secret")
      expect(fs.readdirSync(outside)).toEqual(["f.txt"])
      expect(fs.readFileSync(join(moved, "f.txt"), "utf8")).toBe("inside")
    }),
  )
})
