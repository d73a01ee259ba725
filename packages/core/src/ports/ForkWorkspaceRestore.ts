/**
 * The ForkWorkspaceRestore port: writes back the file versions a fork from a checkpoint planned
 * (`planForkRestore`) into the workspace the parent and the child share. Core decides what to
 * write; an implementation over the Workspace and ArtifactStore ports does the writing, all or
 * nothing, inside the workspace root, and refuses (`unsafe_files`) rather than overwrite a file
 * that changed behind the agent's back.
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
  readonly restore: (request: ForkRestoreRequest) => Effect.Effect<void, ForkRestoreError>
}

export class ForkWorkspaceRestore extends Context.Tag("@rewind/core/ForkWorkspaceRestore")<
  ForkWorkspaceRestore,
  ForkWorkspaceRestoreService
>() {}
