/**
 * The shadow-git baseline: what a tool that snapshots a workspace with git would do. A private git
 * dir and a private index (GIT_INDEX_FILE) live in a temp folder; the work tree is the generated
 * workspace. Snapshot = `add -A` + `write-tree`; restore = `checkout <tree> -- <paths>` for a few
 * files, or `read-tree <tree>` + `checkout-index -a -f` for all of them; size = `du` of the git dir.
 *
 * Every command names its git dir and work tree explicitly and runs with a scrubbed environment (no
 * inherited GIT_DIR, no user or system config), and both must lie under the OS temp dir: nothing
 * here can touch a real repository.
 */
import { spawnSync } from "node:child_process"
import { mkdirSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { isAbsolute, join, relative } from "node:path"
import { combine, timeProcess } from "../harness/processTiming.js"
import type { ProcessResult } from "../harness/types.js"

export const GIT = "/usr/bin/git"

export interface ShadowSnapshot extends ProcessResult {
  readonly tree: string
}

export interface ShadowGit {
  readonly gitDir: string
  readonly indexFile: string
  readonly workTree: string
  /** `git add -A` then `git write-tree`; the time is both processes' wall time. */
  readonly snapshot: (options?: { readonly measureMemory?: boolean }) => ShadowSnapshot
  /** `git checkout <tree> -- <paths>`. */
  readonly restorePaths: (
    tree: string,
    paths: ReadonlyArray<string>,
    options?: { readonly measureMemory?: boolean },
  ) => ProcessResult
  /** `git read-tree <tree>` then `git checkout-index -a -f`. */
  readonly restoreAll: (tree: string, options?: { readonly measureMemory?: boolean }) => ProcessResult
  /** Work-tree paths git's ignore rules exclude (`ls-files -o -i --exclude-standard`), `/`-separated. */
  readonly ignoredPaths: () => ReadonlyArray<string>
  /** Disk usage of the git dir and the index (`du -sk`), in bytes. */
  readonly diskUsageBytes: () => number
  /** Deletes the git dir and index. */
  readonly remove: () => void
}

const isUnder = (parent: string, child: string) => {
  const rel = relative(parent, child)
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel)
}

/** Refuses any path outside the OS temp dir, so a wrong argument can never reach a real repo. */
const assertInTemp = (what: string, path: string) => {
  const temp = realpathSync(tmpdir())
  if (!isAbsolute(path) || !isUnder(temp, realpathSync(path))) {
    throw new Error(`shadow git refuses a ${what} outside ${temp}: ${path}`)
  }
}

/** `du -sk` of the given paths, in bytes (disk blocks actually used, not apparent sizes). */
export const diskUsageBytes = (...paths: ReadonlyArray<string>): number => {
  const out = timeProcess("du", ["-sk", "-c", ...paths])
    .stdout.trim()
    .split("\n")
    .at(-1)!
  return Number.parseInt(out.split(/\s+/)[0]!, 10) * 1024
}

/** What every git here runs with: no inherited GIT_DIR, no user or system config, `home` as HOME. */
export const scrubbedEnv = (home: string): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: home,
  LANG: "C",
  LC_ALL: "C",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_TERMINAL_PROMPT: "0",
})

/**
 * Makes `workTree` (under the OS temp dir) a git checkout, as the repository a shape was taken from
 * is: `git init`, and an index listing every file git does not ignore with its stats
 * (`update-index --add --info-only`: each file is hashed, no object is written, so this costs a
 * read of the tree rather than a shadow snapshot). Rewind reads that index (a file git tracks is
 * never ignored), so the shape's figures include what a real repository costs it. A shadow
 * repository over the same tree never sees this one: every git leaves out a `.git`.
 */
export const makeCheckout = (workTree: string): void => {
  assertInTemp("checkout", workTree)
  const env = scrubbedEnv(workTree)
  const git = (args: ReadonlyArray<string>, input?: Buffer) => {
    const run = spawnSync(GIT, ["-C", workTree, ...args], {
      env,
      maxBuffer: 1 << 30,
      ...(input === undefined ? {} : { input }),
    })
    if (run.status !== 0) throw new Error(`git ${args.join(" ")} failed: ${run.stderr.toString()}`)
    return run.stdout
  }
  git(["init", "-q"])
  const files = git(["ls-files", "-z", "--others", "--exclude-standard"])
  git(["update-index", "--add", "--info-only", "-z", "--stdin"], files)
}

/** Creates an empty shadow repository in `dir` (which must not exist yet) over `workTree`. */
export const createShadowGit = (dir: string, workTree: string): ShadowGit => {
  mkdirSync(dir, { recursive: true })
  assertInTemp("shadow directory", dir)
  assertInTemp("work tree", workTree)
  const gitDir = join(dir, "git")
  const indexFile = join(dir, "index")
  const env = { ...scrubbedEnv(dir), GIT_INDEX_FILE: indexFile }
  const git = (args: ReadonlyArray<string>, measureMemory = false) =>
    timeProcess(GIT, [`--git-dir=${gitDir}`, `--work-tree=${workTree}`, ...args], {
      cwd: workTree,
      env,
      measureMemory,
    })

  timeProcess(GIT, ["init", "-q", "--bare", gitDir], { env })
  // No automatic gc in the middle of a timed command; a shadow-git tool would schedule its own.
  git(["config", "gc.auto", "0"])
  git(["config", "core.autocrlf", "false"])

  return {
    gitDir,
    indexFile,
    workTree,
    snapshot: (options) => {
      const add = git(["add", "-A"], options?.measureMemory)
      const write = git(["write-tree"], options?.measureMemory)
      const tree = write.stdout.trim()
      if (!/^[0-9a-f]{40}$/.test(tree)) throw new Error(`git write-tree printed ${JSON.stringify(tree)}`)
      return { ...combine([add, write]), tree }
    },
    restorePaths: (tree, paths, options) =>
      combine([git(["checkout", tree, "--", ...paths], options?.measureMemory)]),
    restoreAll: (tree, options) =>
      combine([
        git(["read-tree", tree], options?.measureMemory),
        git(["checkout-index", "-a", "-f"], options?.measureMemory),
      ]),
    ignoredPaths: () =>
      git(["ls-files", "-z", "--others", "--ignored", "--exclude-standard"])
        .stdout.split("\0")
        .filter((p) => p.length > 0),
    diskUsageBytes: () => diskUsageBytes(gitDir, indexFile),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  }
}

export const gitVersion = (): string => {
  try {
    return timeProcess(GIT, ["--version"]).stdout.trim()
  } catch {
    return "git not found"
  }
}
