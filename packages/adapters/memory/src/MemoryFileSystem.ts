/**
 * A small in-memory filesystem (absolute paths, directories, files, symlinks, FIFOs) with an
 * access log. It backs the memory Workspace, and because it has an "outside" (everything not under
 * the workspace root), tests can plant symlinks that lead out and then check, from the log, that no
 * primitive ever touched a path outside the root: invariant 9 made observable.
 */
import type { DirectoryEntry, FileKind, FileStat } from "@rewind/contracts"
import type { FileSystemPrimitives, PrimitiveFailure, ScannedEntry } from "@rewind/core"
import { Clock, Effect } from "effect"

interface NodeTimes {
  mtimeNs: bigint
  ctimeNs: bigint
  readonly inode: bigint
}

export type MemoryNode =
  | ({ readonly kind: "file"; content: Uint8Array; mode: number } & NodeTimes)
  | ({ readonly kind: "directory"; mode: number } & NodeTimes)
  | ({ readonly kind: "symlink"; readonly target: string } & NodeTimes)
  | ({ readonly kind: "fifo"; mode: number } & NodeTimes)

export interface MemoryFsAccess {
  readonly operation:
    | "probe"
    | "stat"
    | "read"
    | "write"
    | "create"
    | "mkdir"
    | "unlink"
    | "rmdir"
    | "readdir"
    | "readlink"
    | "symlink"
  readonly path: string
}

const fail = (code: string, message: string): Effect.Effect<never, PrimitiveFailure> =>
  Effect.fail({ code, message: `${code}: ${message}` })

const parentOf = (path: string): string => {
  const i = path.lastIndexOf("/")
  return i <= 0 ? "/" : path.slice(0, i)
}
const nameOf = (path: string): string => path.slice(path.lastIndexOf("/") + 1)

const normalise = (path: string): string => {
  if (!path.startsWith("/")) throw new Error(`memory filesystem paths are absolute: ${path}`)
  const parts = path.split("/").filter((p) => p !== "" && p !== ".")
  if (parts.includes("..")) throw new Error(`memory filesystem paths are normalised: ${path}`)
  return `/${parts.join("/")}`
}

const kindOf = (node: MemoryNode): FileKind => (node.kind === "fifo" ? "other" : node.kind)

const statOf = (node: MemoryNode): FileStat => ({
  kind: kindOf(node),
  size:
    node.kind === "file"
      ? node.content.byteLength
      : node.kind === "symlink"
        ? new TextEncoder().encode(node.target).byteLength
        : node.kind === "directory"
          ? 4096
          : 0,
  mode: node.kind === "symlink" ? 0o777 : node.mode,
  mtimeNs: node.mtimeNs,
  ctimeNs: node.ctimeNs,
  inode: node.inode,
})

type AccessLog = (operation: MemoryFsAccess["operation"], path: string) => Effect.Effect<void>
type ReadPrimitive = "probe" | "stat" | "readdirStat" | "readFile" | "readdir" | "readlink"

export class MemoryFileSystem {
  readonly #nodes = new Map<string, MemoryNode>()
  readonly #children = new Map<string, Set<string>>()
  #inode = 1n
  /** Every primitive call made through `primitives()`, in order, with its absolute path. */
  readonly accesses: Array<MemoryFsAccess> = []

  constructor() {
    this.#nodes.set("/", { kind: "directory", mode: 0o755, mtimeNs: 0n, ctimeNs: 0n, inode: this.#inode++ })
    this.#children.set("/", new Set())
  }

  #times(now: bigint): NodeTimes {
    return { mtimeNs: now, ctimeNs: now, inode: this.#inode++ }
  }

  #put(path: string, node: MemoryNode): void {
    this.#nodes.set(path, node)
    if (node.kind === "directory" && !this.#children.has(path)) this.#children.set(path, new Set())
    this.#children.get(parentOf(path))?.add(nameOf(path))
  }

