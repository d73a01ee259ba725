/**
 * What a journaled restore finds at one of its targets: the file there, or none. Every step that
 * compares a target with a journaled version reads through here (the rescue read, the check before
 * each write, compensation, redo's check, recovery's listing), so they agree on one rule: where no
 * regular file can be at the path — a directory stands there, or a regular file or a symlink
 * stands where a directory on the way should be (a link is a link in this tree, never followed:
 * nothing of the tree is beneath it) — no file is there (`None`). A restore that changes a path's
 * kind (a file or link replaced by a directory, or the reverse) meets these: the writer removes
 * what is in the way before it writes, and a write that still meets a directory or a link fails
 * (the writer never goes through one) and is rolled back. Anything else (a FIFO, an unreadable
 * file) stays an error: it is something there that the restore cannot account for.
 */
import type { WorkspacePath } from "@rewind/contracts"
import { Effect, Option } from "effect"
import { Workspace } from "../ports/Workspace.js"
import { nothingCanBeThere } from "../workspace/pathAbsence.js"

/** The file at `path`, or `None` where nothing is or no file can be (see the header). */
export const readTarget = (path: WorkspacePath) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    return yield* Effect.catchAll(workspace.read(path), (error) => {
      if (nothingCanBeThere(error)) return Effect.succeed(Option.none())
      if (error._tag !== "PathRefused" || error.reason !== "not_a_regular_file") return Effect.fail(error)
      // A FIFO or device is refused the same way; only a directory holds no file.
      return Effect.flatMap(
        Effect.orElseFail(workspace.stat(path), () => error),
        (stat) =>
          Option.isSome(stat) && stat.value.kind === "directory"
            ? Effect.succeed(Option.none())
            : Effect.fail(error),
      )
    })
  })
