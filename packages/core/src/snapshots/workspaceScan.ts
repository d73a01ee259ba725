/**
 * The bounded scan of a capture: walks the workspace a level at a time through the bulk
 * `scanDirectories` operation (one `lstat` per entry, symlinks never followed), applying the built-in
 * skip list, `.gitignore` and `.rewindignore` rules at every level, and a file-count and time
 * budget. Nested repositories (a directory holding `.git`) are not entered. What the budget or an
 * unreadable directory left out is reported; what ignore rules exclude is not "left out", it was
 * never in scope.
 */
import type { FileStat, SkippedPath, WorkspacePath } from "@rewind/contracts"
import { Clock, Effect, Either, Option } from "effect"
import ignore from "ignore"

type Ignore = ReturnType<typeof ignore>

import { type ScannedEntry, Workspace } from "../ports/Workspace.js"

/** Directory names never scanned: VCS data, dependencies, caches and Rewind's own store. */
export const BUILT_IN_SKIP = new Set([
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

export const IGNORE_FILES = [".gitignore", ".rewindignore"] as const

/** Directories listed in one call: few enough that their listings fit in memory together. */
const SCAN_WAVE = 256

export interface ScanBudget {
  readonly maxFiles: number
  /** Absolute Clock time (ms) after which no further directory is scanned. */
  readonly deadlineMs: number
}

export interface ScannedPath {
  readonly stat: FileStat
  readonly target?: string
}

export interface ScanProgress {
  readonly directories: number
  readonly entries: number
}

export interface ScanResult {
  /** Every non-directory entry in scope: files, symlinks and `other` kinds. */
  readonly entries: Map<WorkspacePath, ScannedPath>
  readonly skipped: Array<SkippedPath>
  /** Ignored entries and skipped directories, for status (not reported one by one). */
  readonly ignored: number
}

interface Rules {
  /** Directory the rules are relative to ("" for the root). */
  readonly base: string
  readonly matcher: Ignore
}

const join = (dir: string, name: string) => (dir === "" ? name : `${dir}/${name}`)

/**
 * The paths of a listing's entries, by listing. An adapter that keeps listings returns the same
 * (immutable) array for a directory that has not changed, so a repeat scan reuses the path
 * strings it built last time instead of building thousands again; and because they are the very
 * strings the previous manifest and stat cache were keyed by, the capture's lookups in those maps
 * are cheap too. Only a cache: a listing seen for the first time gets its paths built.
 */
const pathsOfListing = new WeakMap<
  ReadonlyArray<ScannedEntry>,
  { readonly dir: string; readonly paths: ReadonlyArray<string> }
>()

const pathsOf = (dir: string, children: ReadonlyArray<ScannedEntry>): ReadonlyArray<string> => {
  const known = pathsOfListing.get(children)
  if (known !== undefined && known.dir === dir) return known.paths
  const paths = children.map((c) => join(dir, c.name))
  pathsOfListing.set(children, { dir, paths })
  return paths
}

const relativeTo = (base: string, path: string) => (base === "" ? path : path.slice(base.length + 1))

const isIgnored = (rules: ReadonlyArray<Rules>, path: string, directory: boolean): boolean => {
  for (const r of rules) {
    const rel = relativeTo(r.base, path)
    if (r.matcher.ignores(directory ? `${rel}/` : rel)) return true
  }
  return false
}

/**
 * Whether paths are excluded by the same rules a scan applies (built-in skip directories, and
 * `.gitignore` / `.rewindignore` at every level, an ignored directory excluding all below it).
 * Ignore files are read once per directory per checker. Restores use it so that what a scan
 * would never capture is never written either (DESIGN §5: ignore rules apply both ways).
 */
export const makeIgnoreCheck = () =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const own = new Map<string, Ignore | undefined>()
    const rulesOf = (dir: string) =>
      Effect.gen(function* () {
        if (own.has(dir)) return own.get(dir)
        let matcher: Ignore | undefined
        for (const name of IGNORE_FILES) {
          const read = yield* Effect.either(workspace.read(join(dir, name) as WorkspacePath))
          if (Either.isRight(read) && Option.isSome(read.right)) {
            matcher ??= ignore()
            matcher.add(new TextDecoder().decode(read.right.value.content))
          }
        }
        own.set(dir, matcher)
        return matcher
      })
    return (path: WorkspacePath) =>
      Effect.gen(function* () {
        const segments = path.split("/")
        const rules: Array<Rules> = []
        let dir = ""
        for (let i = 0; i < segments.length; i++) {
          const matcher = yield* rulesOf(dir)
          if (matcher !== undefined) rules.push({ base: dir, matcher })
          const at = join(dir, segments[i]!)
          const isDirectory = i < segments.length - 1
          if (isDirectory && BUILT_IN_SKIP.has(segments[i]!)) return true
          if (isIgnored(rules, at, isDirectory)) return true
          dir = at
        }
        return false
      })
  })

