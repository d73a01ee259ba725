/**
 * Root-confined path resolution, shared by every Workspace adapter so they agree on what "inside
 * the root" means.
 *
 * A path from data is first checked as a `WorkspacePath` (relative, no `..`, no NUL). Then it is
 * walked one component at a time from the (symlink-free) root, and no symlink is ever followed:
 * a symlink in a directory component refuses the path (`symlink_in_path`, naming the link), and
 * one in the last component is either reported as what is there (delete, stat, readLink) or
 * refused too (read, write: a read never follows a link, a write never replaces one or writes
 * through it). So the location of every entry is the lexical one, root + path, and the adapter
 * only ever probes paths inside the root.
 *
 * This confines paths that come from data; it is not a defence against another process swapping a
 * directory for a symlink between the walk and the system call. An adapter closes that window by
 * opening what it acts on beneath the root without following links (the Node adapter on Linux:
 * `openat2` with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), so the kernel, not this walk, has the
 * last word.
 */
import { PathRefused, type WorkspaceIoError, workspacePathProblem } from "@rewind/contracts"
import { Effect } from "effect"

/** What is at one absolute path, as an adapter's `lstat`/`readlink` sees it. */
export type ProbedEntry =
  | { readonly kind: "missing" | "file" | "directory" | "other" }
  | { readonly kind: "symlink"; readonly target: string }

export interface ConfinedPath {
  readonly kind: "missing" | "file" | "directory" | "symlink" | "other"
  /** Absolute location of the entry: the root joined with the path (no link is ever followed). */
  readonly absolute: string
  /** The entry's location relative to the root, `/`-separated ("" for the root itself). */
  readonly relative: string
  /** The deepest directory on the way that exists (the entry's parent when it exists). */
  readonly existingParent: string
  /** Components under `existingParent` still to create, the entry's own name last; empty when it exists. */
  readonly missing: ReadonlyArray<string>
}

export interface ConfinementOptions<E> {
  /** Absolute, symlink-free root without a trailing separator. */
  readonly root: string
  readonly probe: (absolute: string) => Effect.Effect<ProbedEntry, E>
  /**
   * A symlink in the last component: `refuse` it (`symlink_in_path`; reads and writes) or
   * `report` it as the entry that is there (delete, stat, readLink, creating a symlink).
   */
  readonly finalSymlink: "refuse" | "report"
  readonly operation: WorkspaceIoError["operation"]
  /** Builds the error for a non-directory met in the middle of a path. */
  readonly notADirectory: (path: string, at: string) => E
  /**
   * The entry at the whole rooted path in one step, where the adapter can have the kernel walk it
   * without following any link, the last component included (every component on the way is then a
   * directory, as the walk would find them): `missing` only when just the last component is absent.
   * Undefined when it cannot say (a link, a file or nothing where a directory is on the way): the
   * walk then finds which and refuses as it always does. Either way the answer is the walk's.
   */
  readonly probeWhole?: (absolute: string) => Effect.Effect<ProbedEntry | undefined, E>
}

/** Checks a path from data; returns its segments or the refusal a Workspace reports. */
export const checkWorkspacePath = (path: string): Effect.Effect<ReadonlyArray<string>, PathRefused> => {
  const problem = typeof path === "string" ? workspacePathProblem(path) : "a workspace path must be a string"
  if (problem === undefined) return Effect.succeed(path.split("/"))
  const escapes =
    typeof path === "string" &&
    (path.startsWith("/") || /^[A-Za-z]:/.test(path) || path.split(/[/\\]/).includes(".."))
  return Effect.fail(
    new PathRefused({
      path: String(path),
      reason: escapes ? "outside_root" : "malformed",
      message: `refused path ${JSON.stringify(path)}: ${problem}`,
    }),
  )
}

/** Linux's limits: a whole path (with its terminating NUL) and one name, in bytes. */
const PATH_MAX = 4096
const NAME_MAX = 255
const utf8 = new TextEncoder()

/**
 * Refuses a path the system could not name once it is put under the root: checked at the door,
 * so a restore of it fails before a directory is made, not half-way down with ENAMETOOLONG.
 */
/**
 * Whether the path is so short, rooted, that no limit can refuse it: a UTF-16 code unit is at most
 * 3 bytes of UTF-8, and nearly every path is this short (encoding every one cost a fifth of a
 * per-path protection check). False says nothing: `checkRootedLength` decides.
 */
export const surelyShortEnough = (root: string, path: string, segments: ReadonlyArray<string>) =>
  3 * (root.length + 1 + path.length) < PATH_MAX && segments.every((s) => 3 * s.length <= NAME_MAX)

export const checkRootedLength = (
  root: string,
  path: string,
  segments: ReadonlyArray<string>,
): Effect.Effect<void, PathRefused> => {
  if (surelyShortEnough(root, path, segments)) return Effect.void
  const long = segments.find((s) => utf8.encode(s).length > NAME_MAX)
  const rootedBytes = utf8.encode(joinUnder(root, segments)).length
  if (long === undefined && rootedBytes < PATH_MAX) return Effect.void
  const why =
    long !== undefined
      ? `its component ${JSON.stringify(long.length > 40 ? `${long.slice(0, 40)}…` : long)} is longer than ${NAME_MAX} bytes`
      : `under the workspace root it is ${rootedBytes} bytes long, more than the ${PATH_MAX - 1} the system allows`
  return Effect.fail(
    new PathRefused({
      path,
      reason: "too_long",
      message: `refused path ${JSON.stringify(path.length > 80 ? `${path.slice(0, 80)}…` : path)}: ${why}`,
    }),
  )
}

