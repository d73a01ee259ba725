/**
 * The Workspace conformance cases of a read given the content the file is expected to hold
 * (`WorkspaceReadOptions.expected`, what an agent's tool says it wrote): the hint may spare a
 * freshly written file the settle wait, but it never changes the answer. A match returns the
 * file's bytes; a mismatch (a longer, shorter or different guess, a guess for a file that is not
 * there) returns exactly what a read without the hint returns. Run by `workspaceConformance`.
 */
import { expect, it } from "@effect/vitest"
import type { WorkspacePath } from "@rewind/contracts"
import { Effect, Option } from "effect"
import type { WorkspaceHarness } from "./workspaceConformance.js"

const p = (path: string) => path as WorkspacePath
const text = (s: string) => new TextEncoder().encode(s)
const decode = (b: Uint8Array) => new TextDecoder().decode(b)

export const expectedReadConformance = (harness: WorkspaceHarness): void => {
  it.scoped("a read of a file just written, with the content expected, returns those bytes and mode", () =>
    Effect.gen(function* () {
      const { workspace, plantFile } = yield* harness.make
      // Written this instant: its stamp is as fresh as a tool's write seen by its after-hook.
      yield* plantFile("src/fresh.ts", "export const fresh = 1\n", 0o640)
      const read = Option.getOrThrow(
        yield* workspace.read(p("src/fresh.ts"), { expected: text("export const fresh = 1\n") }),
      )
      expect(decode(read.content)).toBe("export const fresh = 1\n")
      expect(read.mode).toBe(0o640)
    }),
  )

  it.scoped("a wrong expectation changes nothing: the read returns what the file really holds", () =>
    Effect.gen(function* () {
      const { workspace, plantFile } = yield* harness.make
      yield* plantFile("a.txt", "written by someone else\n")
      for (const guess of [
        "written by the tool\n",
        "written by someone else",
        "written by someone else\n\n",
        "",
      ]) {
        const read = yield* workspace.read(p("a.txt"), { expected: text(guess) })
        expect(Option.map(read, (f) => decode(f.content))).toEqual(Option.some("written by someone else\n"))
      }
      // An expectation for a file that is not there: still nothing there.
      expect(Option.isNone(yield* workspace.read(p("gone.txt"), { expected: text("x") }))).toBe(true)
      // Nor does it make a directory readable.
      yield* plantFile("dir/inside.txt", "x")
      const directory = yield* Effect.either(workspace.read(p("dir"), { expected: text("x") }))
      expect(directory._tag).toBe("Left")
    }),
  )

  it.scoped("a file rewritten after the expectation was formed is read as it is now", () =>
    Effect.gen(function* () {
      const { workspace, plantFile } = yield* harness.make
      yield* plantFile("notes.md", "# Notes\n- one\n")
      // The tool wrote "- one"; something else appended a line right after it.
      yield* plantFile("notes.md", "# Notes\n- one\n- two\n")
      const read = yield* workspace.read(p("notes.md"), { expected: text("# Notes\n- one\n") })
      expect(Option.map(read, (f) => decode(f.content))).toEqual(Option.some("# Notes\n- one\n- two\n"))
    }),
  )
}
