/**
 * The confined workspace's writes: writing and creating files, deleting, removing an empty
 * directory, discarding an interrupted write's temp files, making a symlink. Each resolves its path
 * through the walk first (`resolveIn`), so a write never goes through a symlink; a write keeps the
 * file's mode unless told one, a new file's parents are made one level at a time under the walked
 * parent, and a delete removes a file or a link itself, never a directory or a link's target.
 */
import { aFileKind, type DirectoryEntry, WorkspaceIoError, type WorkspacePath } from "@rewind/contracts"
import { Effect, Either } from "effect"
import type { NewFile, WorkspaceWriteOptions } from "../ports/Workspace.js"
import {
  type ConfinedPath,
  checkRootedLength,
  checkSymlinkTarget,
  checkWorkspacePath,
  type ProbedEntry,
} from "./confinedPathResolution.js"
import { type ConfinedRoot, resolveIn } from "./confinedReads.js"
import { badMode, ioError, notRegular, type Operation } from "./filesystemPrimitives.js"

const createParents = (at: ConfinedRoot, target: ConfinedPath, path: string, operation: Operation) =>
  Effect.gen(function* () {
    let dir = target.existingParent
    for (const name of target.missing.slice(0, -1)) {
      dir = `${dir === "/" ? "" : dir}/${name}`
      yield* Effect.mapError(at.fs.mkdir(dir), ioError(operation, path))
    }
    return `${dir === "/" ? "" : dir}/${target.missing.at(-1)!}`
  })

export const writePath = (
  at: ConfinedRoot,
  path: string,
  content: Uint8Array,
  options: WorkspaceWriteOptions | undefined,
) =>
  Effect.gen(function* () {
    const target = yield* resolveIn(at, path, "write", "refuse")
    const wrongMode = badMode(path, options?.mode)
    if (wrongMode !== undefined) return yield* wrongMode
    switch (target.kind) {
      case "missing": {
        const absolute = yield* createParents(at, target, path, "write")
        return yield* Effect.mapError(
          at.fs.writeFileAtomic(absolute, content, options?.mode),
          ioError("write", path),
        )
      }
      case "file": {
        const mode =
          options?.mode ?? (yield* Effect.mapError(at.fs.stat(target.absolute), ioError("write", path))).mode
        return yield* Effect.mapError(
          at.fs.writeFileAtomic(target.absolute, content, mode),
          ioError("write", path),
        )
      }
      default:
        return yield* notRegular(path, target.kind, "write")
    }
  })

/**
 * `createFiles`: every path checked as data first, each distinct parent directory resolved once
 * (the walk refuses a symlink on the way) and made where missing, then the files handed to the
 * primitive in one batch. The files' own names are not probed: the primitive creates each
 * exclusively, so whatever is there (a file, a planted link) fails it with `EEXIST`.
 */
export const createFiles = (at: ConfinedRoot, files: ReadonlyArray<NewFile>) =>
  Effect.gen(function* () {
    const { root, fs } = at
    const seen = new Map<string, ProbedEntry>()
    const parents = new Map<string, string>()
    const made: Array<string> = []
    const batch: Array<{ absolute: string; content: Uint8Array; mode: number }> = []
    for (const file of files) {
      const segments = yield* checkWorkspacePath(file.path)
      yield* checkRootedLength(root, file.path, segments)
      const wrongMode = badMode(file.path, file.mode)
      if (wrongMode !== undefined) return yield* wrongMode
      const cut = file.path.lastIndexOf("/")
      const parent = cut === -1 ? "" : file.path.slice(0, cut)
      let absoluteParent = parent === "" ? root : parents.get(parent)
      if (absoluteParent === undefined) {
        const target = yield* resolveIn(at, parent, "write", "refuse", seen)
        if (target.kind === "missing") {
          let dir = target.existingParent
          for (const name of target.missing) {
            dir = `${dir === "/" ? "" : dir}/${name}`
            yield* Effect.mapError(fs.mkdir(dir), ioError("write", file.path))
            seen.set(dir, { kind: "directory" })
            made.push(dir)
          }
          absoluteParent = dir
        } else if (target.kind === "directory") absoluteParent = target.absolute
        else {
          return yield* new WorkspaceIoError({
            operation: "write",
            path: file.path,
            code: "ENOTDIR",
            message: `${JSON.stringify(parent)} is ${aFileKind(target.kind)}, so ${JSON.stringify(file.path)} cannot be created`,
          })
        }
        parents.set(parent, absoluteParent)
      }
      batch.push({
        absolute: `${absoluteParent === "/" ? "" : absoluteParent}/${segments.at(-1)!}`,
        content: file.content,
        mode: file.mode,
      })
    }
    if (batch.length === 0) return
    yield* Effect.mapError(fs.createFiles(batch, made), (failure) =>
      ioError("write", files[failure.index ?? 0]?.path ?? ".")(failure),
    )
  })