  #remove(path: string): void {
    this.#nodes.delete(path)
    this.#children.get(parentOf(path))?.delete(nameOf(path))
  }

  // ---- setup and inspection for tests (not logged, synchronous, no confinement) ----

  /** Creates a directory and its parents. */
  mkdirp(path: string): void {
    const p = normalise(path)
    if (p === "/") return
    this.mkdirp(parentOf(p))
    const existing = this.#nodes.get(p)
    if (existing === undefined) this.#put(p, { kind: "directory", mode: 0o755, ...this.#times(0n) })
    else if (existing.kind !== "directory") throw new Error(`${p} exists and is not a directory`)
  }

  writeFile(path: string, content: Uint8Array | string, mode = 0o644): void {
    const p = normalise(path)
    this.mkdirp(parentOf(p))
    const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content.slice()
    this.#put(p, { kind: "file", content: bytes, mode, ...this.#times(0n) })
  }

  symlink(path: string, target: string): void {
    const p = normalise(path)
    this.mkdirp(parentOf(p))
    this.#put(p, { kind: "symlink", target, ...this.#times(0n) })
  }

  fifo(path: string): void {
    const p = normalise(path)
    this.mkdirp(parentOf(p))
    this.#put(p, { kind: "fifo", mode: 0o644, ...this.#times(0n) })
  }

  /** Removes an entry and, for a directory, everything under it. */
  remove(path: string): void {
    const p = normalise(path)
    for (const child of [...(this.#children.get(p) ?? [])]) this.remove(`${p === "/" ? "" : p}/${child}`)
    this.#children.delete(p)
    this.#remove(p)
  }

  node(path: string): MemoryNode | undefined {
    return this.#nodes.get(normalise(path))
  }

  /** Every entry under a directory (itself excluded), as `path -> description`, sorted. */
  describe(under: string): Array<[string, string]> {
    const p = normalise(under)
    const prefix = p === "/" ? "/" : `${p}/`
    return [...this.#nodes]
      .filter(([path]) => path.startsWith(prefix))
      .map(([path, node]): [string, string] => {
        switch (node.kind) {
          case "file":
            return [path, `file ${node.mode.toString(8)} ${new TextDecoder().decode(node.content)}`]
          case "symlink":
            return [path, `symlink ${node.target}`]
          default:
            return [path, node.kind]
        }
      })
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  }

  // ---- primitives for the confined workspace (logged) ----

  primitives(): FileSystemPrimitives {
    const log = (operation: MemoryFsAccess["operation"], path: string) =>
      Effect.sync(() => void this.accesses.push({ operation, path }))
    return { ...this.#readPrimitives(log), ...this.#writePrimitives(log) }
  }

  /** The primitives that only look: every call logged, nothing changed. */
  #readPrimitives(log: AccessLog): Pick<FileSystemPrimitives, ReadPrimitive> {
    return {
      probe: (path) =>
        Effect.zipRight(
          log("probe", path),
          Effect.sync(() => {
            const node = this.#nodes.get(path)
            if (node === undefined) return { kind: "missing" as const }
            if (node.kind === "symlink") return { kind: "symlink" as const, target: node.target }
            return { kind: kindOf(node) as "file" | "directory" | "other" }
          }),
        ),

      stat: (path) =>
        Effect.zipRight(
          log("stat", path),
          Effect.suspend(() => {
            const node = this.#nodes.get(path)
            if (node === undefined) return fail("ENOENT", `${path} does not exist`)
            return Effect.succeed(statOf(node))
          }),
        ),

      readdirStat: (path) =>
        Effect.zipRight(
          log("readdir", path),
          Effect.suspend(() => {
            const node = this.#nodes.get(path)
            if (node?.kind !== "directory") return fail("ENOTDIR", `${path} is not a directory`)
            const entries: Array<ScannedEntry> = [...(this.#children.get(path) ?? [])].map((name) => {
              const child = this.#nodes.get(`${path === "/" ? "" : path}/${name}`)!
              return child.kind === "symlink"
                ? { name, stat: statOf(child), target: child.target }
                : { name, stat: statOf(child) }
            })
            return Effect.succeed(entries)
          }),
        ),

      // A node is replaced in one step, so every read is of one version whole: an `expected`
      // content has nothing to shorten here, and what is returned is always what the node holds.
      readFile: (path) =>
        Effect.zipRight(
          log("read", path),
          Effect.suspend(() => {
            const node = this.#nodes.get(path)
            if (node === undefined) return fail("ENOENT", `${path} does not exist`)
            if (node.kind === "symlink") return fail("ELOOP", `${path} is a symlink`)
            if (node.kind !== "file") return fail("EISDIR", `${path} is not a regular file`)
            return Effect.succeed({ content: node.content.slice(), mode: node.mode })
          }),
        ),

      readdir: (path) =>
        Effect.zipRight(
          log("readdir", path),
          Effect.suspend(() => {
            const node = this.#nodes.get(path)
            if (node?.kind !== "directory") return fail("ENOTDIR", `${path} is not a directory`)
            const entries: Array<DirectoryEntry> = [...(this.#children.get(path) ?? [])].map((name) => ({
              name,
              kind: kindOf(this.#nodes.get(`${path === "/" ? "" : path}/${name}`)!),
            }))
            return Effect.succeed(entries)
          }),
        ),

      readlink: (path) =>
        Effect.zipRight(
          log("readlink", path),
          Effect.suspend(() => {
            const node = this.#nodes.get(path)
            return node?.kind === "symlink"
              ? Effect.succeed(node.target)
              : fail("EINVAL", `${path} is not a symlink`)
          }),
        ),
    }
  }

  /** The primitives that change the tree: each replaces or removes a node in one step. */
  #writePrimitives(
    log: AccessLog,
  ): Omit<FileSystemPrimitives, ReadPrimitive | "readdirStatMany" | "readdirStatBeneath"> {
    const now = Clock.currentTimeNanos
    return {
      // A write here replaces the node in one step: it never leaves a temp file behind.
      isPartialWrite: () => false,

      writeFileAtomic: (path, content, mode) =>
        Effect.zipRight(
          log("write", path),
          Effect.flatMap(now, (t) => {
            const parent = this.#nodes.get(parentOf(path))
            if (parent === undefined) return fail("ENOENT", `${parentOf(path)} does not exist`)
            if (parent.kind !== "directory") return fail("ENOTDIR", `${parentOf(path)} is not a directory`)
            if (this.#nodes.get(path)?.kind === "directory") return fail("EISDIR", `${path} is a directory`)
            // A rename puts a new inode in place, as on disk.
            this.#put(path, {
              kind: "file",
              content: content.slice(),
              mode: mode ?? 0o644,
              ...this.#times(t),
            })
            return Effect.void
          }),
        ),

      // Exclusive creation, one access logged per file; nothing to flush in memory.
      createFiles: (files) =>
        Effect.flatMap(now, (t) =>
          Effect.forEach(
            files,
            (file, index) =>
              Effect.zipRight(
                log("create", file.absolute),
                Effect.suspend(() => {
                  const parent = this.#nodes.get(parentOf(file.absolute))
                  if (this.#nodes.has(file.absolute)) {
                    return Effect.fail({ code: "EEXIST", message: `EEXIST: ${file.absolute} exists`, index })
                  }
                  if (parent?.kind !== "directory") {
                    return Effect.fail({
                      code: "ENOENT",
                      message: `ENOENT: ${parentOf(file.absolute)} is not a directory`,
                      index,
                    })
                  }
                  this.#put(file.absolute, {
                    kind: "file",
                    content: file.content.slice(),
                    mode: file.mode,
                    ...this.#times(t),
                  })
                  return Effect.void
                }),
              ),
            { discard: true },
          ),
        ),

      mkdir: (path) =>
        Effect.zipRight(
          log("mkdir", path),
          Effect.flatMap(now, (t) => {
            const existing = this.#nodes.get(path)
            if (existing?.kind === "directory") return Effect.void
            if (existing !== undefined) return fail("EEXIST", `${path} exists`)
            if (this.#nodes.get(parentOf(path))?.kind !== "directory") {
              return fail("ENOENT", `${parentOf(path)} is not a directory`)
            }
            this.#put(path, { kind: "directory", mode: 0o755, ...this.#times(t) })
            return Effect.void
          }),
        ),

      unlink: (path) =>
        Effect.zipRight(
          log("unlink", path),
          Effect.suspend(() => {
            const node = this.#nodes.get(path)
            if (node === undefined) return fail("ENOENT", `${path} does not exist`)
            if (node.kind === "directory") return fail("EISDIR", `${path} is a directory`)
            this.#remove(path)
            return Effect.void
          }),
        ),

      rmdir: (path) =>
        Effect.zipRight(
          log("rmdir", path),
          Effect.suspend(() => {
            const node = this.#nodes.get(path)
            if (node === undefined) return fail("ENOENT", `${path} does not exist`)
            if (node.kind !== "directory") return fail("ENOTDIR", `${path} is not a directory`)
            if ((this.#children.get(path)?.size ?? 0) > 0) return fail("ENOTEMPTY", `${path} is not empty`)
            this.#remove(path)
            return Effect.void
          }),
        ),

      symlink: (path, target) =>
        Effect.zipRight(
          log("symlink", path),
          Effect.flatMap(now, (t) => {
            if (this.#nodes.has(path)) return fail("EEXIST", `${path} exists`)
            if (this.#nodes.get(parentOf(path))?.kind !== "directory") {
              return fail("ENOENT", `${parentOf(path)} is not a directory`)
            }
            this.#put(path, { kind: "symlink", target, ...this.#times(t) })
            return Effect.void
          }),
        ),
    }
  }
}
