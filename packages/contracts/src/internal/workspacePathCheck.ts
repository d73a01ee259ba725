/**
 * The two halves of the workspace-path check behind `WorkspacePath` (workspacePath.ts): a one-pass
 * proof of validity for the common path, and the full check that alone decides and words a refusal.
 * Internal: kept apart so the property test can hold the fast path against the full check itself
 * rather than against a copy of it.
 */
/**
 * One pass over the code units that proves a path valid, for the common case: a capture checks
 * every path of a decoded manifest and stat cache (tens of thousands per process start), and the
 * regex-and-split check (`explainProblem`) cost about 0.1 s of a babel-sized repeat capture.
 * `false` means "not proven", never "invalid": anything unusual (a lone or paired surrogate, a
 * second character `:`) is left to `explainProblem`, which alone decides and words the refusal.
 */
export const plainlyValid = (p: string): boolean => {
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

export const explainProblem = (p: string): string | undefined => {
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
