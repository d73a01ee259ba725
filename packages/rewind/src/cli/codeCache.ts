/**
 * Runs a bundled script file with a V8 code cache, so a cold process does not parse and compile
 * the same megabytes of JavaScript on every start (Node 20 has no `module.enableCompileCache`).
 * The file is one function expression, `(function (exports, require, module, __filename,
 * __dirname, __importMetaUrl) {…})`, written by scripts/bundleCli.mjs; it is compiled by
 * `vm.Script` with the cached data of an earlier run, then called as Node calls a CommonJS module.
 * After a run that had no usable cache, `saveCache` writes one: made then, it holds the functions
 * that run compiled lazily too, not only the top level.
 *
 * Invariants:
 * - the cache only changes compile time, never what runs: its name is keyed by the Node version,
 *   platform, the flags given to V8 (`execArgv`, `NODE_OPTIONS`) and the SHA-256 of the script's
 *   bytes; its content carries its own SHA-256, checked before V8 sees it (release builds of V8
 *   check a cache's source length and flags, not its bytes); V8 may still reject it
 *   (`cachedDataRejected`), then it is compiled from source and the cache rewritten;
 * - the cache lives in a directory of this user's only (`$XDG_CACHE_HOME/rewind`, else
 *   `~/.cache/rewind`; 0700, files 0600, written whole then renamed); one that is a symlink, owned by
 *   another user, writable by others (or where that cannot be told: Windows), or not writable is
 *   not used at all: `runWithCodeCache` answers undefined and the caller loads its ESM modules;
 * - any other failure to read or write it (a full disk, a race with another process) is silent
 *   and only costs the compile: the command itself never fails for it;
 * - `REWIND_CODE_CACHE=off` neither reads nor writes it (undefined, as above);
 * - a cache holds what a whole run compiled: V8 drops the bytecode of functions that have not run
 *   for a while at its major collections ("flushing"), and a cache made at the end of a long run
 *   (a first capture of a large tree) would lack the modules' top-level code, which every later
 *   start would then compile again (at babel 4x: a 1.95 MB cache against 2.22 MB, the bundle's
 *   load 0.32 s against 0.19 s on every command after). So flushing is off from the compile until
 *   the cache is written (`keepBytecode`); the flag is part of what V8 checks a cache against, so
 *   it is set the same way for every compile that reads or makes one.
 */
import { createHash } from "node:crypto"
import {
  accessSync,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  type Stats,
  statSync,
  unlinkSync,
} from "node:fs"
import { createRequire } from "node:module"
import { homedir } from "node:os"
import { basename, dirname, isAbsolute, join } from "node:path"
import { pathToFileURL } from "node:url"
import { setFlagsFromString } from "node:v8"
import { Script } from "node:vm"
import { replaceFile } from "../internal/replaceFile.js"

type Env = Readonly<Record<string, string | undefined>>

/** What became of the cache: read and taken by V8, none (or not whole), or refused by V8. */
export type CodeCacheState = "used" | "absent" | "rejected"

export interface LoadedScript {
  /** What the script put on `module.exports`. */
  readonly exports: Record<string, unknown>
  readonly cache: CodeCacheState
  /** Writes the cache when this run had none usable (absent, rejected); never throws. */
  readonly saveCache: () => void
}

/**
 * Turns V8's bytecode flushing off (`on`: true) for a compile that reads or makes a cache, and on
 * again once no cache will be made in this run, so a long-running process (`rewind serve`) flushes
 * as V8 would. Left alone when the command line or NODE_OPTIONS set it themselves: theirs is part of
 * the cache's key, and not ours to undo.
 */
const keepBytecode = (on: boolean, env: Env) => {
  if (`${process.execArgv.join(" ")} ${env.NODE_OPTIONS ?? ""}`.includes("flush-bytecode")) return
  setFlagsFromString(on ? "--no-flush-bytecode" : "--flush-bytecode")
}

/** Caches kept per script name (other versions of the bundle, other Node versions); older go. */
const KEEP = 4
const DIGEST = 32

const sha256 = (data: Buffer | string) => createHash("sha256").update(data).digest()

/** The cache directory, or undefined when off or there is no home to put it in. */
export const codeCacheDir = (env: Env = process.env): string | undefined => {
  if (env.REWIND_CODE_CACHE === "off") return undefined
  const xdg = env.XDG_CACHE_HOME
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, "rewind")
  try {
    return join(homedir(), ".cache", "rewind")
  } catch {
    return undefined
  }
}

/** Ours alone: owned by this user, not writable by group or others (no uids, as on Windows: no). */
const private_ = (stats: Stats) => {
  const uid = process.getuid?.()
  return uid !== undefined && stats.uid === uid && (stats.mode & 0o022) === 0
}

const trustedDir = (dir: string) => {
  try {
    const stats = lstatSync(dir)
    return stats.isDirectory() && private_(stats)
  } catch {
    return false
  }
}

