// Stable reads (issue 20, item 9): while another process rewrites an 8 MB file in place over and
// over, every read through the workspace returns one version whole (each version is one byte
// value repeated) or fails with code ECHANGED; a torn mix of two versions never comes back. Run
// with the kernel-confined reads and the checked JavaScript ones.
import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync, realpathSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import type { WorkspacePath } from "@rewind/contracts"
import { Effect, Option } from "effect"
import { NodeWorkspace } from "../src/index.js"
import { tempDirectory } from "./fsFixture.js"

const SIZE = 8 * 1024 * 1024
const READS = 15
const rewriteLoop = fileURLToPath(new URL("./fixtures/rewriteLoop.py", import.meta.url))

const stop = (child: ChildProcess) =>
  Effect.async<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    child.once("exit", () => resume(Effect.void))
    child.kill("SIGKILL")
  })

/** Starts the writer (stopped when the scope closes, if not before); the effect returned stops it. */
const startWriter = (path: string) =>
  Effect.map(
    Effect.acquireRelease(
      Effect.async<ChildProcess, Error>((resume) => {
        const child = spawn("python3", [rewriteLoop, path, String(SIZE), "60"], {
          stdio: ["ignore", "pipe", "inherit"],
        })
        child.once("error", (e) => resume(Effect.fail(e)))
        child.stdout!.once("data", () => resume(Effect.succeed(child)))
      }),
      stop,
    ),
    stop,
  )

/** Whether the bytes are one version: the same byte value throughout, and all of the file. */
const isOneVersion = (content: Uint8Array) =>
  content.byteLength === SIZE &&
  Buffer.from(content.buffer, content.byteOffset, content.byteLength).equals(Buffer.alloc(SIZE, content[0]!))

describe.each([
  ["kernel-confined", true],
  ["checked JavaScript", false],
])("stable reads (%s)", (_, nativeFiles) => {
  it.scoped("a file rewritten in place during reads is read whole or refused as ECHANGED, never torn", () =>
    Effect.gen(function* () {
      const root = realpathSync(yield* tempDirectory("stable-read"))
      writeFileSync(join(root, "big.bin"), Buffer.alloc(SIZE, 0))
      const workspace = yield* NodeWorkspace.make(root, { nativeFiles })
      const stopWriter = yield* startWriter(join(root, "big.bin"))
      const outcomes = { whole: 0, changed: 0, torn: 0 }
      for (let i = 0; i < READS; i++) {
        const read = yield* Effect.either(workspace.read("big.bin" as WorkspacePath))
        if (read._tag === "Left") {
          expect(read.left._tag === "WorkspaceIoError" && read.left.code).toBe("ECHANGED")
          expect(read.left.message).toContain("kept changing while it was read")
          outcomes.changed++
        } else if (isOneVersion(Option.getOrThrow(read.right).content)) outcomes.whole++
        else outcomes.torn++
      }
      // Once the writer stops, the file reads again (after the workspace let it settle), as it is
      // on disk (the writer was killed mid-version, so that may itself be a mix: it is what the
      // file holds now).
      yield* stopWriter
      const settled = Option.getOrThrow(yield* workspace.read("big.bin" as WorkspacePath)).content
      expect(Buffer.from(settled).equals(readFileSync(join(root, "big.bin")))).toBe(true)
      console.log(
        `stable reads (${nativeFiles ? "kernel-confined" : "checked"}): ${JSON.stringify(outcomes)}`,
      )
      expect(outcomes.torn).toBe(0)
    }),
  )
})
