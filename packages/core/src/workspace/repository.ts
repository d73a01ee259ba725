/**
 * The git repository a workspace lies in, as far as Rewind's scope depends on it: the files git
 * tracks (`gitIndex.ts`: no ignore rule excludes them) and the ignore rules that reach the
 * workspace from outside its root — the repository's `info/exclude`, and the `.gitignore` of every
 * directory from the repository's top down to the root's parent when the workspace is a
 * subdirectory (a package of a monorepo: its `dist/` or `.env` ignored by the top's rules). With
 * them, what a capture takes in is what `git ls-files -c -o --exclude-standard` lists below the
 * root, wherever the root is (the user's global `core.excludesFile` aside: it belongs to the
 * user's machine, not the repository).
 *
 * Found by walking up from the root to the first directory holding `.git` (a directory, or a
 * worktree's or submodule's file naming its git directory); read-only, the one read Rewind makes
 * outside the root. The walk does not go up into a ceiling directory (git's
 * `GIT_CEILING_DIRECTORIES`; the Node adapter adds the user's home directory): a home directory
 * kept in git, whose `.gitignore` is often `*`, would otherwise leave a project below it that is
 * not a repository of its own with nothing in scope — a safety tool must not go quiet that way. Everything is read again only when a file's stat (size, mtime, ctime, inode)
 * changed, and kept per workspace. What cannot be read gives nothing: no repository, no index or
 * an unusable one (no tracked set), an outer ignore file refused by the budget every ignore file
 * has (reported by the scan like any refused ignore file, its rules not applied).
 *
 * Invariants: the outer rules come before the root's own in every rule stack (a deeper file's rule
 * wins, as in git); the workspace root itself is always in scope (the user chose it): where the
 * repository ignores the root or a directory above it (a scratch workspace in its ignored `tmp/`),
 * git would list nothing below it, so its rules are not applied at all there — only what it
 * tracks; `identity` changes whenever any of this changes, so reused ignore
 * decisions and a live engine's tree are dropped then.
 */
import type { FileStat } from "@rewind/contracts"
import { Effect, Either, Option } from "effect"
import { once } from "../internal/once.js"
import type { RepositoryFile, RepositoryFiles, WorkspaceService } from "../ports/Workspace.js"
import { Workspace } from "../ports/Workspace.js"
import type { FileSystemPrimitives } from "./filesystemPrimitives.js"
import { MAX_INDEX_BYTES, parseGitIndex, type TrackedFiles, trackedBelow } from "./gitIndex.js"
import { IGNORE_FILE_LIMITS, type RefusedIgnoreFile } from "./ignoreFileCompile.js"
import { compileIgnoreFileRead, type RuleSet, type RuleStack } from "./ignoreRules.js"
import { ruleMatcherOf } from "./ruleMatcher.js"

export interface Repository {
  /**
   * The files git tracks below the root, as workspace paths; undefined without a usable index.
   * Read from the index on first use (`lazyRepository`): ask only where a decision turns on it.
   */
  readonly tracked: TrackedFiles | undefined
  /** The rule sets from outside the root, lowest precedence first: the base of every stack. */
  readonly outerRules: RuleStack
  /** Outer ignore files refused (over budget, unreadable): reported, their rules not applied. */
  readonly refused: ReadonlyArray<RefusedIgnoreFile>
  /**
   * One line per outer ignore file and one for the tracked set: what a scan's identity includes.
   * Asking for it reads the tracked set (the line holds its hash).
   */
  readonly identity: ReadonlyArray<string>
}

/** Directories walked up at most looking for `.git`. */
const MAX_DEPTH = 256

/** The stat fields that tell a changed file from an unchanged one. */
const fingerprintOf = (absolute: string, stat: FileStat) =>
  `${absolute}\0${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}:${stat.inode}`

const dirname = (absolute: string) => {
  const slash = absolute.lastIndexOf("/")
  return slash <= 0 ? "/" : absolute.slice(0, slash)
}

const join = (dir: string, name: string) => `${dir === "/" ? "" : dir}/${name}`

