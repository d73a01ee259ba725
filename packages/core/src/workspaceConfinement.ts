/**
 * Root-confined path resolution, shared by every Workspace adapter so they agree on what "inside
 * the root" means.
 *
 * A path from data is first checked as a `WorkspacePath` (relative, no `..`, no NUL). Then it is
 * walked one component at a time from the (symlink-free) root, the way a kernel would, except that
 * every symlink met on the way is expanded here: its target is pushed back onto the components
 * still to walk, `..` pops a directory that is already known to be real, and popping past the root
 * or an absolute target elsewhere is refused before anything outside is touched. The adapter only
 * ever probes paths that are inside the root, so nothing outside it is read, stat'ed or written.
 *
 * This confines paths that come from data; it is not a defence against another process swapping a
 * directory for a symlink between the walk and the write (adapters narrow that window by opening
 * the final file without following symlinks).
 */
import { PathRefused, type WorkspaceIoError, workspacePathProblem } from "@rewind/contracts"
import { Effect } from "effect"

/** What is at one absolute path, as an adapter's `lstat`/`readlink` sees it. */
export type ProbedEntry =
  | { readonly kind: "missing" | "file" | "directory" | "other" }
  | { readonly kind: "symlink"; readonly target: string }

export interface ConfinedPath {
  readonly kind: "missing" | "file" | "directory" | "symlink" | "other"
  /** Absolute location of the entry, every symlink on the way resolved; always inside the root. */
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
  /** Follow a symlink in the last component (reads and writes) or report it as is (delete, stat). */
  readonly followFinalSymlink: boolean
  readonly operation: WorkspaceIoError["operation"]
  /** Builds the error for a non-directory met in the middle of a path. */
  readonly notADirectory: (path: string, at: string) => E
}

/** Symlinks expanded for one path before it is refused as a loop (as Linux's ELOOP). */
export const MAX_SYMLINK_EXPANSIONS = 40

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
const checkRootedLength = (
  root: string,
  path: string,
  segments: ReadonlyArray<string>,
): Effect.Effect<void, PathRefused> => {
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

/** Resolves a workspace path inside the root, or refuses it. */
export const resolveConfined = <E>(
  path: string,
  options: ConfinementOptions<E>,
): Effect.Effect<ConfinedPath, PathRefused | E> =>
  Effect.gen(function* () {
    const { root } = options
    const segments = yield* checkWorkspacePath(path)
    yield* checkRootedLength(root, path, segments)
    const rootPrefix = root === "/" ? "/" : `${root}/`
    const real: Array<string> = []
    const queue: Array<string> = [...segments]
    let expansions = 0
    // The symlink whose target is being walked: a `..` that climbs out is its doing, not the path's.
    let expanding: string | undefined
    const escapeRefusal = (via: string, detail: string) =>
      new PathRefused({
        path,
        reason: "symlink_escape",
        message: `refused path ${JSON.stringify(path)}: the symlink ${JSON.stringify(via)} ${detail}; it would lead outside the workspace root`,
      })
    const existing = (kind: ConfinedPath["kind"], name: string | undefined): ConfinedPath => {
      const all = name === undefined ? real : [...real, name]
      return {
        kind,
        absolute: joinUnder(root, all),
        relative: all.join("/"),
        existingParent: joinUnder(root, all.slice(0, -1)),
        missing: [],
      }
    }

    while (queue.length > 0) {
      const component = queue.shift()!
      const last = queue.length === 0
      if (component === "..") {
        // Only a symlink target can put `..` here (the path itself was checked); `real` holds
        // directories that exist and are not symlinks, so their parent is the lexical one.
        if (real.length === 0)
          return yield* escapeRefusal(expanding ?? path, "climbs above the root with '..'")
        real.pop()
        continue
      }
      const absolute = joinUnder(root, [...real, component])
      const entry = yield* options.probe(absolute)
      switch (entry.kind) {
        case "missing": {
          const rest = [component, ...queue]
          if (rest.includes("..")) {
            return yield* new PathRefused({
              path,
              reason: "malformed",
              message: `refused path ${JSON.stringify(path)}: a symlink target walks through the missing directory ${JSON.stringify(component)}`,
            })
          }
          return {
            kind: "missing",
            absolute: joinUnder(root, [...real, ...rest]),
            relative: [...real, ...rest].join("/"),
            existingParent: joinUnder(root, real),
            missing: rest,
          }
        }
        case "symlink": {
          if (last && !options.followFinalSymlink) return existing("symlink", component)
          expansions += 1
          const via = [...real, component].join("/")
          expanding = via
          if (expansions > MAX_SYMLINK_EXPANSIONS) {
            return yield* new PathRefused({
              path,
              reason: "symlink_loop",
              message: `refused path ${JSON.stringify(path)}: more than ${MAX_SYMLINK_EXPANSIONS} symlinks on the way (a loop?)`,
            })
          }
          const target = entry.target
          if (target.startsWith("/")) {
            if (target !== root && !target.startsWith(rootPrefix)) {
              return yield* escapeRefusal(via, `points to the absolute path ${JSON.stringify(target)}`)
            }
            real.length = 0
            queue.unshift(...splitTarget(target.slice(root.length)))
          } else {
            queue.unshift(...splitTarget(target))
          }
          continue
        }
        case "directory":
          real.push(component)
          continue
        case "file":
        case "other":
          if (!last) return yield* Effect.fail(options.notADirectory(path, [...real, component].join("/")))
          return existing(entry.kind, component)
      }
    }
    // The walk ended on a directory (the last component was one, or a symlink led to one).
    return existing("directory", undefined)
  })

/**
 * Checks that a symlink created in `parentRelative` (a real directory under the root, as `/`
 * segments) with this target stays inside the root, lexically. Absolute targets are refused.
 */
export const checkSymlinkTarget = (
  linkPath: string,
  parentRelative: ReadonlyArray<string>,
  target: string,
): Effect.Effect<void, PathRefused> => {
  const refuse = (why: string) =>
    Effect.fail(
      new PathRefused({
        path: linkPath,
        reason: "symlink_escape",
        message: `refused symlink ${JSON.stringify(linkPath)} -> ${JSON.stringify(target)}: ${why}`,
      }),
    )
  // biome-ignore lint/suspicious/noControlCharactersInRegex: a NUL in a link target is refused
  if (target.length === 0 || /\u0000/.test(target)) return refuse("the target is empty or contains NUL")
  if (target.startsWith("/")) return refuse("an absolute target may lead outside the workspace root")
  const depth = [...parentRelative]
  for (const segment of splitTarget(target)) {
    if (segment !== "..") depth.push(segment)
    else if (depth.length === 0) return refuse("the target climbs above the workspace root")
    else depth.pop()
  }
  return Effect.void
}
