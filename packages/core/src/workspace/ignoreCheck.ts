/**
 * The ignore rules applied to arbitrary paths (a restore's plan, a declared path), as opposed to a
 * scan that meets directories in order: `makeIgnoreCheck` decides each directory once per checker,
 * from the root down, each against the rules above it, with the same verdicts a scan gives
 * (`ignoreRules.ts`): nothing under an excluded directory or inside a nested repository is
 * re-included, a refused ignore file contributes no rules, and a file git tracks is never excluded
 * by them (`keptAsTracked`). Stats are looked up ahead in bulk,
 * and the decisions themselves are synchronous (see `makeIgnoreCheck`).
 */
import { parentOf, type WorkspacePath } from "@rewind/contracts"
import { Effect, Either, Option } from "effect"
import { Workspace } from "../ports/Workspace.js"
import {
  type DirectoryRules,
  decidingSet,
  IGNORE_FILES,
  join,
  keptAsTracked,
  onSkipList,
  pushRules,
  type RuleStack,
  readDirectoryRules,
} from "./ignoreRules.js"
import { keptRulesOf, type StatAnswer } from "./ignoreRulesCache.js"
import { currentRepository } from "./repository.js"

const excludedByRules = (decided: ReturnType<typeof decidingSet>): Exclusion | undefined =>
  decided?.ignored === true ? { by: "rules", rulesOf: decided.base } : undefined

/** Why a path is excluded: by the skip list, or by the rules of one directory. */
export type Exclusion =
  | { readonly by: "skip_list"; readonly directory: string }
  | { readonly by: "rules"; readonly rulesOf: string }
  /** Inside a nested repository (a directory below the root holding `.git`): someone else's tree. */
  | { readonly by: "nested_repository"; readonly directory: string }

/** A directory as the rules see it: excluded (and why), or the rule stack for its children. */
interface DirectoryState {
  readonly excluded: Exclusion | undefined
  readonly stack: RuleStack
}

/** The directory whose ignore files or `.git` must be stat'ed or read before the decision goes on. */
interface Missing {
  readonly missing: string
}
const isMissing = <A extends object>(x: A | Missing): x is Missing => "missing" in x

/**
 * Stats a caller took already in bulk (a restore's plan lists the directories of its paths): the
 * answer for a path it can vouch for, or undefined, and the Clock just before it took them. An
 * answer must be what `statMany` would give (the `lstat`, or None when nothing is there), so the
 * decisions and the kept rules' racy check are the same either way.
 */
export interface KnownStats {
  readonly at: bigint
  readonly answer: (path: string) => StatAnswer | undefined
}

/** What a directory's decision looks at: its ignore files, then (below the root) its `.git`. */
const lookedAt = (dir: string) => {
  const paths = IGNORE_FILES.map((name) => join(dir, name))
  if (dir !== "") paths.push(`${dir}/.git`)
  return paths
}

/**
 * Whether the ignore rules exclude `path` (a file, or a directory when `isDirectory`), or a nested
 * repository holds it (as the scan, which never enters one, decides): its directories are decided
 * from the root down, each against the rules above it, and once per checker (a plan of thousands of
 * paths decides each directory once); then the path itself.
 *
 * Cost: the undecided directories' ignore files and `.git` are taken from `known` or stat'ed in one
 * `statMany`, then the decisions are plain synchronous code over that answer. A directory's rules come from the
 * Workspace's kept rules when its ignore files' stats are unchanged (`ignoreRulesCache.ts`: a
 * sound validator, never content that changed); only a miss reads them, one Effect per directory.
 */