/** Resolves `target` (absolute, or relative to `from`) to a normalised absolute path. */
const resolveAbsolute = (from: string, target: string) => {
  const parts: Array<string> = []
  for (const segment of `${target.startsWith("/") ? "" : from}/${target}`.split("/")) {
    if (segment === "" || segment === ".") continue
    if (segment === "..") parts.pop()
    else parts.push(segment)
  }
  return `/${parts.join("/")}`
}

/**
 * Where the repository enclosing `root` keeps what Rewind reads, through a filesystem's
 * primitives (see the header). None when no directory from the root up holds `.git`, or its `.git`
 * is a symlink or a file that names no git directory.
 */
export const locateRepository = (
  root: string,
  fs: FileSystemPrimitives,
  ceilings: ReadonlyArray<string> = [],
): Effect.Effect<Option.Option<RepositoryFiles>> =>
  Effect.gen(function* () {
    const readAnywhere =
      fs.readOutsideRoot ?? ((absolute: string) => Effect.map(fs.readFile(absolute), (f) => f.content))
    /** A regular file's fingerprint and reader, or undefined when there is none. */
    const fileAt = (absolute: string, maxBytes: number) =>
      Effect.gen(function* () {
        // One lstat: nothing there (or a file on the way) is an answer, not a failure.
        const stat = yield* Effect.catchIf(
          fs.stat(absolute),
          (e) => e.code === "ENOENT" || e.code === "ENOTDIR",
          () => Effect.succeed(undefined),
        )
        if (stat?.kind !== "file") return undefined
        const over = stat.size > maxBytes ? `${stat.size} bytes, over the ${maxBytes}-byte limit` : undefined
        const read: RepositoryFile["read"] =
          over !== undefined
            ? Effect.succeed(Either.left(over))
            : Effect.map(
                Effect.either(readAnywhere(absolute)),
                Either.mapLeft((e) => e.message),
              )
        const readNow = fs.readOutsideRootNow
        return {
          fingerprint: fingerprintOf(absolute, stat),
          read,
          ...(readNow === undefined
            ? {}
            : {
                readNow: () =>
                  over !== undefined
                    ? Either.left(over)
                    : Either.mapLeft(readNow(absolute), (e) => e.message),
              }),
        } satisfies RepositoryFile
      })
    let top = root
    const below: Array<string> = []
    let dotGit: { readonly at: string; readonly kind: string } | undefined
    for (let depth = 0; depth < MAX_DEPTH; depth++) {
      const at = join(top, ".git")
      const { kind } = yield* fs.probe(at)
      if (kind === "directory" || kind === "file") {
        dotGit = { at, kind }
        break
      }
      if (top === "/" || ceilings.includes(dirname(top))) break
      below.unshift(top.slice(top.lastIndexOf("/") + 1))
      top = dirname(top)
    }
    if (dotGit === undefined) return Option.none()
    let gitDir = dotGit.at
    if (dotGit.kind === "file") {
      if ((yield* fs.stat(dotGit.at)).size > 4096) return Option.none()
      const content = yield* readAnywhere(dotGit.at)
      const match = /^gitdir: *(.+?)\s*$/m.exec(new TextDecoder().decode(content))
      if (match === null) return Option.none()
      gitDir = resolveAbsolute(top, match[1]!)
    }
    const outer: Array<RepositoryFiles["outerIgnoreFiles"][number]> = []
    const exclude = yield* fileAt(`${gitDir}/info/exclude`, IGNORE_FILE_LIMITS.maxBytes)
    if (exclude !== undefined) outer.push({ at: "", label: ".git/info/exclude", file: exclude })
    for (let i = 0; i < below.length; i++) {
      const dir = below.slice(0, i).join("/")
      const file = yield* fileAt(
        join(dir === "" ? top : `${top}/${dir}`, ".gitignore"),
        IGNORE_FILE_LIMITS.maxBytes,
      )
      if (file !== undefined)
        outer.push({ at: dir, label: `${"../".repeat(below.length - i)}.gitignore`, file })
    }
    const index = yield* fileAt(`${gitDir}/index`, MAX_INDEX_BYTES)
    return Option.some<RepositoryFiles>({
      prefix: below.join("/"),
      ...(index === undefined ? {} : { index }),
      outerIgnoreFiles: outer,
    })
  }).pipe(Effect.orElseSucceed(() => Option.none()))

