/**
 * Materialising an isolated fork's tree: the fork base (`forkBase.ts`) written into the fork's
 * private staging directory (`Workspaces.stage`: new, empty, nobody else's) straight from the
 * artifact store, with the bulk `Workspace.createFiles` (no temp file and rename per file). A file whose content the source tree's file is known
 * to hold (the source's latest capture vouches for it by its stat) is first tried as a
 * copy-on-write clone (`Workspaces.clone`, `FICLONE`); the clone is read back and its hash checked,
 * and a clone that does not hash right, or a filesystem that cannot clone, falls back to writing
 * the stored bytes. Never a hard link. Modes and link targets are as recorded; a path the
 * protection policy keeps (the store, `.git`, what the source tree's ignore rules exclude now) is
 * not materialised and is listed. What the fork point's capture left out (`skipped`: ignored build
 * output, `node_modules`, over-size files) is listed too, and copied from the source tree as it is
 * now only when asked (`copyUnrecorded`), through both trees' confined workspaces.
 *
 * Links are made last, after every file (the base's and the copied ones), so no file is ever
 * created under a link. Nothing here is journaled file by file: the caller journals the whole
 * staging directory, removes it on failure, and renames it into place once this succeeded
 * (`isolatedFork.ts`).
 */
import {
  type ContentHash,
  type PointCaptured,
  type SkippedPath,
  type WorkspacePath,
  workspacePathProblem,
} from "@rewind/contracts"
import { Effect, Either, Option } from "effect"
import { ArtifactStore } from "../ports/ArtifactStore.js"
import { type NewFile, Workspace, type WorkspaceError, type WorkspaceService } from "../ports/Workspace.js"
import type { WorkspacesService } from "../ports/Workspaces.js"
import { loadStatCache, sameStat } from "../snapshot/capturePoint.js"
import type { ManifestEntry } from "../snapshot/pointManifest.js"
import { hashContent } from "../workspace/contentHash.js"
import { checkProtection, protectionByName } from "../workspace/protection.js"
import type { BaseEntry } from "./forkBase.js"

export interface MaterialiseInput {
  readonly workspaces: WorkspacesService
  /** The source tree (the parent's), in which the ignore rules are read and clones are made from. */
  readonly source: WorkspaceService
  /** The source tree's latest turn point: its stat cache vouches for unchanged source files. */
  readonly sourceLatest: PointCaptured | undefined
  /** The staging directory's workspace: new and empty. */
  readonly target: WorkspaceService
  readonly base: ReadonlyMap<WorkspacePath, BaseEntry>
  /** What the base point's capture left out. */
  readonly leftOut: ReadonlyArray<SkippedPath>
  readonly copyUnrecorded: boolean
}

export interface Materialised {
  /** The tree as written (files with sizes, links): the child's base point. */
  readonly manifest: ReadonlyMap<WorkspacePath, ManifestEntry>
  readonly cloned: number
  readonly written: number
  readonly copied: ReadonlyArray<string>
  readonly notMaterialised: ReadonlyArray<SkippedPath>
}

const BATCH = 256

const byPath = <V>(entries: Iterable<readonly [WorkspacePath, V]>) =>
  [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))

/** Files a copy holds before creating them in one bulk call (count, bytes). */
const COPY_BATCH = { files: 256, bytes: 8 * 1024 * 1024 }

/**
 * Copies what the base point left out from the source tree as it is now: files (in batches) as it
 * goes, links only collected, for the caller to make last.
 */
const copyLeftOut = (input: MaterialiseInput, manifest: Map<WorkspacePath, ManifestEntry>) =>
  Effect.gen(function* () {
    const copied: Array<string> = []
    const problems: Array<SkippedPath> = []
    const links: Array<readonly [WorkspacePath, string]> = []
    let pending: Array<NewFile> = []
    let pendingBytes = 0
    const flush = Effect.suspend(() => {
      const batch = pending
      pending = []
      pendingBytes = 0
      return batch.length === 0 ? Effect.void : input.target.createFiles(batch)
    })
    const copyPath = (path: WorkspacePath): Effect.Effect<void, WorkspaceError> =>
      Effect.gen(function* () {
        if (protectionByName(path) !== undefined || manifest.has(path)) return
        const stat = yield* Effect.either(input.source.stat(path))
        if (Either.isLeft(stat) || Option.isNone(stat.right)) return
        const kind = stat.right.value.kind
        if (kind === "directory") {
          const entries = yield* Effect.either(input.source.scanDirectory(path))
          if (Either.isLeft(entries)) {
            problems.push({ path, reason: "unreadable", detail: entries.left.message })
            return
          }
          for (const e of entries.right) {
            if (e.unsupportedName === true) continue
            yield* copyPath(`${path}/${e.name}` as WorkspacePath)
          }
          return
        }
        if (kind === "symlink") {
          const target = yield* Effect.either(input.source.readLink(path))
          if (Either.isLeft(target)) {
            problems.push({ path, reason: "unreadable", detail: target.left.message })
            return
          }
          links.push([path, target.right])
          return
        }
        if (kind !== "file") return
        const file = yield* Effect.either(input.source.read(path))
        if (Either.isLeft(file)) {
          problems.push({ path, reason: "unreadable", detail: file.left.message })
          return
        }
        if (Option.isNone(file.right)) return
        pending.push({ path, content: file.right.value.content, mode: file.right.value.mode })
        pendingBytes += file.right.value.content.byteLength
        copied.push(path)
        if (pending.length >= COPY_BATCH.files || pendingBytes >= COPY_BATCH.bytes) yield* flush
      })
    for (const item of input.leftOut) {
      if (workspacePathProblem(item.path) !== undefined) continue
      yield* copyPath(item.path as WorkspacePath)
    }
    yield* flush
    return { copied, problems, links }
  })