export const deletePath = (at: ConfinedRoot, path: string) =>
  Effect.gen(function* () {
    const target = yield* resolveIn(at, path, "delete", "report")
    switch (target.kind) {
      case "missing":
        return false
      case "file":
      case "symlink":
        yield* Effect.mapError(at.fs.unlink(target.absolute), ioError("delete", path))
        return true
      default:
        return yield* notRegular(path, target.kind, "delete")
    }
  })

export const removeEmptyDirectory = (at: ConfinedRoot, path: string) =>
  Effect.gen(function* () {
    const target = yield* resolveIn(at, path, "delete", "report")
    if (target.kind !== "directory") return false
    const removed = yield* Effect.either(at.fs.rmdir(target.absolute))
    if (Either.isRight(removed)) return true
    // Not empty (something else lives there now) or gone already: left as it is.
    if (removed.left.code === "ENOTEMPTY" || removed.left.code === "EEXIST" || removed.left.code === "ENOENT")
      return false
    return yield* Effect.fail(ioError("delete", path)(removed.left))
  })

export const discardPartialWrites = (at: ConfinedRoot, path: string) =>
  Effect.gen(function* () {
    const { root, fs } = at
    // The path itself may be anything (a link is fine: only its directory is listed), but the
    // directories on the way are real ones.
    const target = yield* resolveIn(at, path, "delete", "report")
    // A write's temp file sits next to the file it writes.
    if (target.missing.length > 1) return []
    const absolute =
      target.missing.length === 1 ? `${target.existingParent}/${target.missing[0]}` : target.absolute
    const cut = absolute.lastIndexOf("/")
    const directory = absolute.slice(0, Math.max(1, cut))
    const name = absolute.slice(cut + 1)
    const relativeDirectory = target.relative.includes("/")
      ? target.relative.slice(0, target.relative.lastIndexOf("/") + 1)
      : ""
    // Listed beneath the root where the primitive can (the kernel refuses a link swapped in on
    // the way), by path otherwise; every removal goes through `unlink` either way.
    const beneath =
      fs.readdirStatBeneath === undefined
        ? undefined
        : (yield* fs.readdirStatBeneath(root, [relativeDirectory.slice(0, -1)])).listings[0]
    const entries: ReadonlyArray<DirectoryEntry> =
      beneath?.flatMap((e) => (e.unsupportedName === true ? [] : [{ name: e.name, kind: e.stat.kind }])) ??
      (yield* Effect.mapError(fs.readdir(directory), ioError("delete", path)))
    const removed: Array<WorkspacePath> = []
    for (const entry of entries) {
      if (entry.kind !== "file" || !fs.isPartialWrite(entry.name, name)) continue
      yield* Effect.mapError(
        fs.unlink(`${directory === "/" ? "" : directory}/${entry.name}`),
        ioError("delete", path),
      )
      removed.push(`${relativeDirectory}${entry.name}` as WorkspacePath)
    }
    return removed
  })

export const makeSymlink = (at: ConfinedRoot, path: string, linkTarget: string) =>
  Effect.gen(function* () {
    const target = yield* resolveIn(at, path, "symlink", "report")
    if (target.kind !== "missing") {
      return yield* new WorkspaceIoError({
        operation: "symlink",
        path,
        code: "EEXIST",
        message: `${JSON.stringify(path)} already exists`,
      })
    }
    yield* checkSymlinkTarget(path, target.relative.split("/").slice(0, -1), linkTarget)
    const absolute = yield* createParents(at, target, path, "symlink")
    return yield* Effect.mapError(at.fs.symlink(absolute, linkTarget), ioError("symlink", path))
  })
