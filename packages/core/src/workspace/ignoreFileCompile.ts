/**
 * Compiling one ignore file within its budget (`IGNORE_FILE_LIMITS`), and a memo of what was
 * compiled, by the SHA-256 of the file's bytes. Ignore files are hostile input (see
 * `ignoreRules.ts`): a file over the budget, holding NUL bytes or whose patterns do not compile is
 * refused with the reason.
 *
 * Why the memo: a per-path check (a checkpoint's protection check, a declared path) reads the
 * ignore files of every directory above the path, and compiling babel's 70-line root
 * `.gitignore` cost more than everything else the check does. The answer is a function of the
 * bytes alone, so equal bytes reuse it. Invariants: a hit hands out a fresh matcher over the
 * shared compiled rules (`newRules().add(compiled)`: the library's rule objects are immutable once
 * built, while its per-path result caches are per matcher, so no caller's tests grow another's
 * memory); a refusal for taking too long by the Clock is never remembered (the machine may just
 * have been busy); at most `COMPILED_KEPT` files are kept, the least recently used dropped first.
 */
import type { ContentHash } from "@rewind/contracts"
import { Clock, Effect, Either } from "effect"
import type { Ignore } from "ignore"
import { boundedMap } from "../internal/boundedMap.js"
import { compileRules, newRules } from "./ruleMatcher.js"

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

/** An ignore file whose rules are not applied, and why. */
export interface RefusedIgnoreFile {
  readonly path: string
  readonly detail: string
}

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

/** The compilation of bytes: rules or a refusal's detail, and whether it may be remembered. */
const compileWithin = (
  bytes: Uint8Array,
): Effect.Effect<{
  readonly result: Either.Either<Ignore | undefined, string>
  readonly remember: boolean
}> =>
  Effect.gen(function* () {
    const refused = (detail: string, remember = true) => ({ result: Either.left(detail), remember })
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
    if (patterns === 0) return { result: Either.right(undefined), remember: true }
    const started = yield* Clock.currentTimeMillis
    const compiled = Either.try({
      try: () => {
        const matcher = compileRules(text)
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
        false,
      )
    return { result: Either.right<Ignore | undefined>(compiled.right), remember: true }
  })

/**
 * Compiles one ignore file's content, or says why it is refused. `undefined` rules: the file has no
 * pattern. Patterns are compiled and probed here, so a pattern that cannot become a regular
 * expression is refused now rather than failing a match later. Never memoised (see
 * `compileIgnoreFileByHash` for the memo).
 */
export const compileIgnoreFile = (
  path: string,
  bytes: Uint8Array,
): Effect.Effect<Either.Either<Ignore | undefined, RefusedIgnoreFile>> =>
  Effect.map(compileWithin(bytes), ({ result }) =>
    Either.mapLeft(result, (detail): RefusedIgnoreFile => ({ path, detail })),
  )

/** Compiled ignore files kept (babel has six; a monorepo may have hundreds). */
const COMPILED_KEPT = 512

/** By content hash: the compiled rules (`undefined`: no pattern) or the deterministic refusal. */
const compiledByHash = boundedMap<ContentHash, Either.Either<Ignore | undefined, string>>(COMPILED_KEPT)

const fresh = (compiled: Ignore | undefined) =>
  compiled === undefined ? undefined : newRules().add(compiled)

/**
 * `compileIgnoreFile` of bytes whose SHA-256 is `hash`, answered from the memo when the same bytes
 * were compiled before (see the header).
 */
export const compileIgnoreFileByHash = (
  path: string,
  bytes: Uint8Array,
  hash: ContentHash,
): Effect.Effect<Either.Either<Ignore | undefined, RefusedIgnoreFile>> =>
  Effect.suspend(() => {
    const known = compiledByHash.get(hash)
    if (known !== undefined) {
      return Effect.succeed(
        Either.isLeft(known) ? Either.left({ path, detail: known.left }) : Either.right(fresh(known.right)),
      )
    }
    return Effect.map(compileWithin(bytes), (outcome) => {
      if (outcome.remember) {
        compiledByHash.set(hash, outcome.result)
      }
      return Either.isLeft(outcome.result)
        ? Either.left({ path, detail: outcome.result.left })
        : Either.right(outcome.remember ? fresh(outcome.result.right) : outcome.result.right)
    })
  })
