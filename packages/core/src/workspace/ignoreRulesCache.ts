/**
 * A directory's ignore rules kept between operations, per Workspace instance, so a live engine's
 * per-edit protection check does not read and hash the root `.gitignore` (and every other ignore
 * file above the path) on every call. It owns only the question "may the rules read earlier still
 * be used?"; what the rules are stays in `ignoreRules.ts` (a miss reads them exactly as before).
 *
 * Soundness: an entry is used only when every ignore file of the directory has, in the stat the
 * caller just took, exactly the stat it had when the entry was made (absent stays absent; present
 * keeps kind, size, mode, mtime, ctime and inode), as git's index validates a cached file. Any
 * change of content moves the ctime (which no user call can set back) or the inode (an atomic
 * replace), unless it falls in the same timestamp tick as the change the entry saw. That is the
 * "racy" case, closed as git closes it: an entry is only made when the files' mtime and ctime are
 * at least `RACY_MARGIN_NS` older than the Clock just before that stat (two-second tick of the
 * coarsest filesystems, plus skew), so any later change gets a different timestamp. A racy file is
 * simply read again on every call until it ages. Entries are also not made when a stat failed or a
 * file was refused (a failed read may be transient): those are read again each time.
 *
 * Invariants: one cache per Workspace service object (a WeakMap: it goes with the engine), at most
 * `DIRECTORIES_KEPT` directories (least recently used dropped first); a hit hands out a fresh
 * matcher over the kept rules (`RuleMatcher.fresh`: the library's own matcher, used only where
 * `ruleMatcher.ts` cannot read its rules, remembers every path it tested, so a long session's
 * paths never accumulate in a shared one).
 */
import type { FileStat } from "@rewind/contracts"
import { Either, Option } from "effect"
import { boundedMap } from "../internal/boundedMap.js"
import type { WorkspaceError, WorkspaceService } from "../ports/Workspace.js"
import type { DirectoryRules } from "./ignoreRules.js"

export type StatAnswer = Either.Either<Option.Option<FileStat>, WorkspaceError>

/** How much older than the Clock a file's timestamps must be before its rules are kept. */
export const RACY_MARGIN_NS = 5_000_000_000n

/** Directories whose rules are kept per Workspace (babel has six ignore files). */
export const DIRECTORIES_KEPT = 1024

interface Entry {
  /** Per ignore file (in `IGNORE_FILES` order): its stat when read, or None when absent. */
  readonly files: ReadonlyArray<Option.Option<FileStat>>
  readonly rules: DirectoryRules
}

const sameStat = (a: FileStat, b: FileStat) =>
  a.kind === b.kind &&
  a.size === b.size &&
  a.mode === b.mode &&
  a.mtimeNs === b.mtimeNs &&
  a.ctimeNs === b.ctimeNs &&
  a.inode === b.inode

const unchanged = (kept: Option.Option<FileStat>, now: StatAnswer) =>
  Either.isRight(now) &&
  (Option.isNone(kept)
    ? Option.isNone(now.right)
    : Option.isSome(now.right) && sameStat(kept.value, now.right.value))

const withFreshMatcher = (rules: DirectoryRules): DirectoryRules =>
  rules.rules === undefined
    ? rules
    : { ...rules, rules: { base: rules.rules.base, matcher: rules.rules.matcher.fresh() } }

export interface KeptRules {
  /** The rules kept for `dir`, if its ignore files' stats (`stats`, in `IGNORE_FILES` order) are unchanged. */
  readonly lookup: (dir: string, stats: ReadonlyArray<StatAnswer>) => DirectoryRules | undefined
  /**
   * Keeps `rules`, read after `stats` were taken at Clock time `statAtNs`, unless a stat failed,
   * a file was refused or a file is racy (see the header).
   */
  readonly remember: (
    dir: string,
    stats: ReadonlyArray<StatAnswer>,
    statAtNs: bigint,
    rules: DirectoryRules,
  ) => void
}

const makeKeptRules = (): KeptRules => {
  const entries = boundedMap<string, Entry>(DIRECTORIES_KEPT)
  return {
    lookup: (dir, stats) => {
      const entry = entries.get(dir)
      if (entry === undefined || entry.files.length !== stats.length) return undefined
      for (let i = 0; i < stats.length; i++) if (!unchanged(entry.files[i]!, stats[i]!)) return undefined
      return withFreshMatcher(entry.rules)
    },
    remember: (dir, stats, statAtNs, rules) => {
      entries.delete(dir)
      if (rules.refused.length > 0) return
      const files: Array<Option.Option<FileStat>> = []
      for (const answer of stats) {
        if (Either.isLeft(answer)) return
        const stat = answer.right
        if (Option.isSome(stat)) {
          const newest = stat.value.mtimeNs > stat.value.ctimeNs ? stat.value.mtimeNs : stat.value.ctimeNs
          if (newest + RACY_MARGIN_NS > statAtNs) return
        }
        files.push(stat)
      }
      // A copy: the caller's matcher caches every path this operation tests.
      entries.set(dir, { files, rules: withFreshMatcher(rules) })
    },
  }
}

const keptByWorkspace = new WeakMap<WorkspaceService, KeptRules>()

/** The kept rules of this Workspace instance (made on first use). */
export const keptRulesOf = (workspace: WorkspaceService): KeptRules => {
  let kept = keptByWorkspace.get(workspace)
  if (kept === undefined) {
    kept = makeKeptRules()
    keptByWorkspace.set(workspace, kept)
  }
  return kept
}
