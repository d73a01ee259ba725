/**
 * A path inside the workspace, as data may carry it: relative, `/`-separated, normalised, with no
 * `..`, no empty or `.` segments, no NUL or control characters. Anything else is refused before it
 * reaches a filesystem call, which is the first of two fences (the Workspace adapter re-checks the
 * resolved path against its root, symlinks included).
 */
import { Schema } from "effect"

const describeProblem = (p: string): string | undefined => {
  if (p.length === 0) return "a workspace path must not be empty"
  if (p.length > 4096) return "a workspace path is at most 4096 characters"
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
  if (/[\u0000-\u001f\u007f]/.test(p)) return "a workspace path must not contain NUL or control characters"
  if (p.includes("\\")) return "a workspace path uses / as separator, never \\"
  if (p.startsWith("/") || /^[A-Za-z]:/.test(p))
    return "a workspace path must be relative to the workspace root"
  for (const segment of p.split("/")) {
    if (segment === "..") return "a workspace path must not contain '..'"
    if (segment === "" || segment === ".")
      return "a workspace path must be normalised (no empty or '.' segments)"
  }
  if (!p.isWellFormed()) return "a workspace path must be well-formed Unicode"
  return undefined
}

export const WorkspacePath = Schema.String.pipe(
  Schema.filter((p) => describeProblem(p) ?? true, { identifier: "WorkspacePath" }),
  Schema.brand("WorkspacePath"),
)
export type WorkspacePath = typeof WorkspacePath.Type

/** Why a string is not a valid workspace path, or undefined when it is one. */
export const workspacePathProblem = describeProblem