export const materialiseTree = (input: MaterialiseInput) =>
  Effect.gen(function* () {
    const artifacts = yield* ArtifactStore
    const notMaterialised: Array<SkippedPath> = []
    // The protection policy, with the source tree's ignore rules as they are now.
    const protectedPaths = yield* checkProtection(input.base.keys()).pipe(
      Effect.provideService(Workspace, input.source),
    )
    for (const p of protectedPaths.values()) {
      notMaterialised.push({ path: p.path, reason: "protected", detail: p.message })
    }
    const cache = yield* loadStatCache(input.sourceLatest?.statCacheHash)
    const manifest = new Map<WorkspacePath, ManifestEntry>()
    const files: Array<readonly [WorkspacePath, { hash: ContentHash; mode: number }]> = []
    const links: Array<readonly [WorkspacePath, string]> = []
    for (const [path, entry] of byPath(input.base)) {
      if (protectedPaths.has(path)) continue
      if (entry.kind === "file") files.push([path, entry])
      else links.push([path, entry.target])
    }
    let cloned = 0
    let written = 0
    let canClone = true
    const toWrite: Array<readonly [WorkspacePath, { hash: ContentHash; mode: number }]> = []
    for (const [path, file] of files) {
      const cached = cache.get(path)
      if (!canClone || cached === undefined || cached.hash !== file.hash) {
        toWrite.push([path, file])
        continue
      }
      // Only a source file whose stat the capture vouched for is a candidate; the clone itself
      // is checked below, so a file changed since is caught whatever its stat says.
      const stat = yield* Effect.either(input.source.stat(path))
      if (Either.isLeft(stat) || Option.isNone(stat.right) || !sameStat(cached, stat.right.value)) {
        toWrite.push([path, file])
        continue
      }
      const clone = yield* Effect.either(
        input.workspaces.clone(input.source.root, input.target.root, path, file.mode),
      )
      if (Either.isLeft(clone) || !clone.right) {
        // A filesystem that cannot clone one file cannot clone the next either.
        if (Either.isRight(clone)) canClone = false
        toWrite.push([path, file])
        continue
      }
      const back = yield* input.target.read(path)
      if (Option.isSome(back) && hashContent(back.value.content) === file.hash) {
        cloned++
        manifest.set(path, {
          kind: "file",
          hash: file.hash,
          mode: file.mode,
          size: back.value.content.byteLength,
        })
      } else {
        // The source changed under the clone: the stored bytes go there instead.
        yield* input.target.delete(path)
        toWrite.push([path, file])
      }
    }
    for (let i = 0; i < toWrite.length; i += BATCH) {
      const batch = toWrite.slice(i, i + BATCH)
      const contents = yield* artifacts.getMany(batch.map(([, f]) => f.hash))
      yield* input.target.createFiles(
        batch.map(([path, file], j) => ({ path, content: contents[j]!, mode: file.mode })),
      )
      for (const [j, [path, file]] of batch.entries()) {
        written++
        manifest.set(path, { kind: "file", hash: file.hash, mode: file.mode, size: contents[j]!.byteLength })
      }
    }
    for (const [path, target] of links) manifest.set(path, { kind: "link", target })
    const extra = input.copyUnrecorded
      ? yield* copyLeftOut(input, manifest)
      : { copied: [] as Array<string>, problems: [] as Array<SkippedPath>, links: [] }
    // Last, once every file is there: the links, the base's, then the copied ones.
    for (const [path, target] of links) {
      const linked = yield* Effect.either(input.target.symlink(path, target))
      if (Either.isLeft(linked)) {
        manifest.delete(path)
        notMaterialised.push({ path, reason: "not_a_regular_file", detail: linked.left.message })
      }
    }
    const copied = [...extra.copied]
    for (const [path, target] of extra.links) {
      const linked = yield* Effect.either(input.target.symlink(path, target))
      if (Either.isLeft(linked))
        extra.problems.push({ path, reason: "unreadable", detail: linked.left.message })
      else copied.push(path)
    }
    return {
      manifest,
      cloned,
      written,
      copied,
      notMaterialised: [...notMaterialised, ...extra.problems],
    } satisfies Materialised
  })
