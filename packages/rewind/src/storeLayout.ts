/**
 * Where the embedded default's database lies inside its store directory, and what keeps it there
 * when the workspace is cleaned.
 *
 * A store inside the workspace is an ignored directory (its `.gitignore` is `*`), and ignored files
 * are what `git clean -x`/`-X` and `git stash --all` remove: one command, run by an agent tidying a
 * build, would take every point and session with it. Git leaves one thing alone unless `-f` is
 * given twice: a nested repository. So a store directory Rewind makes keeps its database in
 * `rewind-data/`, which holds the least git takes for a repository (`.git` with `HEAD`, `objects/`
 * and `refs/`; no commit, nothing else). The store directory's `.gitignore` keeps that directory
 * out of `git status` and `git add`, as it keeps the rest of the store. `<dir>/rewind.db` stays the
 * store's name: a relative link to `rewind-data/rewind.db`, so a script or a tool that names it
 * still reaches the database. A clean takes the `.gitignore` and the link (until they are back, git
 * lists `.rewind/` as untracked and refuses `git add -A` over the commit-less repository, loudly:
 * nothing is staged); the next open puts both back.
 *
 * The user's own ignore files and `.git/info/exclude` are never touched.
 *
 * Invariants:
 * - the layout follows ownership: only a store directory Rewind made itself gets `rewind-data/`
 *   (only there is the `.gitignore` Rewind's, so only there is the nested repository hidden).
 *   A directory that existed (a named `dir`, the workspace root) and every store made before this
 *   layout keep `rewind.db` directly in the store directory ("flat"), opened as they are;
 * - the database is always opened at its real path, never through the link; a `rewind.db` that is
 *   a link is taken only when it is exactly Rewind's (`rewind-data/rewind.db`, with `rewind-data` a
 *   real directory); any other link is refused, as a link anywhere in the store is;
 * - what is made or put back is created exclusively (no link followed, nothing replaced) and is
 *   best effort: the store works the same without it, only unguarded;
 * - a long-lived process writes only into the store it opened: `storeIdentity` is taken once it is
 *   open, and `storeReplacement` (before every call of openRewind's facade) tells when the store
 *   directory or the database at its real path is gone or is another file. SQLite would go on
 *   writing into the unlinked one, and every point would be lost with it when the process ends.
 */
