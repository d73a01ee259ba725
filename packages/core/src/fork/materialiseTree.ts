/**
 * Materialising an isolated fork's tree: the fork base (`forkBase.ts`) written into a new, empty
 * directory straight from the artifact store. A file whose content the source tree's file is known
 * to hold (the source's latest capture vouches for it by its stat) is first tried as a
 * copy-on-write clone (`Workspaces.clone`, `FICLONE`); the clone is read back and its hash checked,
 * and a clone that does not hash right, or a filesystem that cannot clone, falls back to writing
 * the stored bytes. Never a hard link. Modes and link targets are as recorded; a path the
 * protection policy keeps (the store, `.git`, what the source tree's ignore rules exclude now) is
 * not materialised and is listed. What the fork point's capture left out (`skipped`: ignored build
 * output, `node_modules`, over-size files) is listed too, and copied from the source tree as it is
 * now only when asked (`copyUnrecorded`), through both trees' confined workspaces.
 *
 * Nothing here is journaled: the target is a directory nobody else uses yet. A failure removes
 * what was written (`discardTree`), and the fork commits no child.
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
import { Workspace, type WorkspaceService } from "../ports/Workspace.js"
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

/** Removes what a failed materialisation wrote (files and links, then emptied directories). */
export const discardTree = (target: WorkspaceService, paths: Iterable<WorkspacePath>) =>
  Effect.gen(function* () {
    const directories = new Set<string>()
    for (const path of paths) {
      yield* Effect.either(target.delete(path))
      const parts = path.split("/")
      for (let i = parts.length - 1; i > 0; i--) directories.add(parts.slice(0, i).join("/"))
    }
    const deepestFirst = [...directories].sort((a, b) => b.split("/").length - a.split("/").length)
    for (const dir of deepestFirst) yield* Effect.either(target.removeEmptyDirectory(dir as WorkspacePath))
  })

/** Copies what the base point left out from the source tree as it is now (files, links, directories). */
const copyLeftOut = (
  input: MaterialiseInput,
  made: Set<WorkspacePath>,
  manifest: Map<WorkspacePath, ManifestEntry>,
) =>
  Effect.gen(function* () {
    const copied: Array<string> = []
    const problems: Array<SkippedPath> = []
    const copyPath = (path: WorkspacePath): Effect.Effect<void> =>
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
        const done = yield* Effect.either(
          kind === "symlink"
            ? Effect.flatMap(input.source.readLink(path), (target) =>
                Effect.as(input.target.symlink(path, target), { kind: "link", target } as ManifestEntry),
              )
            : kind === "file"
              ? Effect.flatMap(input.source.read(path), (file) =>
                  Option.isNone(file)
                    ? Effect.succeed(undefined)
                    : Effect.as(
                        input.target.write(path, file.value.content, { mode: file.value.mode }),
                        undefined,
                      ),
                )
              : Effect.succeed(undefined),
        )
        if (Either.isLeft(done)) {
          problems.push({ path, reason: "unreadable", detail: done.left.message })
          return
        }
        made.add(path)
        copied.push(path)
      })
    for (const item of input.leftOut) {
      if (workspacePathProblem(item.path) !== undefined) continue
      yield* copyPath(item.path as WorkspacePath)
    }
    return { copied, problems }
  })

export const materialiseTree = (input: MaterialiseInput) =>
  Effect.gen(function* () {
    const artifacts = yield* ArtifactStore
    const made = new Set<WorkspacePath>()
    const run = Effect.gen(function* () {
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
        const made1 = yield* Effect.either(
          input.workspaces.clone(input.source.root, input.target.root, path, file.mode),
        )
        if (Either.isLeft(made1) || !made1.right) {
          // A filesystem that cannot clone one file cannot clone the next either.
          if (Either.isRight(made1)) canClone = false
          toWrite.push([path, file])
          continue
        }
        made.add(path)
        const back = yield* input.target.read(path)
        if (Option.isSome(back) && hashContent(back.value.content) === file.hash) {
          cloned++
          manifest.set(path, {
            kind: "file",
            hash: file.hash,
            mode: file.mode,
            size: back.value.content.byteLength,
          })
        } else toWrite.push([path, file])
      }
      for (let i = 0; i < toWrite.length; i += BATCH) {
        const batch = toWrite.slice(i, i + BATCH)
        const contents = yield* artifacts.getMany(batch.map(([, f]) => f.hash))
        for (const [j, [path, file]] of batch.entries()) {
          const content = contents[j]!
          made.add(path)
          yield* input.target.write(path, content, { mode: file.mode })
          written++
          manifest.set(path, { kind: "file", hash: file.hash, mode: file.mode, size: content.byteLength })
        }
      }
      for (const [path, target] of links) {
        const linked = yield* Effect.either(input.target.symlink(path, target))
        if (Either.isLeft(linked)) {
          notMaterialised.push({ path, reason: "not_a_regular_file", detail: linked.left.message })
          continue
        }
        made.add(path)
        manifest.set(path, { kind: "link", target })
      }
      const extra = input.copyUnrecorded
        ? yield* copyLeftOut(input, made, manifest)
        : { copied: [] as Array<string>, problems: [] as Array<SkippedPath> }
      return {
        manifest,
        cloned,
        written,
        copied: extra.copied,
        notMaterialised: [...notMaterialised, ...extra.problems],
      } satisfies Materialised
    })
    return yield* Effect.tapErrorCause(run, () => discardTree(input.target, made))
  })
