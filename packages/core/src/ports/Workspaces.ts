/**
 * The Workspaces port: workspaces other than the host's own, for isolated forks. A host that
 * supports them supplies it (the embedded default does, over the Node workspace); without it an
 * isolated fork refuses (`unavailable`) and a session that has its own tree cannot be worked on.
 *
 * - `prepare` makes the directory a new tree goes in: it must be absolute, not exist or be an empty
 *   directory, and lie outside the host's tree (nor contain it), nor be reached through a symlink
 *   on the way. Refuses `workspace_refused` (details `{ reason, root }`) otherwise, touching nothing.
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

export interface WorkspacesService {
  /** The host's own tree (the root of the `Workspace` the host supplies), absolute and resolved. */
  readonly hostRoot: string
  readonly prepare: (root: string) => Effect.Effect<string, Refused | WorkspaceIoError>
  readonly open: (root: string) => Effect.Effect<OpenedWorkspace, WorkspaceIoError>
  readonly clone: (
    sourceRoot: string,
    targetRoot: string,
    path: WorkspacePath,
    mode: number,
  ) => Effect.Effect<boolean, WorkspaceIoError | PathRefused>
}

export class Workspaces extends Context.Tag("@rewind/core/Workspaces")<Workspaces, WorkspacesService>() {}
