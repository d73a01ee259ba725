/**
 * The one ignore-rule module: which paths `.gitignore` / `.rewindignore` files and the built-in
 * skip list exclude from Rewind's care. Captures, previews and every restore ask it (through the
 * protection policy, `protection.ts`), so "ignored" means the same thing everywhere: a path a scan
 * would not capture is one a restore will not write (DESIGN §5, rules apply both ways).
 *
 * Semantics follow git's: patterns match case-sensitively (`newRules`), the rules of a deeper
 * directory take precedence over those above it (so
 * `!keep.log` in `sub/.gitignore` re-includes what the root's `*.log` excluded), the last matching
 * pattern of one file wins, nothing under an excluded directory can be re-included, and a file git
 * tracks is not excluded at all (`keptAsTracked`).
 *
 * Ignore files are hostile input. Each is compiled within a budget (`ignoreFileCompile.ts`: size,
 * line length, pattern count, wildcards per pattern, compile time); a file over it, one that holds
 * NUL bytes, one whose patterns do not compile or that cannot be read, is *refused*: its rules are
 * not applied, the refusal is reported (`ignore_file_refused`), and everything else goes on. One
 * rule for all callers: a refused file contributes no rules, so what a capture takes in because of
 * it, a restore may put back. A scan applies these rules as it walks; other paths are checked with
 * `makeIgnoreCheck` (`ignoreCheck.ts`).
 */
import { nameOf, type WorkspacePath } from "@rewind/contracts"
import { Effect, Either, Option } from "effect"
import type { Ignore } from "ignore"
import { Workspace } from "../ports/Workspace.js"
import { hashContent } from "./contentHash.js"
import type { TrackedFiles } from "./gitIndex.js"
import { compileIgnoreFileByHash, IGNORE_FILE_LIMITS, type RefusedIgnoreFile } from "./ignoreFileCompile.js"
import { newRules, RULE_MATCHING, type RuleMatcher, ruleMatcherOf } from "./ruleMatcher.js"

export { IGNORE_FILE_LIMITS, type RefusedIgnoreFile } from "./ignoreFileCompile.js"

/** Directory names always left out: VCS data and Rewind's own store. */
const NEVER_SCANNED = [".git", ".hg", ".svn", ".jj", ".rewind"] as const

/**
 * The skip-list names that stand in for rules a repository did not write (dependencies, caches):
 * where a pattern of the rules in force names one, those rules decide it, as git's would. jest and
 * webpack ignore `/node_modules` at the root only and track the `node_modules` of their fixtures
 * and examples; babel ignores every `node_modules` and re-includes its fixtures' with a `!` rule.
 */
const RULES_DECIDE: ReadonlySet<string> = new Set([
  "node_modules",
  ".venv",
  "__pycache__",
  ".cache",
  ".turbo",
  ".next",
])

/** Directory names never scanned: VCS data, dependencies, caches and Rewind's own store. */
export const BUILT_IN_SKIP: ReadonlySet<string> = new Set([...NEVER_SCANNED, ...RULES_DECIDE])

/** Ignore files read in every directory, in this order (a later file's rules win on a tie). */
export const IGNORE_FILES: ReadonlyArray<string> = [".gitignore", ".rewindignore"]

/** The rules of one directory (`base`, "" for the root). */
export interface RuleSet {
  readonly base: string
  readonly matcher: RuleMatcher
  /**
   * For the rules of a directory above the root (`repository.ts`): the root's path from there,
   * which every workspace path is seen under.
   */
  readonly prefix?: string
}

/** The rule sets that apply in a directory, shallowest first. */
export type RuleStack = ReadonlyArray<RuleSet>

/** What one directory's ignore files give: its rules (if any) and the files refused. */
export interface DirectoryRules {
  readonly rules: RuleSet | undefined
  readonly refused: ReadonlyArray<RefusedIgnoreFile>
  /**
   * One line per ignore file looked at: its path, the SHA-256 of its bytes (or why there were none)
   * and whether its rules were applied. Equal lines mean equal rules, so a scan can tell that the
   * rules that decided a previous capture are the ones in force now (`workspaceScan.ts`).
   */
  readonly identity: ReadonlyArray<string>
}

export const join = (dir: string, name: string) => (dir === "" ? name : `${dir}/${name}`)

const relativeTo = (base: string, path: string) => (base === "" ? path : path.slice(base.length + 1))

/**
 * What the stack says of `path` itself (its directories are the caller's to check first: nothing
 * below an excluded directory can be re-included): `ignored`, `included` (a `!` rule re-includes
 * it explicitly) or `none`. Deepest rules first; the first set with an opinion decides.
 */
export const verdictOf = (
  stack: RuleStack,
  path: string,
  isDirectory: boolean,
): "ignored" | "included" | "none" => {
  const i = decidingSet(stack, path, isDirectory)
  return i === undefined ? "none" : i.ignored ? "ignored" : "included"
}

/** The deepest rule set with an opinion on `path`, and that opinion; undefined when none has one. */
export const decidingSet = (
  stack: RuleStack,
  path: string,
  isDirectory: boolean,
): { readonly base: string; readonly ignored: boolean } | undefined => {
  for (let i = stack.length - 1; i >= 0; i--) {
    const r = stack[i]!
    const rel =
      r.prefix === undefined ? relativeTo(r.base, path) : r.prefix === "" ? path : `${r.prefix}/${path}`
    const verdict = r.matcher.verdict(isDirectory ? `${rel}/` : rel)
    if (verdict.ignored || verdict.unignored) return { base: r.base, ignored: verdict.ignored }
  }
  return undefined
}

/**
 * Git's rule for tracked files: ignore rules and the skip list decide only what git does not track
 * (`gitIndex.ts`), so a tracked file is never excluded by them, even below an excluded directory.
 * Every caller that excludes by the rules asks this first; protection by name and nested
 * repositories are not rules and still keep a tracked path out.
 */
