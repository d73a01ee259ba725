// A capture's bulk read through the kernel-confined `readFilesBeneath` (one descriptor per run of
// files in a directory, each file opened by name in it) gives, path by path, the answer the
// checked JavaScript reads give: the same bytes and mode for a file, and for everything else
// (a symlink anywhere on the way or in the name, a directory, a FIFO, a file in the way, a missing
// path, a path leaving the root) the same refusal or absence, since those are declined and read
// the walked way.
import { execFileSync } from "node:child_process"
import { chmodSync, mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { WorkspacePath } from "@rewind/contracts"
import { Effect, Either } from "effect"
import { NodeWorkspace } from "../src/index.js"
import { hasMkfifo, tempDirectory } from "./fsFixture.js"
import { readAnswerShape } from "./readAnswer.js"

const shape = readAnswerShape

describe("readMany through readFilesBeneath", () => {
  it.scoped.skipIf(NodeWorkspace.implementation.fileOperations !== "kernel-confined")(
    "answers every path as the checked reads do",
    () =>
      Effect.gen(function* () {
        const base = realpathSync(yield* tempDirectory("read-beneath"))
        const root = join(base, "root")
        mkdirSync(join(root, "a", "deep"), { recursive: true })
        mkdirSync(join(root, "b"))
        mkdirSync(join(base, "outside"))
        writeFileSync(join(base, "outside", "secret"), "not the workspace's")
        writeFileSync(join(root, "top"), "at the root")
        writeFileSync(join(root, "a", "x"), "a/x")
        writeFileSync(join(root, "a", "z"), "")
        chmodSync(join(root, "a", "x"), 0o644)
        chmodSync(join(root, "a", "z"), 0o644)
        writeFileSync(join(root, "a", "deep", "y"), "a/deep/y")
        writeFileSync(join(root, "b", "y"), "b/y")
        chmodSync(join(root, "b", "y"), 0o750)
        writeFileSync(join(root, "f"), "a file where a directory would be")
        symlinkSync("a", join(root, "dirLink"))
        symlinkSync(join(base, "outside"), join(root, "out"))
        symlinkSync("a/x", join(root, "fileLink"))
        symlinkSync("../outside/secret", join(root, "b", "up"))
        if (hasMkfifo) execFileSync("mkfifo", [join(root, "a", "fifo")])
        const paths = [
          "a/x",
          "b/y",
          // Back to a directory met before, and runs of one directory.
          "a/z",
          "a/deep/y",
          "top",
          "dirLink/x",
          "out/secret",
          "fileLink",
          "b/up",
          "a",
          "a/deep",
          ...(hasMkfifo ? ["a/fifo"] : []),
          "f/x",
          "missing",
          "a/missing",
          "gone/deeper/file",
          "../outside/secret",
          "a/../top",
          "",
        ] as Array<WorkspacePath>

        const confined = yield* NodeWorkspace.make(root)
        const checked = yield* NodeWorkspace.make(root, { nativeFiles: false })
        const bulk = yield* confined.readMany(paths)
        const expected = yield* checked.readMany(paths)
        for (const [i, path] of paths.entries()) {
          expect(shape(bulk[i]!), path).toEqual(shape(expected[i]!))
          // And as a read on its own gives it.
          expect(shape(bulk[i]!), path).toEqual(shape(yield* Effect.either(confined.read(path))))
        }
        // The files read as they are; the rest are not files of the workspace.
        expect(shape(bulk[0]!)).toEqual({ content: Buffer.from("a/x").toString("base64"), mode: 0o644 })
        expect(shape(bulk[1]!)).toEqual({ content: Buffer.from("b/y").toString("base64"), mode: 0o750 })
        expect(shape(bulk[2]!)).toEqual({ content: "", mode: 0o644 })
        for (const i of [5, 6, 7, 8]) expect(Either.isLeft(bulk[i]!), paths[i]).toBe(true)
        expect(shape(bulk[paths.indexOf("missing" as WorkspacePath)]!)).toBe("absent")
      }),
  )
})