/** The last repository read, per workspace: read again only when a fingerprint moved. */
const kept = new WeakMap<
  WorkspaceService,
  { readonly key: string; readonly repository: Repository | undefined }
>()

const keyOf = (files: RepositoryFiles) =>
  [
    files.prefix,
    files.index?.fingerprint ?? "",
    ...files.outerIgnoreFiles.map((f) => f.file.fingerprint),
  ].join("\n")

/** The identity line of the tracked set (see `Repository.identity`). */
const trackedIdentityLine = (tracked: TrackedFiles) => `\0tracked\0${tracked.identity}`

/**
 * A repository whose tracked set is read and parsed from the index on first use (`tracked`, or
 * `identity`, which holds its hash): a capture of a few changed directories asks for it only where
 * a rule excludes a file, and a repeat capture of a sealed tree mostly never (babel 4x's 20.8 MB
 * index took ~65 ms to read and ~120 ms to parse, ~35 MB in all). Where the filesystem cannot read
 * at once (`RepositoryFile.readNow`), the bytes are read when the repository is, and parsed on use.
 * Read later, the index may be newer than its fingerprint: git rewrote it after the stat. That is
 * the race a read right after the stat has too, only longer; the next `currentRepository` sees
 * the new fingerprint and reads it again, and a seal that recorded the older one compares the
 * tracked set by content next time (`snapshot/scanSeal.ts`).
 */
const lazyRepository = (
  trackedOf: () => TrackedFiles | undefined,
  rules: Pick<Repository, "outerRules" | "refused">,
  outerIdentity: ReadonlyArray<string>,
  rootIgnored: string | undefined,
): Repository => {
  const identityOf = once(() => {
    const tracked = trackedOf()
    return [
      ...outerIdentity,
      ...(tracked === undefined ? [] : [trackedIdentityLine(tracked)]),
      ...(rootIgnored === undefined ? [] : [`\0root-ignored\0${rootIgnored}`]),
    ]
  })
  return {
    get tracked() {
      return trackedOf()
    },
    ...rules,
    get identity() {
      return identityOf()
    },
  }
}

const readRepository = (files: RepositoryFiles) =>
  Effect.gen(function* () {
    const trackedIn = (bytes: Either.Either<Uint8Array, string>) => {
      const parsed = Either.isLeft(bytes) ? undefined : parseGitIndex(bytes.right)
      return parsed !== undefined && Either.isRight(parsed)
        ? trackedBelow(parsed.right, files.prefix)
        : undefined
    }
    let trackedOf: () => TrackedFiles | undefined = () => undefined
    const index = files.index
    // Read when first asked for where the filesystem reads at once; else now, parsed when asked.
    if (index?.readNow !== undefined) trackedOf = once(() => trackedIn(index.readNow!()))
    else if (index !== undefined) {
      const bytes = yield* index.read
      trackedOf = once(() => trackedIn(bytes))
    }
    // Each outer file is a rule set of its own: each sees workspace paths from its own directory.
    const outer: Array<{ readonly at: string; readonly rules: RuleSet }> = []
    const refused: Array<RefusedIgnoreFile> = []
    const identity: Array<string> = []
    for (const { at, label, file } of files.outerIgnoreFiles) {
      const read = Either.map(yield* file.read, Option.some)
      const one = yield* compileIgnoreFileRead(label, read)
      identity.push(one.identity)
      if (one.refused !== undefined) refused.push(one.refused)
      if (one.matcher === undefined) continue
      const fromThere = at === "" ? files.prefix : files.prefix.slice(at.length + 1)
      outer.push({ at, rules: { base: "", matcher: ruleMatcherOf(one.matcher), prefix: fromThere } })
    }
    const ignoredAt = ignoredOnTheWay(files.prefix, outer)
    if (ignoredAt === undefined)
      return lazyRepository(
        trackedOf,
        { outerRules: outer.map((o) => o.rules), refused },
        identity,
        undefined,
      )
    // The repository ignores the root (a scratch workspace in its `tmp/`, say): git would list
    // nothing in it, and a capture must not go quiet that way. Its rules are not applied; what it
    // tracks there (added by force) still is.
    return lazyRepository(trackedOf, { outerRules: [], refused }, identity, ignoredAt)
  })

