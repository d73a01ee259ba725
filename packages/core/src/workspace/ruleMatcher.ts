/**
 * What one directory's compiled ignore rules say of a path itself (`RuleSet.matcher` in
 * `ignoreRules.ts`), with the `ignore` library's own rules and regular expressions, found faster.
 *
 * Of the path itself, as git decides: git checks each path against the patterns when it reaches
 * it, and never enters an excluded directory, so a directory a deeper ignore file re-includes
 * (`!/node_modules/` beside a fixture, under a root `node_modules`) has its files decided by the
 * patterns alone. The library's public `test` also tests every parent directory against the same
 * file's rules, so the root's `node_modules` excluded the files of a directory the deeper file had
 * re-included (vite's test fixtures, tracked by git, were never captured). The callers walk the
 * directories themselves, against the whole stack (`ignoreRules.ts`): this answers for the path.
 *
 * It is the one module that knows the library: how rules are made (`newRules`, `compileRules`),
 * read and tested, and where its answers are corrected to git's.
 *
 * Faster: a scan tests every path against every rule of every ignore file above it (babel's root
 * `.gitignore` has 57 rules: ~2.3 million regular-expression tests for a first capture of its 40k
 * paths, a tenth of the capture). Most rules name a literal a matching path must contain (`dist`,
 * `.log`, `babel-runtime`): a rule whose literal is not in the path cannot match it, so its
 * expression is not run.
 *
 * Invariants: the answer is the library's rule manager's, rule for rule: the same order (the last
 * matching rule decides), the same skips (a negative rule only matters once something is ignored,
 * and so on), the same case rule; but a negated character class is git's (`withGitClasses`). A
 * literal is taken only where it is sound: ASCII characters outside `* ? [ ] \ /` and spaces, from
 * a pattern with no escape and no character class, so every path the expression matches contains
 * it. `ruleMatcher.test.ts` compares this with the library on generated rules and paths. Where the
 * library's rule objects do not look as this module expects (another version), the library's
 * `test` answers (with its parent rule), and `usesLiterals` says so (a test pins it for the
 * installed version, so an upgrade cannot change answers unnoticed). The rules are read when the
 * matcher is made: `source` must not be added to afterwards (every caller builds it whole first).
 */
import ignore, { type Ignore } from "ignore"

/**
 * A rule container, the one way Rewind makes one. Case-sensitive, as git matches on a
 * case-sensitive filesystem (its default `core.ignorecase=false`): the library's default is
 * case-insensitive, which made `build/` leave out a `Build/` of sources and `tags` a `Tags/`
 * directory that git tracks, unprotected and unreported. On a case-insensitive filesystem (where
 * git sets `core.ignorecase=true`) this errs toward capturing: a path git ignores only through a
 * case difference is captured. `core.ignorecase` itself is not read.
 */
export const newRules = (): Ignore => ignore({ ignorecase: false })

/** Stands in every ignore file's identity line, so decisions made under another matching are not reused. */
export const RULE_MATCHING = "case-sensitive, each path itself, named skips by the rules"

/**
 * Where a pattern means a literal `*` or `?` (escaped, `b\*`, or inside a class, `b[*]`), the
 * library reads a wildcard (`b\*` matched `bx`) or builds a broken expression (`a\?c`, `a[?]c`
 * matched nothing), while git matches the character itself. Such a character is handed to the
 * library as a private-use stand-in it takes literally, and `withGitClasses` puts the escaped
 * character back into the compiled expression.
 */
const LITERAL_STAR = "\uE000"
const LITERAL_QUESTION = "\uE001"

const withLiteralWildcards = (line: string): string => {
  if (!line.includes("\\") && !line.includes("[")) return line
  let out = ""
  let inClass = false
  let classStart = 0
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (c === "\\" && i + 1 < line.length) {
      const next = line[i + 1]!
      out += next === "*" ? LITERAL_STAR : next === "?" ? LITERAL_QUESTION : c + next
      i++
    } else if (inClass) {
      // `]` right after the opening (or after its `!`/`^`) is a member, not the end.
      if (c === "]" && i > classStart) inClass = false
      out += c === "*" ? LITERAL_STAR : c === "?" ? LITERAL_QUESTION : c
    } else {
      if (c === "[") {
        inClass = true
        classStart = line[i + 1] === "!" || line[i + 1] === "^" ? i + 2 : i + 1
      }
      out += c
    }
  }
  return out
}

/** An ignore file's text as rules (the library may throw on a pattern it cannot compile). */
export const compileRules = (text: string): Ignore =>
  newRules().add(text.split("\n").map(withLiteralWildcards).join("\n"))

/** What a rule set says of a path: the library's `TestResult` fields Rewind reads. */
export interface RuleVerdict {
  readonly ignored: boolean
  readonly unignored: boolean
}