const splitTarget = (target: string): Array<string> => target.split("/").filter((s) => s !== "" && s !== ".")

const joinUnder = (root: string, segments: ReadonlyArray<string>): string =>
  segments.length === 0 ? root : `${root === "/" ? "" : root}/${segments.join("/")}`

/** Where a link at `via` (a `/` path under the root) leads, said for a message; nothing is probed. */
const whereLinkLeads = (via: string, target: string): string => {
  if (target.startsWith("/")) return `points to the absolute path ${JSON.stringify(target)}`
  const depth = via.split("/").slice(0, -1)
  for (const segment of splitTarget(target)) {
    if (segment !== "..") depth.push(segment)
    else if (depth.length === 0) return "climbs above the root"
    else depth.pop()
  }
  return `points to ${JSON.stringify(target)}, inside the root`
}

/**
 * The refusal of a path because of the symlink at `via` (a directory component, or the path
 * itself), naming the link and where it leads.
 */
const symlinkInPath = (path: string, via: string, target: string, operation: string): PathRefused =>
  new PathRefused({
    path,
    reason: "symlink_in_path",
    message: `refused to ${operation} ${JSON.stringify(path)}: the symlink ${JSON.stringify(via)} ${whereLinkLeads(via, target)}; the workspace never ${via === path ? "follows a symlink" : "goes through a symlink on the way"}`,
  })

/**
 * What the walk answers once it reaches the last component and finds `entry` there (every
 * component before it a directory).
 */
const lastEntry = <E>(
  path: string,
  segments: ReadonlyArray<string>,
  entry: ProbedEntry,
  options: ConfinementOptions<E>,
): Effect.Effect<ConfinedPath, PathRefused | E> => {
  const { root } = options
  const absolute = joinUnder(root, segments)
  const existingParent = joinUnder(root, segments.slice(0, -1))
  switch (entry.kind) {
    case "missing":
      return Effect.succeed({
        kind: "missing",
        absolute,
        relative: path,
        existingParent,
        missing: segments.slice(-1),
      })
    case "symlink":
      if (options.finalSymlink === "refuse")
        return Effect.fail(symlinkInPath(path, path, entry.target, options.operation))
      break
  }
  return Effect.succeed({ kind: entry.kind, absolute, relative: path, existingParent, missing: [] })
}

/** Resolves a workspace path inside the root, or refuses it. */
export const resolveConfined = <E>(
  path: string,
  options: ConfinementOptions<E>,
): Effect.Effect<ConfinedPath, PathRefused | E> =>
  Effect.gen(function* () {
    const { root } = options
    const segments = yield* checkWorkspacePath(path)
    yield* checkRootedLength(root, path, segments)
    // One step for the whole path when the adapter can take it (a component at a time otherwise).
    if (options.probeWhole !== undefined && segments.length > 1) {
      const whole = yield* options.probeWhole(joinUnder(root, segments))
      if (whole !== undefined) return yield* lastEntry(path, segments, whole, options)
    }
    for (let i = 0; i < segments.length - 1; i++) {
      const walked = segments.slice(0, i + 1)
      const entry = yield* options.probe(joinUnder(root, walked))
      switch (entry.kind) {
        case "missing":
          return {
            kind: "missing",
            absolute: joinUnder(root, segments),
            relative: path,
            existingParent: joinUnder(root, segments.slice(0, i)),
            missing: segments.slice(i),
          }
        case "directory":
          continue
        case "symlink":
          return yield* symlinkInPath(path, walked.join("/"), entry.target, options.operation)
        case "file":
        case "other":
          return yield* Effect.fail(options.notADirectory(path, walked.join("/")))
      }
    }
    return yield* lastEntry(path, segments, yield* options.probe(joinUnder(root, segments)), options)
  })

/**
 * Why a symlink made in `parentRelative` (a real directory under the root, as `/` segments) with
 * this target would not stay inside the root, lexically; undefined when it stays. Absolute targets
 * never stay: they may lead anywhere.
 */
export const symlinkTargetEscape = (
  parentRelative: ReadonlyArray<string>,
  target: string,
): string | undefined => {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: a NUL in a link target is refused
  if (target.length === 0 || /\u0000/.test(target)) return "the target is empty or contains NUL"
  if (target.startsWith("/")) return "an absolute target may lead outside the workspace root"
  const depth = [...parentRelative]
  for (const segment of splitTarget(target)) {
    if (segment !== "..") depth.push(segment)
    else if (depth.length === 0) return "the target climbs above the workspace root"
    else depth.pop()
  }
  return undefined
}

/** Fails with `symlink_escape` when a symlink at `linkPath` to `target` would not stay inside the root. */
export const checkSymlinkTarget = (
  linkPath: string,
  parentRelative: ReadonlyArray<string>,
  target: string,
): Effect.Effect<void, PathRefused> => {
  const why = symlinkTargetEscape(parentRelative, target)
  return why === undefined
    ? Effect.void
    : Effect.fail(
        new PathRefused({
          path: linkPath,
          reason: "symlink_escape",
          message: `refused symlink ${JSON.stringify(linkPath)} -> ${JSON.stringify(target)}: ${why}`,
        }),
      )
}
