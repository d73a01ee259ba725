/**
 * The per-workspace socket of `rewind serve`: where the hook client finds the server of a
 * (workspace, store) pair, and where the server it starts listens. Used by the hook client at
 * every hook, so it loads nothing but Node built-ins.
 *
 * The path is `<dir>/<hash>.sock` with `<hash>` the first 24 hex digits of SHA-256 over the real
 * workspace root and the real store directory (NUL-separated): the same pair always meets the
 * same server, another store of the same tree gets its own. `<dir>` is `$XDG_RUNTIME_DIR/rewind`
 * when that is set (a per-user directory the system cleans at logout), else
 * `<os temp dir>/rewind-<uid>`; it is created mode 0700 (the server refuses a socket directory
 * others can write). A unix socket path holds at most 107 bytes (`sun_path`): a `<dir>` that
 * would make it longer (or that cannot be created) falls back to the temp dir, and a path that is
 * still too long is refused (`undefined`), one that cannot be created throws: the hook then runs
 * in its own process and says why.
 */
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, realpathSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"

/** The longest socket path Linux and macOS accept (`sun_path` minus its terminating NUL). */
export const MAX_SOCKET_PATH_BYTES = 103

const real = (path: string) => {
  try {
    return realpathSync(path)
  } catch {
    return resolve(path)
  }
}

const candidateDirs = (env: Readonly<Record<string, string | undefined>>): ReadonlyArray<string> => {
  const uid = process.getuid?.() ?? "user"
  const fallback = join(tmpdir(), `rewind-${uid}`)
  const runtime = env.XDG_RUNTIME_DIR
  return runtime !== undefined && runtime.length > 0 ? [join(runtime, "rewind"), fallback] : [fallback]
}

/** The file beside a socket that names the server listening on it (pid, idle exit, start time). */
export const serverInfoPath = (socketPath: string) => `${socketPath.replace(/\.sock$/, "")}.server.json`

/** The socket file name of (workspace, store), the same from every process. */
export const socketName = (workspaceRoot: string, storeDir: string): string =>
  `${createHash("sha256")
    .update(`${real(workspaceRoot)}\u0000${real(storeDir)}`)
    .digest("hex")
    .slice(0, 24)}.sock`

/**
 * The socket path of (workspace, store), its directory created (mode 0700) when missing; or
 * undefined when no candidate directory gives a path short enough.
 */
export const workspaceSocketPath = (
  workspaceRoot: string,
  storeDir: string,
  env: Readonly<Record<string, string | undefined>>,
  create = true,
): string | undefined => {
  const name = socketName(workspaceRoot, storeDir)
  const dirs = candidateDirs(env)
  let firstFitting: string | undefined
  for (const [i, dir] of dirs.entries()) {
    const path = join(dir, name)
    if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) continue
    // Looking only (`rewind status`): the directory a server already uses, else the first that fits.
    if (!create) {
      if (existsSync(path)) return path
      firstFitting ??= path
      continue
    }
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 })
    } catch (error) {
      // The next candidate, if any; the last one's failure is the caller's to report.
      if (i === dirs.length - 1) throw error
      continue
    }
    return path
  }
  return create ? undefined : firstFitting
}