export const scanWorkspace = (budget: ScanBudget, onProgress?: (p: ScanProgress) => void) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const entries = new Map<WorkspacePath, ScannedPath>()
    const skipped: Array<SkippedPath> = []
    let ignored = 0
    let directories = 0
    let queue: Array<{ dir: string; rules: ReadonlyArray<Rules> }> = [{ dir: "", rules: [] }]
    // Directories are listed a wave at a time through the bulk `scanDirectories` (one call per
    // wave, not per directory); results are handled in queue order.
    while (queue.length > 0) {
      const now = yield* Clock.currentTimeMillis
      if (now > budget.deadlineMs || entries.size >= budget.maxFiles) {
        for (const rest of queue) {
          skipped.push({
            path: rest.dir === "" ? "." : rest.dir,
            reason: "budget",
            detail: now > budget.deadlineMs ? "time budget spent" : "file-count budget spent",
          })
        }
        break
      }
      const wave = queue.slice(0, SCAN_WAVE)
      queue = queue.slice(SCAN_WAVE)
      const listings = yield* workspace.scanDirectories(
        wave.map(({ dir }) => (dir === "" ? undefined : (dir as WorkspacePath))),
      )
      for (let w = 0; w < wave.length; w++) {
        if (entries.size >= budget.maxFiles) {
          // The rest of the wave is out of budget exactly as if it had never been listed.
          queue = [...wave.slice(w), ...queue]
          break
        }
        const { dir, rules } = wave[w]!
        const listed = listings[w]!
        if (Either.isLeft(listed)) {
          if (dir === "") return yield* listed.left
          skipped.push({ path: dir, reason: "unreadable", detail: listed.left.message })
          continue
        }
        directories++
        const children = listed.right
        let nestedRepository = false
        const ignoreFiles: Array<string> = []
        for (const c of children) {
          if (c.name === ".git") nestedRepository = true
          else if (c.stat.kind === "file" && (IGNORE_FILES as ReadonlyArray<string>).includes(c.name)) {
            ignoreFiles.push(c.name)
          }
        }
        // A nested repository belongs to someone else's history: leave it alone entirely.
        if (dir !== "" && nestedRepository) {
          ignored++
          continue
        }
        let own: Ignore | undefined
        for (const name of IGNORE_FILES) {
          if (!ignoreFiles.includes(name)) continue
          const read = yield* Effect.either(workspace.read(join(dir, name) as WorkspacePath))
          if (Either.isRight(read) && Option.isSome(read.right)) {
            own ??= ignore()
            own.add(new TextDecoder().decode(read.right.value.content))
          }
        }
        const scope = own === undefined ? rules : [...rules, { base: dir, matcher: own }]
        const paths = pathsOf(dir, children)
        for (let c = 0; c < children.length; c++) {
          const child = children[c]!
          const path = paths[c]!
          if (child.stat.kind === "directory") {
            if (BUILT_IN_SKIP.has(child.name) || isIgnored(scope, path, true)) ignored++
            else queue.push({ dir: path, rules: scope })
            continue
          }
          if (isIgnored(scope, path, false)) {
            ignored++
            continue
          }
          // The listed entry is itself a ScannedPath: nothing is allocated per file here.
          entries.set(path as WorkspacePath, child)
        }
        onProgress?.({ directories, entries: entries.size })
      }
    }
    return { entries, skipped, ignored } satisfies ScanResult
  })