export const makeIgnoreCheck = (known?: KnownStats) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const clock = yield* Effect.clock
    const kept = keptRulesOf(workspace)
    const repository = yield* currentRepository
    const outer = repository?.outerRules ?? []
    const stats = new Map<string, StatAnswer>()
    /** The Clock just before the `statMany` that answered each path: what makes a stat racy. */
    const statAt = new Map<string, bigint>()
    const statAll = (paths: ReadonlyArray<string>) => {
      const missing: Array<string> = []
      for (const p of paths) {
        if (stats.has(p)) continue
        const answer = known?.answer(p)
        if (answer === undefined) missing.push(p)
        else {
          stats.set(p, answer)
          statAt.set(p, known!.at)
        }
      }
      if (missing.length === 0) return Effect.void
      const at = clock.unsafeCurrentTimeNanos()
      return Effect.map(workspace.statMany(missing as Array<WorkspacePath>), (answers) => {
        for (const [i, path] of missing.entries()) {
          stats.set(path, answers[i]!)
          statAt.set(path, at)
        }
      })
    }
    const rules = new Map<string, DirectoryRules>()
    /** Reads a directory's rules (a miss of the kept rules), exactly as a scan reads them. */
    const readRules = (dir: string) => {
      const names = IGNORE_FILES.map((name) => join(dir, name))
      const answers = names.map((p) => stats.get(p)!)
      const present: Array<{ name: string; size: number; regular: boolean }> = []
      for (const [i, name] of IGNORE_FILES.entries()) {
        const stat = answers[i]!
        if (Either.isRight(stat) && Option.isSome(stat.right))
          present.push({ name, size: stat.right.value.size, regular: stat.right.value.kind === "file" })
      }
      return Effect.map(
        readDirectoryRules(dir, present).pipe(Effect.provideService(Workspace, workspace)),
        (read) => {
          let oldest = statAt.get(names[0]!)!
          for (const p of names) if (statAt.get(p)! < oldest) oldest = statAt.get(p)!
          kept.remember(dir, answers, oldest, read)
          rules.set(dir, read)
        },
      )
    }
    /** A directory's rules, or which directory must be read first. */
    const rulesOf = (dir: string): DirectoryRules | Missing => {
      const known = rules.get(dir)
      if (known !== undefined) return known
      const answers = IGNORE_FILES.map((name) => stats.get(join(dir, name)))
      if (answers.some((a) => a === undefined)) return { missing: dir }
      const hit = kept.lookup(dir, answers as Array<StatAnswer>)
      if (hit === undefined) return { missing: dir }
      rules.set(dir, hit)
      return hit
    }
    const directories = new Map<string, DirectoryState>()
    const decideDirectory = (dir: string): DirectoryState | Missing => {
      if (dir === "") {
        const own = rulesOf("")
        return isMissing(own) ? own : { excluded: undefined, stack: pushRules(outer, own.rules) }
      }
      const parent = stateOf(parentOf(dir))
      if (isMissing(parent)) return parent
      const excludedAs = (excluded: Exclusion): DirectoryState => ({ excluded, stack: parent.stack })
      if (parent.excluded !== undefined) return parent
      if (onSkipList(parent.stack, dir)) return excludedAs({ by: "skip_list", directory: dir })
      // The scan never enters a nested repository; a restore must not write into one either.
      const git = stats.get(`${dir}/.git`)
      if (git === undefined) return { missing: dir }
      if (Either.isRight(git) && Option.isSome(git.right))
        return excludedAs({ by: "nested_repository", directory: dir })
      const decided = decidingSet(parent.stack, dir, true)
      if (decided?.ignored === true) return excludedAs({ by: "rules", rulesOf: decided.base })
      const own = rulesOf(dir)
      return isMissing(own) ? own : { excluded: undefined, stack: pushRules(parent.stack, own.rules) }
    }
    const stateOf = (dir: string): DirectoryState | Missing => {
      const known = directories.get(dir)
      if (known !== undefined) return known
      const state = decideDirectory(dir)
      if (!isMissing(state)) directories.set(dir, state)
      return state
    }
    const decide = (path: WorkspacePath, isDirectory: boolean): Option.Option<Exclusion> | Missing => {
      const parent = stateOf(parentOf(path))
      if (isMissing(parent)) return parent
      const exclusion: Exclusion | undefined =
        parent.excluded ?? excludedByRules(decidingSet(parent.stack, path, isDirectory))
      if (exclusion === undefined) return Option.none()
      // A nested repository is not a rule: a tracked path there stays out.
      return exclusion.by !== "nested_repository" && keptAsTracked(repository, path, isDirectory)
        ? Option.none()
        : Option.some(exclusion)
    }
    // Decides synchronously; stops only to stat or read one directory's files, then goes on.
    const decideOrLoad = (
      path: WorkspacePath,
      isDirectory: boolean,
    ): Effect.Effect<Option.Option<Exclusion>> =>
      Effect.suspend(() => {
        const outcome = decide(path, isDirectory)
        if (!isMissing(outcome)) return Effect.succeed(outcome)
        const dir = outcome.missing
        const need = lookedAt(dir).filter((p) => !stats.has(p))
        return Effect.flatMap(need.length > 0 ? statAll(need) : readRules(dir), () =>
          decideOrLoad(path, isDirectory),
        )
      })
    return (path: WorkspacePath, isDirectory = false): Effect.Effect<Option.Option<Exclusion>> =>
      Effect.suspend(() => {
        // The undecided directories on the way, from the path up to the first decided one.
        const wanted: Array<string> = []
        for (let dir = parentOf(path); ; dir = parentOf(dir)) {
          if (directories.has(dir)) break
          wanted.push(...lookedAt(dir))
          if (dir === "") break
        }
        const outcome = wanted.every((p) => stats.has(p)) ? decide(path, isDirectory) : undefined
        if (outcome !== undefined && !isMissing(outcome)) return Effect.succeed(outcome)
        return Effect.flatMap(statAll(wanted), () => decideOrLoad(path, isDirectory))
      })
  })
