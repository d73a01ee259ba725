/**
 * A path inside the workspace, as data may carry it: relative, `/`-separated, normalised, with no
 * `..`, no empty or `.` segments, no NUL or control characters. Anything else is refused before it
 * reaches a filesystem call, which is the first of two fences (the Workspace adapter re-checks the
 * resolved path against its root, symlinks included).
 */
import { Schema } from "effect"
import { explainProblem, plainlyValid } from "./internal/workspacePathCheck.js"

const describeProblem = (p: string): string | undefined => (plainlyValid(p) ? undefined : explainProblem(p))

export const WorkspacePath = Schema.String.pipe(
  Schema.filter((p) => describeProblem(p) ?? true, { identifier: "WorkspacePath" }),
  Schema.brand("WorkspacePath"),
)
export type WorkspacePath = typeof WorkspacePath.Type

/** Why a string is not a valid workspace path, or undefined when it is one. */
export const workspacePathProblem = describeProblem

/**
 * A path as a host or a person writes it, made into the form `WorkspacePath` requires: empty and
 * `.` segments dropped (`./a.txt`, `a//b`, `a/` become `a.txt`, `a/b`, `a`). Nothing else changes:
 * no trimming (` a.txt` is a legal name), and `..`, absolute paths, `\` and control characters are
 * left in place so `WorkspacePath` refuses them with its own message. A path that would normalise
 * to nothing (`.`, `./`) is returned as given, for the same reason.
 */
export const normaliseWorkspacePath = (p: string): string => {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: such a path is refused, not normalised
  if (p.startsWith("/") || /^[A-Za-z]:/.test(p) || p.includes("\\") || /[\u0000-\u001f\u007f]/.test(p))
    return p
  const segments = p.split("/").filter((s) => s !== "" && s !== ".")
  return segments.length === 0 ? p : segments.join("/")
}

/** A `WorkspacePath` decoded from what a host gives: normalised first, then checked. */
export const WorkspacePathFromHost = Schema.transform(Schema.String, WorkspacePath, {
  strict: true,
  decode: normaliseWorkspacePath,
  encode: (p) => p,
})

/** The directory a workspace path sits in: `""` (the root) for a top-level name. */
export const parentOf = (path: string): string => {
  const slash = path.lastIndexOf("/")
  return slash < 0 ? "" : path.slice(0, slash)
}

/** The last segment of a workspace path: its name in its directory. */
export const nameOf = (path: string): string => path.slice(path.lastIndexOf("/") + 1)
