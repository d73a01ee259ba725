/**
 * The one ignore-rule module: which paths `.gitignore` / `.rewindignore` files and the built-in
 * skip list exclude from Rewind's care. Captures, previews and every restore ask it (through the
 * protection policy, `protection.ts`), so "ignored" means the same thing everywhere: a path a scan
 * would not capture is one a restore will not write (DESIGN §5, rules apply both ways).
 *
 * Semantics follow git's: the rules of a deeper directory take precedence over those above it (so
 * `!keep.log` in `sub/.gitignore` re-includes what the root's `*.log` excluded), the last matching
 * pattern of one file wins, and nothing under an excluded directory can be re-included.
 *
 * Ignore files are hostile input. Each is compiled within a budget (`IGNORE_FILE_LIMITS`: size,
 * line length, pattern count, wildcards per pattern, compile time); a file over it, one that holds
 * NUL bytes, one whose patterns do not compile or that cannot be read, is *refused*: its rules are
 * not applied, the refusal is reported (`ignore_file_refused`), and everything else goes on. One
 * rule for all callers: a refused file contributes no rules, so what a capture takes in because of
 * it, a restore may put back.
 */
import type { WorkspacePath } from "@rewind/contracts"
import { Clock, Effect, Either, Option } from "effect"
import ignore, { type Ignore } from "ignore"
import { Workspace } from "../ports/Workspace.js"
import { hashContent } from "./contentHash.js"

/** Directory names never scanned: VCS data, dependencies, caches and Rewind's own store. */
export const BUILT_IN_SKIP: ReadonlySet<string> = new Set([
  ".git",
  ".hg",
  ".svn",
  ".jj",
  ".rewind",
  "node_modules",
  ".venv",
  "__pycache__",
  ".cache",
  ".turbo",
  ".next",
])

/** Ignore files read in every directory, in this order (a later file's rules win on a tie). */
export const IGNORE_FILES: ReadonlyArray<string> = [".gitignore", ".rewindignore"]

/**
 * The budget of one ignore file. Real ones are a few KiB (babel's largest is under 2 KiB); these
 * limits are two to three orders of magnitude above that and keep one file's cost to milliseconds.
 */
export const IGNORE_FILE_LIMITS = {
  maxBytes: 1024 * 1024,
  maxLineLength: 4096,
  maxPatterns: 20_000,
  /** `*`, `?` and `[` per pattern. */
  maxWildcards: 64,
  /**
   * Runs of `*` within one path segment of a pattern. A glob becomes a regular expression, and
   * each `*` a `[^/]*` that backtracks: with three in one segment a single 255-byte name took
   * 1.9 s to test here, with two 57 ms. Real ignore files use one (babel's six ignore files: never more).
   */
  maxStarsPerSegment: 2,
  /** Runs of `*` (`**` included) in a whole pattern. */
  maxStars: 6,
  /** Compiling and probing the patterns, by the Clock. */
  maxCompileMs: 2_000,
} as const

/** The rules of one directory (`base`, "" for the root). */
export interface RuleSet {
  readonly base: string
  readonly matcher: Ignore
}

/** The rule sets that apply in a directory, shallowest first. */
export type RuleStack = ReadonlyArray<RuleSet>

/** An ignore file whose rules are not applied, and why. */
export interface RefusedIgnoreFile {
  readonly path: string
  readonly detail: string
}

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

const join = (dir: string, name: string) => (dir === "" ? name : `${dir}/${name}`)

const relativeTo = (base: string, path: string) => (base === "" ? path : path.slice(base.length + 1))

/** Why a pattern's `*` runs could backtrack without bound, or undefined. */
const starProblem = (line: string): string | undefined => {
  let total = 0
  for (const segment of line.split("/")) {
    const runs = segment.match(/\*+/g)?.length ?? 0
    if (runs > IGNORE_FILE_LIMITS.maxStarsPerSegment)
      return `a segment with ${runs} runs of '*' (at most ${IGNORE_FILE_LIMITS.maxStarsPerSegment})`
    total += runs
  }
  return total > IGNORE_FILE_LIMITS.maxStars
    ? `${total} runs of '*' (at most ${IGNORE_FILE_LIMITS.maxStars})`
    : undefined
}

const countWildcards = (line: string) => {
  let n = 0
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i)
    if (c === 42 || c === 63 || c === 91) n++
  }
  return n
}

/** Why this text cannot be taken as an ignore file within the budget, or undefined. */
const budgetProblem = (bytes: Uint8Array): string | undefined => {
  if (bytes.length > IGNORE_FILE_LIMITS.maxBytes)
    return `${bytes.length} bytes, over the ${IGNORE_FILE_LIMITS.maxBytes}-byte limit for an ignore file`
  if (bytes.includes(0)) return "it holds NUL bytes (not a text file)"
  return undefined
}

