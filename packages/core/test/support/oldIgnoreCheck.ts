// The ignore check as it was before its decisions became synchronous and its rules were kept
// between operations (issue 23): one Effect step per directory and per ignore file, every ignore
// file read and hashed on each operation. Kept here, and only here, as the oracle the property in
// `ignoreCheck.test.ts` compares the current check against.
import type { FileStat, WorkspacePath } from "@rewind/contracts"
import { Effect, Either, Option } from "effect"
import { Workspace, type WorkspaceError } from "../../src/ports/Workspace.js"
import {
  type DirectoryRules,
  decidingSet,
  IGNORE_FILES,
  join,
  onSkipList,
  pushRules,
  type RuleStack,
  readDirectoryRules,
} from "../../src/workspace/ignoreRules.js"

type StatAnswer = Either.Either<Option.Option<FileStat>, WorkspaceError>

/**
 * A per-call cache of directory rules for checking arbitrary paths (a restore's plan, a declared
 * path): each directory's ignore files are looked for and read once. `statOf` answers the stats
 * (the checker looks them up ahead in bulk).
 */
const makeRulesCache = (statOf: (path: string) => Effect.Effect<StatAnswer>) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const cache = new Map<string, DirectoryRules>()
    const rulesOf = (dir: string) =>
      Effect.gen(function* () {
        const known = cache.get(dir)
        if (known !== undefined) return known
        const present: Array<{ name: string; size: number; regular: boolean }> = []
        for (const name of IGNORE_FILES) {
          const stat = yield* statOf(join(dir, name))
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
type Exclusion =
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
export const makeOldIgnoreCheck = () =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    // What a directory's decision needs to know of it: its ignore files and whether it holds
    // `.git`. A path's undecided directories are looked up together in one `statMany` (each walk
    // from the root checks the directories on the way once), not one walk per name and directory.
    const stats = new Map<string, StatAnswer>()
    const statOf = (path: string) =>
      Effect.suspend(() => {
        const known = stats.get(path)
        return known !== undefined
          ? Effect.succeed(known)
          : Effect.either(workspace.stat(path as WorkspacePath))
      })
    const lookAhead = (path: string) =>
      Effect.suspend(() => {
        const wanted: Array<string> = []
        for (let dir = parentOf(path); ; dir = parentOf(dir)) {
          if (directories.has(dir)) break
          for (const name of IGNORE_FILES) wanted.push(join(dir, name))
          if (dir !== "") wanted.push(`${dir}/.git`)
          if (dir === "") break
        }
        const missing = wanted.filter((p) => !stats.has(p))
        if (missing.length === 0) return Effect.void
        return Effect.map(workspace.statMany(missing as Array<WorkspacePath>), (answers) => {
          for (const [i, path] of missing.entries()) stats.set(path, answers[i]!)
        })
      })
    const rulesOf = yield* makeRulesCache(statOf)
    // The scan never enters a nested repository; a restore must not write into one either.
    const holdsRepository = (dir: string) =>
      Effect.map(statOf(`${dir}/.git`), (s) => (Either.isRight(s) ? Option.isSome(s.right) : false))
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
        yield* lookAhead(path)
        const parent = yield* stateOf(parentOf(path))
        if (parent.excluded !== undefined) return Option.some(parent.excluded)
        const decided = decidingSet(parent.stack, path, isDirectory)
        return decided?.ignored === true
          ? Option.some<Exclusion>({ by: "rules", rulesOf: decided.base })
          : Option.none<Exclusion>()
      })
  })