export interface RuleMatcher {
  /**
   * What these rules say of `path` itself (relative to their directory, `/`-terminated for a
   * directory); its directories are the caller's to decide against the whole stack.
   */
  readonly verdict: (path: string) => RuleVerdict
  /** The compiled rules, to combine with others or copy (`newRules().add(source)`). */
  readonly source: Ignore
  /** Whether literals are used (false: every test is the library's own). */
  readonly usesLiterals: boolean
  /** Whether a pattern of these rules names `name` (a skip-list name the rules then decide). */
  readonly mentions: (name: string) => boolean
  /** A matcher over the same compiled rules with nothing remembered from this one's calls. */
  readonly fresh: () => RuleMatcher
}

interface CompiledRule {
  readonly body: string
  readonly negative: boolean
  readonly regex: RegExp
  /** A text every matching path contains, or undefined. */
  readonly literal: string | undefined
}

interface LibraryRule {
  readonly negative: boolean
  readonly body: string
  readonly regex: RegExp
}

const MIN_LITERAL = 2

/** None for a rule compiled case-insensitively (`newRules` never makes one: only a test does). */
const literalOf = (body: string, regex: RegExp): string | undefined => {
  if (regex.flags.includes("i") || /[\\[\]]/.test(body)) return undefined
  let best = ""
  for (const run of body.split(/[*?/\s]+/)) {
    if (run.length > best.length && /^[\x21-\x7e]+$/.test(run)) best = run
  }
  return best.length < MIN_LITERAL ? undefined : best
}

/** The library's rule objects, when they have the shape this module reads. */
const libraryRules = (source: Ignore): ReadonlyArray<LibraryRule> | undefined => {
  const rules = (source as unknown as { _rules?: { _rules?: unknown } })._rules?._rules
  if (!Array.isArray(rules)) return undefined
  for (const rule of rules as Array<Partial<LibraryRule> | null>) {
    if (rule === null || typeof rule !== "object") return undefined
    if (typeof rule.negative !== "boolean" || typeof rule.body !== "string") return undefined
    if (!(rule.regex instanceof RegExp) || rule.regex.global || rule.regex.sticky) return undefined
  }
  return rules as ReadonlyArray<LibraryRule>
}

/**
 * The library's expression with git's negated character class: git reads `[!a]` and `[^a]` as
 * "any character but `a`" (wildmatch), the library as a class of `!` and `a` (`[!a]`) or of `^`
 * and `a` (`[\^a]`), so `[!a]b` ignored `ab` and kept `bb`. A class opening is a `[` not escaped
 * (an escaped one is `\[` in the source); only the first character after it is rewritten.
 */
const withGitClasses = (regex: RegExp): RegExp => {
  const source = regex.source
    .replace(/(^|[^\\])\[(?:!|\\\^)/g, "$1[^")
    // The literal `*` and `?` handed to the library as stand-ins (`compileRules`).
    .replaceAll(LITERAL_STAR, "\\*")
    .replaceAll(LITERAL_QUESTION, "\\?")
  return source === regex.source ? regex : new RegExp(source, regex.flags)
}

/** `source`'s rules with their literals (the expressions are the library's, compiled once per rule). */
const compiledRules = (source: Ignore): ReadonlyArray<CompiledRule> | undefined =>
  libraryRules(source)?.map((r) => ({
    body: r.body,
    negative: r.negative,
    regex: /\[[!^]|[\uE000\uE001]/.test(r.body) ? withGitClasses(r.regex) : r.regex,
    literal: literalOf(r.body, r.regex),
  }))

/** A matcher over `source`. */
export const ruleMatcherOf = (source: Ignore): RuleMatcher => {
  const rules = compiledRules(source)
  if (rules === undefined) {
    const library = (from: Ignore): RuleMatcher => ({
      verdict: (path) => from.test(path),
      // The patterns cannot be read: as if none named it (the built-in skip list applies).
      mentions: () => false,
      source: from,
      usesLiterals: false,
      // The library remembers every path it tested: a copy per operation keeps them apart.
      fresh: () => library(newRules().add(from)),
    })
    return library(source)
  }
  // RuleManager#test with checkUnignored (what `test` asks), rules whose literal is absent skipped.
  const verdict = (path: string): RuleVerdict => {
    let ignored = false
    let unignored = false
    for (const rule of rules) {
      if (unignored === rule.negative && ignored !== unignored) continue
      if (rule.literal !== undefined && !path.includes(rule.literal)) continue
      if (!rule.regex.test(path)) continue
      ignored = !rule.negative
      unignored = rule.negative
    }
    return { ignored, unignored }
  }
  // Nothing is remembered between calls: the one matcher serves every operation.
  const bodies = rules.map((r) => r.body)
  const mentions = (name: string) => bodies.some((body) => body.includes(name))
  const matcher: RuleMatcher = { verdict, mentions, source, usesLiterals: true, fresh: () => matcher }
  return matcher
}
