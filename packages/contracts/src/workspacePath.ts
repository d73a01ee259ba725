/**
 * A path inside the workspace, as data may carry it: relative, `/`-separated, normalised, with no
 * `..`, no empty or `.` segments, no NUL or control characters. Anything else is refused before it
 * reaches a filesystem call, which is the first of two fences (the Workspace adapter re-checks the
 * resolved path against its root, symlinks included).
 */
import { Schema } from "effect"

/**
 * One pass over the code units that proves a path valid, for the common case: a capture checks
 * every path of a decoded manifest and stat cache (tens of thousands per process start), and the
 * regex-and-split check below cost about 0.1 s of a babel-sized repeat capture. `false` means
 * "not proven", never "invalid": anything unusual (a lone or paired surrogate, a second character
 * `:`) is left to `explainProblem`, which alone decides and words the refusal.
 */
const plainlyValid = (p: string): boolean => {
  const length = p.length
  if (length === 0 || length > 4096) return false
  if (length >= 2 && p.charCodeAt(1) === 58) return false // "C:…": let the full check decide
  let segmentStart = 0
  for (let i = 0; i <= length; i++) {
    const c = i < length ? p.charCodeAt(i) : 47
    if (c === 47) {
      // "/" ends a segment: empty, "." and ".." segments are refused (a leading "/" is an empty one).
      const segment = i - segmentStart
      if (segment === 0) return false
      if (
        segment <= 2 &&
        p.charCodeAt(segmentStart) === 46 &&
        (segment === 1 || p.charCodeAt(segmentStart + 1) === 46)
      )
        return false
      segmentStart = i + 1
    } else if (c < 32 || c === 127 || c === 92 || (c >= 0xd800 && c <= 0xdfff)) return false
  }
  return true
}

const describeProblem = (p: string): string | undefined => (plainlyValid(p) ? undefined : explainProblem(p))

const explainProblem = (p: string): string | undefined => {
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
