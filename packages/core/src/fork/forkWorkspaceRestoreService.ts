/**
 * The ForkWorkspaceRestore port: writes back the file versions a fork from a checkpoint planned
 * (`planForkRestore`) into the workspace the parent and the child share. Core decides what to
 * write; an implementation does the writing, all or nothing, inside the workspace root, and
 * refuses (`unsafe_files`) rather than overwrite a file that changed behind the agent's back.
 * `layerForkWorkspaceRestore` (forkWorkspaceRestore.ts) is the implementation over the Workspace,
 * ArtifactStore and OperationJournal ports.
 *
 * The child's commit is handed to `restore` so it runs inside the restore's durable frame: the
 * check comes first (an unsafe file refuses before anything is written or committed), the files
 * are written next, the child is committed once they are all back, and a commit that fails puts
 * the files back. A refused or failed restore therefore never leaves a child behind.
 */
import type {
  ArtifactCorrupt,
  ArtifactNotFound,
  ArtifactStoreError,
  FileVersion,
  OperationId,
  PathRefused,
  PlannedFileRestore,
  Refused,
  SessionId,
  StoreError,
  UnrecoverableRewindError,
  WorkspaceIoError,
} from "@rewind/contracts"
import { Context, type Effect } from "effect"

export interface ForkRestoreFile extends PlannedFileRestore {
  /** What the agent last wrote to this path (the newest checkpoint's after-version), if known. */
  readonly lastWritten: FileVersion | undefined
}

export interface ForkRestoreRequest {
  /** The session whose workspace is restored (the fork's parent). */
  readonly sessionId: SessionId
  /** The child the fork will create once the files are back. */
  readonly childSessionId: SessionId
  readonly operationId: OperationId
  readonly files: ReadonlyArray<ForkRestoreFile>
}

export type ForkRestoreError =
  | Refused
  | WorkspaceIoError
  | PathRefused
  | ArtifactNotFound
  | ArtifactCorrupt
  | ArtifactStoreError
  | UnrecoverableRewindError
  | StoreError

export interface ForkWorkspaceRestoreService {
  /** Checks every file, writes them, then runs `commit`; refuses `unsafe_files` writing nothing. */
  readonly restore: <A, E, R>(
    request: ForkRestoreRequest,
    commit: Effect.Effect<A, E, R>,
  ) => Effect.Effect<A, ForkRestoreError | E, R>
}

export class ForkWorkspaceRestore extends Context.Tag("@rewind/core/ForkWorkspaceRestore")<
  ForkWorkspaceRestore,
  ForkWorkspaceRestoreService
>() {}