import { lstatSync, mkdirSync, readlinkSync, type Stats, statSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { StoreRefused, StoreReplaced } from "./errors.js"

/** The database's name in the store directory (the file itself, or Rewind's link to it). */
export const DATABASE_FILE = "rewind.db"
/** The guarded directory holding the database in a store directory Rewind made. */
export const GUARDED_DIR = "rewind-data"
/** What Rewind's `rewind.db` link says. */
const LINK_TARGET = `${GUARDED_DIR}/${DATABASE_FILE}`
/** The files SQLite opens beside the database: none of them may be a link either. */
const DATABASE_COMPANIONS = ["", "-wal", "-shm", "-journal"] as const

const GITIGNORE = "# Rewind's store: never committed\n*\n"
/** The live engine's flush cookies' directory (`watchCookieDirectory`). */
const WATCH_COOKIE_NAME = "watch"

/**
 * `flat`: the database is `<dir>/rewind.db`. `guarded`: it is `<dir>/rewind-data/rewind.db`.
 * `none`: no database and no guarded directory yet.
 */
export type StoreLayout =
  | { readonly kind: "flat" | "guarded"; readonly database: string }
  | { readonly kind: "none"; readonly database: undefined }

const lstat = (path: string): Stats | undefined => lstatSync(path, { throwIfNoEntry: false })

export const linkRefusal = (path: string, what: "its store directory" | "a store file") =>
  new StoreRefused({
    reason: "symlink",
    path,
    message: `${path} is a symbolic link; Rewind does not open ${what} through a link, since it would read and write wherever the link leads. Nothing was created or written. Replace the link by the real ${what === "its store directory" ? "directory" : "file"}, or name the store directory you mean with \`dir\` (--dir)`,
  })

const readLink = (path: string) => {
  try {
    return readlinkSync(path)
  } catch {
    return undefined
  }
}

/**
 * The layout of the store directory `dir`, or the refusal of a link where a store file should be:
 * a `rewind.db` link that is not Rewind's, a `rewind-data` that is a link, or a link among the
 * database's companions.
 */
export const readLayout = (dir: string): StoreLayout | StoreRefused => {
  const name = join(dir, DATABASE_FILE)
  const guardedDir = join(dir, GUARDED_DIR)
  const nameStats = lstat(name)
  const guardedStats = lstat(guardedDir)
  if (nameStats?.isSymbolicLink() === true && readLink(name) !== LINK_TARGET)
    return linkRefusal(name, "a store file")
  // Rewind's link, or no `rewind.db` at all beside a `rewind-data` (a clean took the link).
  const guarded =
    nameStats?.isSymbolicLink() === true ||
    (nameStats === undefined &&
      (guardedStats?.isDirectory() === true || guardedStats?.isSymbolicLink() === true))
  if (guarded && guardedStats?.isSymbolicLink() === true)
    return linkRefusal(guardedDir, "its store directory")
  const layout: StoreLayout = guarded
    ? { kind: "guarded", database: join(guardedDir, DATABASE_FILE) }
    : nameStats !== undefined
      ? { kind: "flat", database: name }
      : { kind: "none", database: undefined }
  // The companions where SQLite puts them, and (guarded) where the flat layout would: a link at a
  // store file's name is refused wherever it lies, as nothing but Rewind's own link belongs there.
  const companions = DATABASE_COMPANIONS.map((suffix) => `${name}${suffix}`).filter(
    (path) => !guarded || path !== name,
  )
  if (layout.kind === "guarded")
    companions.push(...DATABASE_COMPANIONS.map((suffix) => `${layout.database}${suffix}`))
  for (const path of companions)
    if (lstat(path)?.isSymbolicLink() === true) return linkRefusal(path, "a store file")
  return layout
}

/** Whether `dir` holds the guarded layout's directory (a real one: a link there is refused by `readLayout`). */
const isGuarded = (dir: string) => lstat(join(dir, GUARDED_DIR))?.isDirectory() === true

const quietly = (make: () => void) => {
  try {
    make()
  } catch {
    // Already there (EEXIST: left as it is, never replaced), or a read-only or racing directory.
  }
}

/** The least git takes for a repository, so `git clean` without `-ff` leaves `at` alone. */
const makeGuard = (at: string) => {
  const git = join(at, ".git")
  quietly(() => mkdirSync(git))
  quietly(() => mkdirSync(join(git, "objects")))
  quietly(() => mkdirSync(join(git, "refs")))
  quietly(() => writeFileSync(join(git, "HEAD"), "ref: refs/heads/rewind-store\n", { flag: "wx" }))
  quietly(() =>
    writeFileSync(
      join(git, "description"),
      "Not a repository: Rewind's store. This marker keeps `git clean -x` and `git stash --all` from deleting the database beside it.\n",
      { flag: "wx" },
    ),
  )
}

/**
 * Makes a new store's files in `dir`: guarded when `dir` is Rewind's (`owned`: made just now, or
 * already guarded), flat otherwise. Answers where the database is to be created.
 */
export const makeLayout = (dir: string, owned: boolean): string => {
  if (!owned) return join(dir, DATABASE_FILE)
  quietly(() => writeFileSync(join(dir, ".gitignore"), GITIGNORE, { flag: "wx" }))
  const guardedDir = join(dir, GUARDED_DIR)
  quietly(() => mkdirSync(guardedDir))
  const stats = lstat(guardedDir)
  // Nothing to guard with (a read-only directory, a file in the way): the flat layout, as before.
  if (stats === undefined || !stats.isDirectory()) return join(dir, DATABASE_FILE)
  makeGuard(guardedDir)
  quietly(() => symlinkSync(LINK_TARGET, join(dir, DATABASE_FILE)))
  return join(guardedDir, DATABASE_FILE)
}

/**
 * Puts back what a clean takes from a guarded store (its `.gitignore`, the `rewind.db` link, the
 * guard itself), without touching what is there; nothing for any other layout. Run at every open,
 * and by a long-lived process (openRewind's facade, so `rewind serve` and the hook server too)
 * before every call: a clean between two turns is mended by the next. Three `lstat`s when nothing
 * is missing.
 */
export const mendLayout = (dir: string) => {
  if (!isGuarded(dir)) return
  if (lstat(join(dir, ".gitignore")) === undefined) {
    quietly(() => writeFileSync(join(dir, ".gitignore"), GITIGNORE, { flag: "wx" }))
  }
  if (lstat(join(dir, DATABASE_FILE)) === undefined) {
    quietly(() => symlinkSync(LINK_TARGET, join(dir, DATABASE_FILE)))
    makeGuard(join(dir, GUARDED_DIR))
  }
}

/** What a store was when it was opened: its directory and its database file, by device and inode. */
export interface StoreIdentity {
  readonly dir: string
  readonly database: string
  readonly id: string
}

/** `dev:ino` of each path (followed: a store directory the host named may be reached by a link). */
const identityOf = (paths: ReadonlyArray<string>): string | undefined => {
  try {
    return paths
      .map((path) => {
        const stats = statSync(path, { bigint: true })
        return `${stats.dev}:${stats.ino}`
      })
      .join("/")
  } catch {
    return undefined
  }
}

/** The identity of the open store in `dir`; undefined when there is none to take. */
export const storeIdentity = (dir: string): StoreIdentity | undefined => {
  const layout = readLayout(dir)
  if (layout instanceof StoreRefused || layout.database === undefined) return undefined
  const id = identityOf([dir, layout.database])
  return id === undefined ? undefined : { dir, database: layout.database, id }
}

/**
 * The refusal of a call on a store that was removed or replaced since it was opened; undefined
 * while it is the same. Two `stat`s.
 */
export const storeReplacement = (identity: StoreIdentity): StoreReplaced | undefined =>
  identityOf([identity.dir, identity.database]) === identity.id
    ? undefined
    : new StoreReplaced({
        path: identity.database,
        message: `the store this Rewind opened (${identity.database}) was removed or replaced since (by \`rm -rf\`, a fresh clone, a copy from a backup): nothing ran, since it would have been written into the unlinked database and lost with it. Open Rewind again on the store as it is now (a server stops: its clients run their call themselves)`,
      })

/**
 * Where a live engine's watcher makes its flush cookies in the store directory `dir`: inside the
 * guarded directory when there is one, so a `git clean -x` does not take it from under a running
 * watcher (which would cost its next capture a full scan), else `<dir>/watch`.
 */
export const watchCookieDirectory = (dir: string): string =>
  isGuarded(dir) ? join(dir, GUARDED_DIR, WATCH_COOKIE_NAME) : join(dir, WATCH_COOKIE_NAME)

/** What `rewind status` says of the layout: whether a clean of the workspace would take the store. */
export interface LayoutStatus {
  readonly layout: "guarded" | "flat"
  /** Why the store is exposed to `git clean -x` / `git stash --all`, or null when it is not. */
  readonly warning: string | null
}

export const layoutStatus = (dir: string, insideWorkspace: boolean): LayoutStatus => {
  if (isGuarded(dir)) return { layout: "guarded", warning: null }
  return {
    layout: "flat",
    warning: insideWorkspace
      ? `${DATABASE_FILE} lies directly in the store directory (made before this layout, or a directory that existed before init): \`git clean -x\` or \`git stash --all\` in the workspace would remove it with every point; exclude it there (\`git clean -e <store directory>\`), or keep the store out of the workspace (--dir)`
      : null,
  }
}