export const keptAsTracked = (source: TrackedSource | undefined, path: string, isDirectory: boolean) =>
  !isDirectory && source?.tracked?.has(path) === true

/**
 * Where the tracked set comes from (a `Repository`): asked for it only when a rule excludes a file,
 * so a repository parses its index only when some decision turns on it (`repository.ts`).
 */
export interface TrackedSource {
  readonly tracked: TrackedFiles | undefined
}

/**
 * Whether the stack excludes `path` itself (see `verdictOf`), git's way: never a file git tracks
 * (`keptAsTracked`). Every caller says where the tracked set comes from, so none can forget the
 * rule; the set is asked for only when the rules exclude a file.
 */
export const isExcluded = (
  stack: RuleStack,
  path: string,
  isDirectory: boolean,
  source: TrackedSource | undefined,
): boolean => verdictOf(stack, path, isDirectory) === "ignored" && !keptAsTracked(source, path, isDirectory)

/**
 * Whether the built-in skip list leaves out this directory: a name on it, unless the repository's
 * own rules name it (then they decide, and every caller asks them before this), or re-include
 * this directory explicitly with a `!` rule.
 */
export const onSkipList = (stack: RuleStack, path: string): boolean => {
  const name = nameOf(path)
  if (!BUILT_IN_SKIP.has(name)) return false
  if (RULES_DECIDE.has(name) && stack.some((r) => r.matcher.mentions(name))) return false
  return verdictOf(stack, path, true) !== "included"
}

/** The stack for a directory's children: its parent's plus its own rules. */
export const pushRules = (stack: RuleStack, own: RuleSet | undefined): RuleStack =>
  own === undefined ? stack : [...stack, own]

/**
 * One ignore file as read (its bytes, none, or why it could not be read) compiled within the
 * budget: its rules when applied, the refusal when not, and its identity line (path, SHA-256 of
 * its bytes or why there were none, applied or refused: see `DirectoryRules.identity`). Every
 * ignore file goes through here, the workspace's and the ones above its root (`repository.ts`).
 */
export const compileIgnoreFileRead = (
  path: string,
  read: Either.Either<Option.Option<Uint8Array>, string>,
): Effect.Effect<{
  readonly matcher?: Ignore
  readonly refused?: RefusedIgnoreFile
  readonly identity: string
}> =>
  Effect.gen(function* () {
    if (Either.isLeft(read)) return { refused: { path, detail: read.left }, identity: `${path}\0unread` }
    if (Option.isNone(read.right)) return { identity: `${path}\0absent` }
    const hash = hashContent(read.right.value)
    const compiled = yield* compileIgnoreFileByHash(path, read.right.value, hash)
    if (Either.isLeft(compiled)) return { refused: compiled.left, identity: `${path}\0${hash}\0refused` }
    const identity = `${path}\0${hash}\0applied\0${RULE_MATCHING}`
    return compiled.right === undefined ? { identity } : { matcher: compiled.right, identity }
  })

/**
 * Builds a directory's rules from its ignore files, given how to stat and read them. The stat comes
 * first so an oversized file is refused without being read.
 */
const loadDirectoryRules = (
  dir: string,
  present: ReadonlyArray<string>,
  readFile: (path: WorkspacePath) => Effect.Effect<Either.Either<Option.Option<Uint8Array>, string>>,
) =>
  Effect.gen(function* () {
    const refused: Array<RefusedIgnoreFile> = []
    const matchers: Array<Ignore> = []
    const identity: Array<string> = []
    for (const name of IGNORE_FILES) {
      if (!present.includes(name)) continue
      const path = join(dir, name)
      const one = yield* compileIgnoreFileRead(path, yield* readFile(path as WorkspacePath))
      identity.push(one.identity)
      if (one.refused !== undefined) refused.push(one.refused)
      if (one.matcher !== undefined) matchers.push(one.matcher)
    }
    // The directory's files taken together, in order (a later file's rule wins a tie), from the
    // rules already compiled and vetted: nothing is parsed twice.
    const matcher = matchers.length <= 1 ? matchers[0] : matchers.reduce((all, m) => all.add(m), newRules())
    const rules: RuleSet | undefined =
      matcher === undefined ? undefined : { base: dir, matcher: ruleMatcherOf(matcher) }
    return { rules, refused, identity } satisfies DirectoryRules
  })

/**
 * Reads a directory's ignore files through the Workspace (never through a symlink: a linked
 * ignore file is refused, as git refuses it). `present` names the ignore files a listing showed as
 * regular files, so a scan reads only what exists; a file over the size budget is refused on its
 * listed size, unread.
 */
export const readDirectoryRules = (
  dir: string,
  present: ReadonlyArray<{ readonly name: string; readonly size: number; readonly regular: boolean }>,
) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const sizes = new Map(present.map((p) => [p.name, p] as const))
    return yield* loadDirectoryRules(
      dir,
      present.map((p) => p.name),
      (path) => {
        const listed = sizes.get(nameOf(path))
        if (listed !== undefined && !listed.regular)
          return Effect.succeed(
            Either.left("it is not a regular file (a symlinked ignore file is not followed)"),
          )
        if (listed !== undefined && listed.size > IGNORE_FILE_LIMITS.maxBytes)
          return Effect.succeed(
            Either.left(
              `${listed.size} bytes, over the ${IGNORE_FILE_LIMITS.maxBytes}-byte limit for an ignore file`,
            ),
          )
        return workspace.read(path).pipe(
          Effect.map(Option.map((f) => f.content)),
          Effect.mapError((e) => `it cannot be read: ${e.message}`),
          Effect.either,
        )
      },
    )
  })
