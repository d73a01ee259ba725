/**
 * The ignore decisions a repeat scan may reuse (`ScanReuse`, see `workspaceScan.ts`), offered from
 * the previous point: from its manifest, or from its stat cache when the manifest is not decoded.
 * Only a hint: a decision not offered is taken afresh, and one offered is checked whenever the
 * rules the scan applies are not the ones it was made under.
 */
import type { WorkspacePath } from "@rewind/contracts"
import type { Manifest, StatCache } from "./pointManifest.js"
import type { ScanReuse } from "./workspaceScan.js"

/**
 * The previous point's ignore decisions, for the scan to reuse: its files and links were in scope,
 * and so was every directory above one. Only offered with the rules identity they were made under.
 */
export const reusableDecisions = (previous: Manifest, rules: string | undefined): ScanReuse | undefined => {
  if (rules === undefined || previous.size === 0) return undefined
  return reuseOver(
    rules,
    (path) => {
      const entry = previous.get(path as WorkspacePath)
      return entry !== undefined && entry.kind !== "tombstone"
    },
    function* () {
      for (const [path, entry] of previous) if (entry.kind !== "tombstone") yield path
    },
  )
}

/**
 * The same from the previous point's stat cache, when its manifest is not decoded
 * (`unchangedManifest.ts`): every cached file was in scope. Fewer decisions than the manifest's
 * where it holds links or files not cached, and a decision not offered is simply taken afresh.
 */
export const reusableFromStatCache = (
  statCache: StatCache,
  rules: string | undefined,
): ScanReuse | undefined =>
  rules === undefined || statCache.size === 0
    ? undefined
    : reuseOver(
        rules,
        (path) => statCache.has(path as WorkspacePath),
        () => statCache.keys(),
      )

const reuseOver = (
  rules: string,
  fileInScope: (path: string) => boolean,
  inScope: () => Iterable<string>,
): ScanReuse => {
  let directories: Set<string> | undefined
  // The directories the scan took only for the tracked files below them (they follow the rules'
  // hash, see `finishScan`): the rules excluded them, so they and everything below them are
  // decided afresh, which excludes them again.
  const trackedOnly = rules.split("\n").slice(1)
  const excludedAbove = (path: string) =>
    trackedOnly.some((dir) => path === dir || path.startsWith(`${dir}/`))
  return {
    rules,
    fileInScope,
    directoryInScope: (path) => {
      directories ??= directoriesAbove(inScope())
      return directories.has(path) && (trackedOnly.length === 0 || !excludedAbove(path))
    },
  }
}

/** Every directory above one of `paths`. */
const directoriesAbove = (paths: Iterable<string>): Set<string> => {
  const found = new Set<string>()
  // The directory of the path before: paths in order come a directory at a time, and a path in
  // the same directory needs no slice and no lookup.
  let last = ""
  for (const path of paths) {
    const slash = path.lastIndexOf("/")
    if (slash <= 0 || (slash === last.length && path.startsWith(last))) continue
    last = path.slice(0, slash)
    for (let at = slash; at > 0; at = path.lastIndexOf("/", at - 1)) {
      const dir = at === slash ? last : path.slice(0, at)
      if (found.has(dir)) break
      found.add(dir)
    }
  }
  return found
}