/**
 * The first directory from the top down to the root (the root included) that the outer rules
 * exclude, as git decides a directory: the deepest rule set with an opinion wins, and nothing
 * below an excluded directory comes back. Undefined when none is.
 */
const ignoredOnTheWay = (
  prefix: string,
  outer: ReadonlyArray<{ readonly at: string; readonly rules: RuleSet }>,
): string | undefined => {
  if (prefix === "") return undefined
  const segments = prefix.split("/")
  for (let n = 1; n <= segments.length; n++) {
    const dir = segments.slice(0, n).join("/")
    for (let i = outer.length - 1; i >= 0; i--) {
      const { at, rules } = outer[i]!
      if (at !== "" && !dir.startsWith(`${at}/`)) continue
      const verdict = rules.matcher.verdict(`${at === "" ? dir : dir.slice(at.length + 1)}/`)
      if (verdict.ignored) return dir
      if (verdict.unignored) break
    }
  }
  return undefined
}

/**
 * The repository around the workspace now, or undefined without one (the workspace's own ignore
 * files alone decide then). Cheap when nothing changed: a few stats.
 */
export const currentRepository: Effect.Effect<Repository | undefined, never, Workspace> = Effect.gen(
  function* () {
    const workspace = yield* Workspace
    if (workspace.repository === undefined) return undefined
    const located = yield* workspace.repository
    if (Option.isNone(located)) {
      kept.delete(workspace)
      return undefined
    }
    const key = keyOf(located.value)
    const known = kept.get(workspace)
    if (known?.key === key) return known.repository
    const repository = yield* readRepository(located.value)
    kept.set(workspace, { key, repository })
    return repository
  },
)

/**
 * The fingerprints (stats) of everything the root's repository contributes to a scan's decisions,
 * found without reading any of it: equal keys, the same repository files unchanged ("" outside a
 * repository). What a capture's seal compares (`snapshot/scanSeal.ts`).
 */
export const repositoryKey: Effect.Effect<string, never, Workspace> = Effect.gen(function* () {
  const workspace = yield* Workspace
  if (workspace.repository === undefined) return ""
  const located = yield* workspace.repository
  return Option.isNone(located) ? "" : `repository\n${keyOf(located.value)}`
})

/** `repositoryKey` by content (see `repositoryScope`). */
export interface RepositoryScope {
  /** Where the root sits in the repository, the set of paths git tracks, the outer rules. */
  readonly all: string
  /** The same without the tracked set: what decides scope besides what git tracks. */
  readonly rules: string
  /** The tracked set itself, undefined outside a repository or without a usable index. */
  readonly tracked: TrackedFiles | undefined
}

/**
 * `repositoryKey` by content: where the root sits in the repository, the set of paths git tracks
 * and each outer ignore file's rules (`Repository.identity`), read again only where a stat moved.
 * Equal scopes, the same decisions from the same listings; what a seal falls back on when the key
 * moved, since git rewrites its index without a change to what it tracks (`snapshot/scanSeal.ts`).
 */
export const repositoryScope: Effect.Effect<RepositoryScope, never, Workspace> = Effect.gen(function* () {
  const none = { all: "", rules: "", tracked: undefined }
  const workspace = yield* Workspace
  if (workspace.repository === undefined) return none
  const located = yield* workspace.repository
  if (Option.isNone(located)) return none
  const repository = yield* currentRepository
  const at = `scope\n${located.value.prefix}\n`
  if (repository === undefined) return { all: at, rules: at, tracked: undefined }
  const trackedLine = repository.tracked === undefined ? undefined : trackedIdentityLine(repository.tracked)
  return {
    all: `${at}${repositoryIdentity(repository)}`,
    rules: `${at}${repository.identity.filter((line) => line !== trackedLine).join("\n")}`,
    tracked: repository.tracked,
  }
})

/** What a live engine compares to tell that the repository's part in its decisions changed. */
export const repositoryIdentity = (repository: Repository | undefined) =>
  repository === undefined ? "" : repository.identity.join("\n")