/** The cache's payload when the file is ours and whole; undefined otherwise. */
const readCache = (path: string): Buffer | undefined => {
  let fd: number | undefined
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW)
    const stats = fstatSync(fd)
    if (!stats.isFile() || !private_(stats)) return undefined
    const data = readFileSync(fd)
    if (data.length <= DIGEST) return undefined
    const payload = data.subarray(DIGEST)
    return sha256(payload).equals(data.subarray(0, DIGEST)) ? payload : undefined
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/** Older caches of the same script beyond `KEEP`, newest kept. */
const prune = (dir: string, prefix: string) => {
  const entries = readdirSync(dir)
    .filter((name) => name.startsWith(prefix) && name.endsWith(".v8"))
    .map((name) => ({ path: join(dir, name), at: statSync(join(dir, name)).mtimeMs }))
    .sort((a, b) => b.at - a.at)
  for (const { path } of entries.slice(KEEP)) unlinkSync(path)
}

const writeCache = (dir: string, path: string, prefix: string, make: () => Buffer) => {
  try {
    const payload = make()
    replaceFile(path, Buffer.concat([sha256(payload), payload]), 0o600)
    prune(dir, prefix)
  } catch {
    // A cache that cannot be written only costs the next run its compile.
  }
}

/** The cache directory, made if need be, when it is ours alone and writable; else why not. */
const cacheDirectory = (env: Env): { readonly dir: string } | { readonly why: string } => {
  if (env.REWIND_CODE_CACHE === "off") return { why: "off (REWIND_CODE_CACHE=off)" }
  const dir = codeCacheDir(env)
  if (dir === undefined) return { why: "no directory for it (no XDG_CACHE_HOME and no home directory)" }
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    accessSync(dir, constants.W_OK)
  } catch (error) {
    return {
      why: `${dir} cannot be made or written (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    }
  }
  return trustedDir(dir)
    ? { dir }
    : { why: `${dir} is not this user's alone (a link, another owner, or writable by others)` }
}

/** Whether this process's bundles can use a code cache, for `status` and `doctor` to say. */
export interface CodeCacheStatus {
  readonly usable: boolean
  /** The directory when usable, else null. */
  readonly dir: string | null
  /** Why not, when not usable (then every command compiles its code from source), else null. */
  readonly warning: string | null
}

/**
 * What `runWithCodeCache` would do for this environment: without a usable directory every command
 * loads its ES modules and compiles them from source, a slower start that is said, not silent.
 */
export const codeCacheStatus = (env: Env = process.env): CodeCacheStatus => {
  const found = cacheDirectory(env)
  return "dir" in found
    ? { usable: true, dir: found.dir, warning: null }
    : {
        usable: false,
        dir: null,
        warning: `no code cache: ${found.why}; every command compiles its code from source (about 0.1-0.2 s more per command)`,
      }
}

/**
 * Compiles and runs the script `file` with its code cache (see the header); undefined, without
 * reading the script, when there is no cache directory to use (off, not ours alone, not writable):
 * compiled from source every time, the one large script costs more than the ESM chunks it stands
 * in for, so the caller loads those instead.
 */
export const runWithCodeCache = (file: string, env: Env = process.env): LoadedScript | undefined => {
  const found = cacheDirectory(env)
  if (!("dir" in found)) return undefined
  const { dir } = found
  const bytes = readFileSync(file)
  const prefix = `${basename(file)}-`
  const key = sha256(
    [
      "rewind code cache 2",
      process.version,
      process.platform,
      process.arch,
      process.execArgv.join(" "),
      env.NODE_OPTIONS ?? "",
      sha256(bytes).toString("hex"),
    ].join("\0"),
  )
  const path = join(dir, `${prefix}${key.toString("hex").slice(0, 32)}.v8`)
  const cachedData = readCache(path)
  keepBytecode(true, env)
  const script = new Script(bytes.toString("utf8"), {
    filename: file,
    ...(cachedData === undefined ? {} : { cachedData }),
  })
  const cache: CodeCacheState =
    cachedData === undefined ? "absent" : script.cachedDataRejected ? "rejected" : "used"
  if (cache === "used") keepBytecode(false, env)
  const module = { exports: {} as Record<string, unknown> }
  const wrapper = script.runInThisContext() as (...args: ReadonlyArray<unknown>) => void
  wrapper(module.exports, createRequire(file), module, file, dirname(file), pathToFileURL(file).href)
  return {
    exports: module.exports,
    cache,
    saveCache: () => {
      if (cache === "used") return
      writeCache(dir, path, prefix, () => script.createCachedData())
      keepBytecode(false, env)
    },
  }
}

/**
 * The function a bundle exports as `name`, from `runWithCodeCache`, with its `saveCache`; undefined
 * when the bundle cannot be used (no cache directory to use, no bundle beside an unbundled bin, one
 * that fails to load or lacks the export): the caller then loads its ESM modules, and nothing of
 * the bundle has run beyond its modules' top level.
 */
export const bundleExport = <F>(
  file: string,
  name: string,
  env: Env = process.env,
): { readonly run: F; readonly saveCache: () => void } | undefined => {
  try {
    const loaded = runWithCodeCache(file, env)
    const run = loaded?.exports[name]
    if (loaded === undefined || typeof run !== "function") return undefined
    return { run: run as F, saveCache: loaded.saveCache }
  } catch {
    return undefined
  }
}