/**
 * Compiles one ignore file's content, or says why it is refused. `undefined` rules: the file has no
 * pattern. Patterns are compiled and probed here, so a pattern that cannot become a regular
 * expression is refused now rather than failing a match later.
 */
export const compileIgnoreFile = (
  path: string,
  bytes: Uint8Array,
): Effect.Effect<Either.Either<Ignore | undefined, RefusedIgnoreFile>> =>
  Effect.gen(function* () {
    const refused = (detail: string) => Either.left<RefusedIgnoreFile>({ path, detail })
    const problem = budgetProblem(bytes)
    if (problem !== undefined) return refused(problem)
    const text = new TextDecoder().decode(bytes)
    const lines = text.split(/\r?\n/)
    let patterns = 0
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!
      if (line.length > IGNORE_FILE_LIMITS.maxLineLength)
        return refused(
          `line ${i + 1} is ${line.length} characters, over the ${IGNORE_FILE_LIMITS.maxLineLength} limit`,
        )
      if (line.trim() === "" || line.startsWith("#")) continue
      patterns++
      if (patterns > IGNORE_FILE_LIMITS.maxPatterns)
        return refused(`more than ${IGNORE_FILE_LIMITS.maxPatterns} patterns`)
      if (countWildcards(line) > IGNORE_FILE_LIMITS.maxWildcards)
        return refused(`line ${i + 1} has more than ${IGNORE_FILE_LIMITS.maxWildcards} wildcards`)
      const stars = starProblem(line)
      if (stars !== undefined) return refused(`line ${i + 1} has ${stars}, which could take minutes to match`)
    }
    if (patterns === 0) return Either.right(undefined)
    const started = yield* Clock.currentTimeMillis
    const compiled = Either.try({
      try: () => {
        const matcher = ignore().add(text)
        // Regular expressions are built on first use: build them all now, inside the try.
        matcher.test("rewind-probe")
        matcher.test("rewind-probe/")
        return matcher
      },
      catch: (e) => (e instanceof Error ? e.message : String(e)).slice(0, 200),
    })
    const elapsed = (yield* Clock.currentTimeMillis) - started
    if (Either.isLeft(compiled)) return refused(`its patterns do not compile: ${compiled.left}`)
    if (elapsed > IGNORE_FILE_LIMITS.maxCompileMs)
      return refused(
        `compiling its patterns took ${elapsed} ms, over the ${IGNORE_FILE_LIMITS.maxCompileMs} ms budget`,
      )
    return Either.right(compiled.right)
  })

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
const decidingSet = (
  stack: RuleStack,
  path: string,
  isDirectory: boolean,
): { readonly base: string; readonly ignored: boolean } | undefined => {
  for (let i = stack.length - 1; i >= 0; i--) {
    const r = stack[i]!
    const rel = relativeTo(r.base, path)
    const verdict = r.matcher.test(isDirectory ? `${rel}/` : rel)
    if (verdict.ignored || verdict.unignored) return { base: r.base, ignored: verdict.ignored }
  }
  return undefined
}

/** Whether the stack excludes `path` itself (see `verdictOf`). */
export const isExcluded = (stack: RuleStack, path: string, isDirectory: boolean): boolean =>
  verdictOf(stack, path, isDirectory) === "ignored"

/**
 * Whether the built-in skip list leaves out this directory: a name on it, unless the repository's
 * own rules re-include it explicitly with a `!` rule (babel does so for the `node_modules`
 * directories of its test fixtures: files the repository tracks, not dependencies).
 */
export const onSkipList = (stack: RuleStack, path: string): boolean =>
  BUILT_IN_SKIP.has(path.slice(path.lastIndexOf("/") + 1)) && verdictOf(stack, path, true) !== "included"

/** The stack for a directory's children: its parent's plus its own rules. */
export const pushRules = (stack: RuleStack, own: RuleSet | undefined): RuleStack =>
  own === undefined ? stack : [...stack, own]

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
      const read = yield* readFile(path as WorkspacePath)
      if (Either.isLeft(read)) {
        refused.push({ path, detail: read.left })
        identity.push(`${path}\0unread`)
        continue
      }
      if (Option.isNone(read.right)) {
        identity.push(`${path}\0absent`)
        continue
      }
      const compiled = yield* compileIgnoreFile(path, read.right.value)
      const hash = hashContent(read.right.value)
      if (Either.isLeft(compiled)) {
        refused.push(compiled.left)
        identity.push(`${path}\0${hash}\0refused`)
        continue
      }
      identity.push(`${path}\0${hash}\0applied`)
      if (compiled.right !== undefined) matchers.push(compiled.right)
    }
    // The directory's files taken together, in order (a later file's rule wins a tie), from the
    // rules already compiled and vetted: nothing is parsed twice.
    const matcher = matchers.length <= 1 ? matchers[0] : matchers.reduce((all, m) => all.add(m), ignore())
    const rules: RuleSet | undefined = matcher === undefined ? undefined : { base: dir, matcher }
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
        const listed = sizes.get(path.slice(path.lastIndexOf("/") + 1))
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

