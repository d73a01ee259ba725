/**
 * The Workspaces port: workspaces other than the host's own, for isolated forks. A host that
 * supports them supplies it (the embedded default does, over the Node workspace); without it an
 * isolated fork refuses (`unavailable`) and a session that has its own tree cannot be worked on.
 *
 * A new tree is made atomically, in three steps:
 * - `prepare` checks where it goes, creating nothing: the target must be absolute, not exist or be
 *   an empty directory, and not be reached through a symlink on the way (so its parent is where it
 *   says it is). Refuses `workspace_refused` (details `{ reason, root }`) otherwise. It names the
 *   private directory beside the target the tree is written into,
 *   `<parent>/.<name>.rewind-<operationId>`.
 * - `stage` creates the target's missing parents and that private directory (exclusively, so two
 *   forks never share one; readable by its owner only while it is filled) and answers a confined
 *   Workspace over it.
 * - `publish` renames the private directory onto the target in one step. Whoever publishes first
 *   wins; a target filled meanwhile (another fork's tree) refuses `workspace_refused` with reason
 *   `taken`, and the private directory is left for the caller to `discard`.
 * `discard` removes a private directory whole (a link in it is removed, never followed);
 * `unpublish` takes back a tree this service published in this process (the target is renamed
 * back aside and removed), for a fork whose commit failed; `inspect` says what a crash left
 * (for `recover`).
 *
 * - `open` gives a confined Workspace over an existing tree, with the store directories that lie
 *   inside it (for the protection policy).
 * - `clone` makes `path` in the target tree a copy-on-write clone of `path` in the source tree
 *   (`FICLONE`), never a hard link: a write through one tree must never change the other. It
 *   answers false when the filesystem cannot clone (nothing is made then); the caller verifies the
 *   clone's content hash before trusting it.
 */
import type { PathRefused, Refused, WorkspaceIoError, WorkspacePath } from "@rewind/contracts"
import { Context, type Effect } from "effect"
import type { WorkspaceService } from "./Workspace.js"

export interface OpenedWorkspace {
  readonly workspace: WorkspaceService
  /** Workspace-relative store directories inside this tree (see `StoreLocation`). */
  readonly storeDirectories: ReadonlyArray<string>
}

/** Where a new tree goes: the target, and the private directory it is written in first. */
export interface StagedTree {
  /** The target directory, absolute, as resolved (no symlink on the way). */
  readonly root: string
  /** `<parent of root>/.<name of root>.rewind-<operationId>`. */
  readonly staging: string
}

/** What is at a staged tree's two places now. */
export interface StagedTreeState {
  readonly staging: "missing" | "present"
  readonly root: "missing" | "empty" | "occupied"
}

export interface WorkspacesService {
  /** The host's own tree (the root of the `Workspace` the host supplies), absolute and resolved. */
  readonly hostRoot: string
  readonly prepare: (
    root: string,
    operationId: string,
  ) => Effect.Effect<StagedTree, Refused | WorkspaceIoError>
  readonly stage: (tree: StagedTree) => Effect.Effect<WorkspaceService, Refused | WorkspaceIoError>
  readonly publish: (tree: StagedTree) => Effect.Effect<void, Refused | WorkspaceIoError>
  /** Removes the private directory whole; false when it was not there. */
  readonly discard: (tree: StagedTree) => Effect.Effect<boolean, WorkspaceIoError>
  /** Takes back a tree published by this service; false (left alone) when the target is not it. */
  readonly unpublish: (tree: StagedTree) => Effect.Effect<boolean, WorkspaceIoError>
  readonly inspect: (tree: StagedTree) => Effect.Effect<StagedTreeState, WorkspaceIoError>
  readonly open: (root: string) => Effect.Effect<OpenedWorkspace, WorkspaceIoError>
  readonly clone: (
    sourceRoot: string,
    targetRoot: string,
    path: WorkspacePath,
    mode: number,
  ) => Effect.Effect<boolean, WorkspaceIoError | PathRefused>
}

export class Workspaces extends Context.Tag("@rewind/core/Workspaces")<Workspaces, WorkspacesService>() {}
