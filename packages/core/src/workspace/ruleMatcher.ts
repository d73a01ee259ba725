/**
 * How one directory's compiled ignore rules test a path (`RuleSet.matcher` in `ignoreRules.ts`):
 * the `ignore` library's own rules and regular expressions, with the same answer as its `test`,
 * found faster. A scan tests every path against every rule of every ignore file above it (babel's
 * root `.gitignore` has 57 rules, so ~2.3 million regular-expression tests for a first capture of
 * its 40k paths, a tenth of the capture). Most rules name a literal a matching path must contain
 * (`dist`, `.log`, `babel-runtime`): a rule whose literal is not in the path cannot match it, so
 * its expression is not run.
 *
 * Invariants: the answer is the library's, rule for rule: the same order (the last matching rule
 * decides), the same skips (a negative rule only matters once something is ignored, and so on),
 * the same parent rule (nothing under an ignored directory is re-included), the same case rule (a
 * rule compiled case-insensitively compares case-insensitively). A literal is taken only where it
 * is sound: ASCII characters outside `* ? [ ] \ /` and spaces, from a pattern with no escape and no
 * character class, so every path the expression matches contains it. `ruleMatcher.test.ts`
 * compares this with the library on generated rules and paths. Where the library's rule objects
 * do not look as this module expects (another version), the library's own `test` answers, and
 * `usesLiterals` says so (a test pins it for the installed version, so an upgrade cannot slow
 * every scan unnoticed). The rules are read when the matcher is made: `source` must not be added
 * to afterwards (every caller builds it whole first).
 */
import type { Ignore } from "ignore"
import { newRules } from "./ignoreFileCompile.js"

/** What a rule set says of a path: the library's `TestResult` fields Rewind reads. */
export interface RuleVerdict {
  readonly ignored: boolean
  readonly unignored: boolean
}

export interface RuleMatcher {
  /** The library's `test(path)`: `path` relative to the rules' directory, `/`-terminated for one. */
  readonly test: (path: string) => RuleVerdict
  /** The compiled rules, to combine with others or copy (`newRules().add(source)`). */
  readonly source: Ignore
  /** Whether literals are used (false: every test is the library's own). */
  readonly usesLiterals: boolean
  /** A matcher over the same compiled rules with nothing remembered (no rule is compiled again). */
  readonly fresh: () => RuleMatcher
}

interface CompiledRule {
  readonly negative: boolean
  readonly regex: RegExp
  /** A text every matching path contains (lower case when `caseless`), or undefined. */
  readonly literal: string | undefined
  readonly caseless: boolean
}

interface LibraryRule {
  readonly negative: boolean
  readonly body: string
  readonly regex: RegExp
}

const MIN_LITERAL = 2

const literalOf = (body: string, caseless: boolean): string | undefined => {
  if (/[\\[\]]/.test(body)) return undefined
  let best = ""
  for (const run of body.split(/[*?/\s]+/)) {
    if (run.length > best.length && /^[\x21-\x7e]+$/.test(run)) best = run
  }
  if (best.length < MIN_LITERAL) return undefined
  return caseless ? best.toLowerCase() : best
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

/** `source`'s rules with their literals (the expressions are the library's, compiled once per rule). */
const compiledRules = (source: Ignore): ReadonlyArray<CompiledRule> | undefined =>
  libraryRules(source)?.map((r) => {
    const caseless = r.regex.flags.includes("i")
    return { negative: r.negative, regex: r.regex, literal: literalOf(r.body, caseless), caseless }
  })

/** Paths the library refuses or treats specially go to it unchanged. */
const plainRelative = (path: string) =>
  path !== "" && !path.startsWith("/") && !path.includes("//") && !/^\.{1,2}(\/|$)/.test(path)

/**
 * A matcher over `source`. Each matcher keeps the verdicts of the directories it tested (the
 * parents of the paths it is asked about), as the library's `test` keeps every path's: a fresh
 * matcher per operation keeps one caller's paths out of another's memory.
 */
export const ruleMatcherOf = (source: Ignore): RuleMatcher => {
  const rules = compiledRules(source)
  if (rules === undefined) {
    const library = (from: Ignore): RuleMatcher => ({
      test: (path) => from.test(path),
      source: from,
      usesLiterals: false,
      fresh: () => library(newRules().add(from)),
    })
    return library(source)
  }
  return withLiterals(source, rules)
}

const withLiterals = (source: Ignore, rules: ReadonlyArray<CompiledRule>): RuleMatcher => {
  const anyCaseless = rules.some((r) => r.caseless)

  // RuleManager#test with checkUnignored (what `test` asks), rules whose literal is absent skipped.
  const own = (path: string): RuleVerdict => {
    const lower = anyCaseless ? path.toLowerCase() : path
    let ignored = false
    let unignored = false
    for (const rule of rules) {
      if (unignored === rule.negative && ignored !== unignored) continue
      if (rule.literal !== undefined && !(rule.caseless ? lower : path).includes(rule.literal)) continue
      if (!rule.regex.test(path)) continue
      ignored = !rule.negative
      unignored = rule.negative
    }
    return { ignored, unignored }
  }

  const directories = new Map<string, RuleVerdict>()
  // Ignore#_t: a path under an ignored directory is that directory's verdict.
  const test = (path: string): RuleVerdict => {
    if (!plainRelative(path)) return source.test(path)
    const known = directories.get(path)
    if (known !== undefined) return known
    const end = path.endsWith("/") ? path.length - 1 : path.length
    const cut = path.lastIndexOf("/", end - 1)
    let verdict: RuleVerdict
    if (cut <= 0) verdict = own(path)
    else {
      const parent = test(path.slice(0, cut + 1))
      verdict = parent.ignored ? parent : own(path)
    }
    if (end !== path.length) directories.set(path, verdict)
    return verdict
  }
  return { test, source, usesLiterals: true, fresh: () => withLiterals(source, rules) }
}