/**
 * A per-call cache of directory rules for checking arbitrary paths (a restore's plan, a declared
 * path): each directory's ignore files are listed and read once.
 */
export const makeRulesCache = () =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const cache = new Map<string, DirectoryRules>()
    const rulesOf = (dir: string) =>
      Effect.gen(function* () {
        const known = cache.get(dir)
        if (known !== undefined) return known
        const present: Array<{ name: string; size: number; regular: boolean }> = []
        for (const name of IGNORE_FILES) {
          const stat = yield* Effect.either(workspace.stat(join(dir, name) as WorkspacePath))
          if (Either.isLeft(stat)) continue
          if (Option.isSome(stat.right))
            present.push({ name, size: stat.right.value.size, regular: stat.right.value.kind === "file" })
        }
        const rules = yield* readDirectoryRules(dir, present).pipe(
          Effect.provideService(Workspace, workspace),
        )
        cache.set(dir, rules)
        return rules
      })
    return rulesOf
  })

/** Why a path is excluded: by the skip list, or by the rules of one directory. */
export type Exclusion =
  | { readonly by: "skip_list"; readonly directory: string }
  | { readonly by: "rules"; readonly rulesOf: string }
  /** Inside a nested repository (a directory below the root holding `.git`): someone else's tree. */
  | { readonly by: "nested_repository"; readonly directory: string }

const parentOf = (path: string) => {
  const slash = path.lastIndexOf("/")
  return slash < 0 ? "" : path.slice(0, slash)
}

/** A directory as the rules see it: excluded (and why), or the rule stack for its children. */
interface DirectoryState {
  readonly excluded: Exclusion | undefined
  readonly stack: RuleStack
}

/**
 * Whether the ignore rules exclude `path` (a file, or a directory when `isDirectory`), or a nested
 * repository holds it (as the scan, which never enters one, decides): its directories are decided from the root down, each against the rules above it, and once per
 * checker (a plan of thousands of paths decides each directory once); then the path itself.
 */
export const makeIgnoreCheck = () =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const rulesOf = yield* makeRulesCache()
    // The scan never enters a nested repository; a restore must not write into one either.
    const holdsRepository = (dir: string) =>
      Effect.map(Effect.either(workspace.stat(`${dir}/.git` as WorkspacePath)), (s) =>
        Either.isRight(s) ? Option.isSome(s.right) : false,
      )
    const directories = new Map<string, DirectoryState>()
    const decideDirectory = (dir: string) =>
      Effect.gen(function* () {
        if (dir === "") return { excluded: undefined, stack: pushRules([], (yield* rulesOf("")).rules) }
        const parent = yield* stateOf(parentOf(dir))
        const excludedAs = (excluded: Exclusion): DirectoryState => ({ excluded, stack: parent.stack })
        if (parent.excluded !== undefined) return parent
        if (onSkipList(parent.stack, dir)) return excludedAs({ by: "skip_list", directory: dir })
        if (yield* holdsRepository(dir)) return excludedAs({ by: "nested_repository", directory: dir })
        const decided = decidingSet(parent.stack, dir, true)
        if (decided?.ignored === true) return excludedAs({ by: "rules", rulesOf: decided.base })
        return { excluded: undefined, stack: pushRules(parent.stack, (yield* rulesOf(dir)).rules) }
      })
    const stateOf = (dir: string): Effect.Effect<DirectoryState> =>
      Effect.suspend(() => {
        const known = directories.get(dir)
        if (known !== undefined) return Effect.succeed(known)
        return Effect.gen(function* () {
          const state = yield* decideDirectory(dir)
          directories.set(dir, state)
          return state
        })
      })
    return (path: WorkspacePath, isDirectory = false) =>
      Effect.gen(function* () {
        const parent = yield* stateOf(parentOf(path))
        if (parent.excluded !== undefined) return Option.some(parent.excluded)
        const decided = decidingSet(parent.stack, path, isDirectory)
        return decided?.ignored === true
          ? Option.some<Exclusion>({ by: "rules", rulesOf: decided.base })
          : Option.none<Exclusion>()
      })
  })
