/**
 * Which workspace a command acts on when it names none, and where its store is by default.
 *
 * The rule (git's for `.git`): the nearest directory at or above the working directory that holds
 * a Rewind store (`.rewind`), else the working directory itself. A command run from a subdirectory
 * of a workspace then finds its store, where it used to fail with "no Rewind store" and advise an
 * `init` that would have made a second, nested store; an agent whose shell `cd`s into a
 * subdirectory keeps recording into the one store.
 *
 * One rule for every entry point: the hooks (the payload's `cwd`), every CLI command, the capture
 * paths that run before the full CLI (the hand-over to a server, the fast capture) and `install`.
 * Two exceptions, both taking the working directory as it is:
 * - `rewind init`, which makes a workspace where it is told (as `git init` does);
 * - a store named with `--dir` and no `--workspace`: a named store says nothing about which
 *   directory above holds the workspace.
 *
 * Loads Node built-ins only: the hook client and the capture hand-over run it before anything else.
 */
import { existsSync } from "node:fs"
import { homedir } from "node:os"
import { dirname, join, resolve } from "node:path"

/** The store directory's name inside its workspace (the default `--dir`). */
export const STORE_DIR_NAME = ".rewind"

const holdsStore = (dir: string) => existsSync(join(dir, STORE_DIR_NAME))

/** The store directory of a workspace: `dir` when named, else the workspace's `.rewind`. */
export const storeDirectory = (options: {
  readonly workspaceRoot: string
  readonly dir?: string | undefined
}) => resolve(options.dir ?? join(options.workspaceRoot, STORE_DIR_NAME))

/** The nearest directory strictly above `dir` holding a store, if any (a workspace `dir` lies in). */
export const enclosingWorkspace = (dir: string): string | undefined => {
  for (let at = resolve(dir); dirname(at) !== at; ) {
    at = dirname(at)
    if (holdsStore(at)) return at
  }
  return undefined
}

/** The nearest directory at or above `cwd` holding a store, else `cwd` (resolved). */
export const discoverWorkspace = (cwd: string): string => {
  const start = resolve(cwd)
  return holdsStore(start) ? start : (enclosingWorkspace(start) ?? start)
}

/**
 * The workspace of a command run in `cwd`: `workspace` when given (relative to `cwd`); `cwd` when
 * a store is named without one, or when the command does not search (`init`); else the
 * discovered one.
 */
export const commandWorkspace = (
  cwd: string,
  named: { readonly workspace?: string | undefined; readonly dir?: string | undefined },
  search = true,
): string => {
  if (named.workspace !== undefined) return resolve(cwd, named.workspace)
  if (named.dir !== undefined || !search) return resolve(cwd)
  return discoverWorkspace(cwd)
}

/**
 * The refusal when a store would be made for a workspace at `root`, undefined for any other
 * directory: the filesystem root or the user's home directory holds every project and every secret
 * below it (`~/.ssh`, `~/.aws`), and a workspace there captures all of them at every turn, and a
 * turn restore there acts on all of them. Made only when asked in so many words (`init --force`,
 * `allowBroadWorkspace` from a host). The embedded default's layer (layers.ts) asks it whenever it
 * would create a store, so every entry point that makes one (`openRewind`, `init`, a hook's first
 * event, `serve --create`) meets the same rule; a store that exists already is used wherever it is.
 */
export const tooBroadRefusal = (root: string): string | undefined => {
  const why = tooBroadWhy(resolve(root))
  return why === undefined
    ? undefined
    : `no Rewind store made: ${why}, and a workspace there would capture every project and secret below it at every turn; run \`rewind init\` in a project directory (or \`rewind init --force\` there, or \`allowBroadWorkspace: true\` from a host, if this is really what you want)`
}

const tooBroadWhy = (at: string): string | undefined => {
  if (dirname(at) === at) return `${at} is the filesystem root`
  let home = process.env.HOME
  if (home === undefined || home === "") {
    try {
      home = homedir()
    } catch {
      return undefined
    }
  }
  return resolve(home) === at ? `${at} is your home directory` : undefined
}
