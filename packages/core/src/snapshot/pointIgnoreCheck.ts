/**
 * The ignore rules a tree was captured under, applied to paths it does not hold: whether such a
 * path was excluded by them (and so may have existed, uncaptured) or simply was not there. A path
 * a later point holds and an earlier one lacks is not proof it was created in between when the
 * earlier point's rules ignored it: an agent that takes `.env` or `*.log` out of `.gitignore` makes
 * files that existed all along appear in the next point, and "restore as before" used to delete
 * them (the user's `.env` among them).
 *
 * The decisions are the scan's own (`makeIgnoreCheck`) over a Workspace that answers from the
 * manifest: the ignore files it holds (`.gitignore`, `.rewindignore` at any depth; read from the
 * artifact store) are the tree's rules. What lies outside the root — the repository's
 * `info/exclude`, the `.gitignore` files above a subdirectory root, what git tracks — is not in a
 * manifest and is taken from the repository as it is now.
 *
 * Invariant: conservative. When an ignore file of the manifest cannot be read back from the store,
 * no decision is trusted: every path is answered "may have been ignored".
 */
import type { FileStat, WorkspacePath } from "@rewind/contracts"
import { nameOf, WorkspaceIoError } from "@rewind/contracts"
import { Effect, Either, Option } from "effect"
import { ArtifactStore } from "../ports/ArtifactStore.js"
import { Workspace, type WorkspaceService } from "../ports/Workspace.js"
import { makeIgnoreCheck } from "../workspace/ignoreCheck.js"
import { IGNORE_FILES } from "../workspace/ignoreRules.js"
import type { Manifest } from "./pointManifest.js"

/** Why a path may have been left out by a tree's rules: the directory whose rules exclude it. */
export interface IgnoredBy {
  /** The directory whose ignore rules (or skip list) exclude the path; "." for the root. */
  readonly at: string
  readonly reason: "ignored"
}

const NO_TIME = 0n

/**
 * Whether `path` is an ignore file (`.gitignore`, `.rewindignore`, at any depth): the only entries
 * of a manifest `ignoredInTree` reads, so a caller may hand it a map of those alone.
 */
export const isIgnoreFile = (path: string): boolean => IGNORE_FILES.includes(nameOf(path))

/**
 * Of `paths` (ones `manifest` does not hold), those the rules of the tree it describes excluded,
 * each with the directory whose rules did. See the header.
 */
export const ignoredInTree = (manifest: Manifest, paths: ReadonlyArray<WorkspacePath>) =>
  Effect.gen(function* () {
    const found = new Map<WorkspacePath, IgnoredBy>()
    // Nothing to decide: the repository around the root (its index, its outer rules) is not read.
    if (paths.length === 0) return found as ReadonlyMap<WorkspacePath, IgnoredBy>
    const workspace = yield* Workspace
    const artifacts = yield* ArtifactStore
    let unreadable: string | undefined
    // What the ignore check stats: an ignore file's kind and size (a linked one is refused, as a
    // scan refuses it) and a directory's `.git` (never in a manifest). No time is known or needed.
    const statOf = (path: string): Option.Option<FileStat> => {
      const entry = manifest.get(path as WorkspacePath)
      if (entry === undefined || entry.kind === "tombstone") return Option.none()
      const [kind, size, mode] =
        entry.kind === "file"
          ? (["file", entry.size, entry.mode] as const)
          : (["symlink", entry.target.length, 0o777] as const)
      return Option.some({ kind, size, mode, mtimeNs: NO_TIME, ctimeNs: NO_TIME, inode: 0n })
    }
    const asCaptured: WorkspaceService = {
      ...workspace,
      stat: (path) => Effect.succeed(statOf(path)),
      statMany: (many) => Effect.succeed(many.map((path) => Either.right(statOf(path)))),
      read: (path) => {
        const entry = manifest.get(path)
        if (entry?.kind !== "file") return Effect.succeed(Option.none())
        return artifacts.get(entry.hash).pipe(
          Effect.map((content) => Option.some({ content, mode: entry.mode })),
          Effect.mapError((error) => {
            unreadable ??= path
            return new WorkspaceIoError({ operation: "read", path, message: error.message })
          }),
        )
      },
    }
    yield* Effect.gen(function* () {
      const check = yield* makeIgnoreCheck()
      for (const path of paths) {
        const exclusion = yield* check(path)
        if (Option.isNone(exclusion)) continue
        const by = exclusion.value
        const at = by.by === "rules" ? by.rulesOf : by.directory
        found.set(path, { at: at === "" ? "." : at, reason: "ignored" })
      }
    }).pipe(Effect.provideService(Workspace, asCaptured))
    // A rule file that could not be read back: no decision above can be trusted.
    if (unreadable !== undefined)
      for (const path of paths) found.set(path, { at: unreadable, reason: "ignored" })
    return found as ReadonlyMap<WorkspacePath, IgnoredBy>
  })
