/**
 * The ForkWorkspaceRestore implementation over the Workspace, ArtifactStore and OperationJournal
 * ports: how a fork from a checkpoint (and a rewind by fork) puts files back in the workspace the
 * parent and the child share.
 *
 * Order: check every file first (`checkForkRestore`, which writes nothing): a path the protection
 * policy keeps (the store, `.git`, ignored paths) is unsafe; otherwise a file is safe when it
 * already holds the planned version, or when it still holds exactly what the agent last wrote to
 * it; anything else was changed behind the agent's back and refuses the whole restore
 * (`unsafe_files`), as does a planned version the artifact store cannot give back. Only then does
 * the durable frame every restore shares (`runDurableRestore`) run: rescue point of every target,
 * journal intent, journaled writes that re-check each file's hash right before writing it and
 * compensate on failure, then the caller's commit (the child session), then completion. The fork
 * is committed only after its files are back, and a commit that fails puts them back, so neither a
 * refusal nor a failure leaves a child without its files or files without their child.
 */
import {
  type ContentHash,
  type FileVersion,
  type OperationId,
  refuse,
  type SessionId,
  WorkspacePath,
} from "@rewind/contracts"
import { Effect, Either, Layer, Option, Schema } from "effect"
import { ArtifactStore } from "../ports/ArtifactStore.js"
import { OperationJournal } from "../ports/OperationJournal.js"
import { SessionStore } from "../ports/SessionStore.js"
import { Workspace } from "../ports/Workspace.js"
import { Workspaces } from "../ports/Workspaces.js"
import { runDurableRestore } from "../restore/durableRestore.js"
import type { PlannedWrite } from "../restore/journaledWrites.js"
import { loadFileVersion, versionHash } from "../restore/redo.js"
import { withSessionWorkspace } from "../session/sessionWorkspace.js"
import { hashContent } from "../workspace/contentHash.js"
import { makeProtectionCheck } from "../workspace/protection.js"
import { type ForkRestoreFile, ForkWorkspaceRestore } from "./forkWorkspaceRestoreService.js"

export type ForkRestoreUnsafeReason =
  | "external_modified"
  | "checkpoint_unreadable"
  | "file_read_failed"
  /** Excluded by the ignore rules now in force (the protection policy). */
  | "ignored"
  /** Rewind's own store or a `.git` directory or file (the protection policy). */
  | "protected"
  /** A directory on the way is a symlink: nothing is written through a link. */
  | "symlink_in_path"

export interface ForkRestoreUnsafeFile {
  readonly path: string
  readonly reason: ForkRestoreUnsafeReason
  readonly message: string
  /** What the file holds now (null: missing), when it could be read. */
  readonly currentHash?: ContentHash | null
  /** What the agent last wrote (null: it deleted the file). */
  readonly expectedHash?: ContentHash | null
}

export interface ForkRestoreFileCheck {
  readonly path: WorkspacePath
  /** `unchanged`: the file already holds the planned version and is not written. */
  readonly action: "restored" | "deleted" | "unchanged"
  readonly currentHash: ContentHash | null
  readonly targetHash: ContentHash | null
}

export interface ForkRestoreCheck {
  readonly files: ReadonlyArray<ForkRestoreFileCheck>
  readonly unsafe: ReadonlyArray<ForkRestoreUnsafeFile>
  readonly canApply: boolean
  /** The writes an apply makes, each guarded by the hash the check saw. */
  readonly writes: ReadonlyArray<PlannedWrite>
}

const isWorkspacePath = Schema.is(WorkspacePath)

const modeOf = (version: FileVersion): number | undefined =>
  version._tag === "present" ? version.mode : undefined

/** Checks the planned files against the workspace; reads files and blobs, writes nothing. */
export const checkForkRestore = (files: ReadonlyArray<ForkRestoreFile>) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const checked: Array<ForkRestoreFileCheck> = []
    const unsafe: Array<ForkRestoreUnsafeFile> = []
    const writes: Array<PlannedWrite> = []
    const protectionOf = yield* makeProtectionCheck()
    for (const file of files) {
      if (!isWorkspacePath(file.path)) {
        unsafe.push({
          path: file.path,
          reason: "file_read_failed",
          message: `${JSON.stringify(file.path)} is not a workspace path`,
        })
        continue
      }
      const protection = yield* protectionOf(file.path)
      if (Option.isSome(protection)) {
        unsafe.push({
          path: file.path,
          reason: protection.value.kind === "ignored" ? "ignored" : "protected",
          message: protection.value.message,
        })
        continue
      }
      const current = yield* Effect.either(workspace.read(file.path))
      if (Either.isLeft(current)) {
        unsafe.push({
          path: file.path,
          reason:
            current.left._tag === "PathRefused" && current.left.reason === "symlink_in_path"
              ? "symlink_in_path"
              : "file_read_failed",
          message: `${file.path} cannot be read: ${current.left.message}`,
        })
        continue
      }
      const currentHash = Option.match(current.right, {
        onNone: () => null,
        onSome: (f) => hashContent(f.content),
      })
      const targetHash = versionHash(file.version)
      if (currentHash === targetHash) {
        checked.push({ path: file.path, action: "unchanged", currentHash, targetHash })
        continue
      }
      const expectedHash = file.lastWritten === undefined ? undefined : versionHash(file.lastWritten)
      if (expectedHash === undefined || currentHash !== expectedHash) {
        unsafe.push({
          path: file.path,
          reason: "external_modified",
          message:
            expectedHash === undefined
              ? `${file.path} has no record of what the agent last wrote to it, so its current content cannot be vouched for`
              : `${file.path} was changed after the agent last wrote it (it hashes to ${currentHash ?? "nothing: the file is missing"}, the agent left ${expectedHash ?? "no file"})`,
          currentHash,
          ...(expectedHash === undefined ? {} : { expectedHash }),
        })
        continue
      }
      const content = yield* Effect.either(loadFileVersion(file.version))
      if (Either.isLeft(content)) {
        unsafe.push({
          path: file.path,
          reason: "checkpoint_unreadable",
          message: `the content ${targetHash} of ${file.path} (checkpoint ${file.checkpointId}) cannot be read: ${content.left.message}`,
          currentHash,
        })
        continue
      }
      const mode = modeOf(file.version)
      checked.push({
        path: file.path,
        action: content.right === null ? "deleted" : "restored",
        currentHash,
        targetHash,
      })
      writes.push({
        path: file.path,
        content: content.right,
        expectedCurrentHash: currentHash,
        ...(mode === undefined ? {} : { mode }),
      })
    }
    return { files: checked, unsafe, canApply: unsafe.length === 0, writes } satisfies ForkRestoreCheck
  })

export interface ForkRestoreApplyInput {
  /** The session the operation is journaled under (the workspace's owner: the fork's parent). */
  readonly sessionId: SessionId
  readonly operationId: OperationId
  readonly files: ReadonlyArray<ForkRestoreFile>
}

/**
 * Checks, then writes the files as one durable operation and runs `commit` once they are all
 * back. Refuses `unsafe_files` (with the check as details) before anything is written; refuses
 * `unavailable` when a write failed and every earlier one was undone.
 */
export const applyForkRestore = <A, E, R>(input: ForkRestoreApplyInput, commit: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const check = yield* checkForkRestore(input.files)
    if (!check.canApply) {
      return yield* refuse(
        "unsafe_files",
        `cannot restore the workspace: ${check.unsafe.map((u) => `${u.path} (${u.reason})`).join(", ")}; nothing was written and no fork was created`,
        { unsafe: check.unsafe, files: check.files },
      )
    }
    const applied = yield* runDurableRestore(
      {
        sessionId: input.sessionId,
        operationId: input.operationId,
        kind: "fork_restore",
        writes: check.writes,
      },
      () => commit,
    )
    if (applied._tag === "RolledBack") {
      return yield* refuse(
        "unavailable",
        `the workspace restore failed: ${applied.message}; every file already written was put back, and no fork was created`,
        { operationId: input.operationId, step: applied.step, path: applied.path },
      )
    }
    return applied.committed
  })

/**
 * The ForkWorkspaceRestore service over the Workspace, ArtifactStore and OperationJournal in
 * context. A parent that works in a tree of its own (an isolated fork) is restored in that tree,
 * opened through the host's `Workspaces` (read from the context the layer is built in).
 */
export const layerForkWorkspaceRestore: Layer.Layer<
  ForkWorkspaceRestore,
  never,
  Workspace | ArtifactStore | OperationJournal | SessionStore
> = Layer.effect(
  ForkWorkspaceRestore,
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const artifacts = yield* ArtifactStore
    const journal = yield* OperationJournal
    const sessions = yield* SessionStore
    const workspaces = yield* Effect.serviceOption(Workspaces)
    return {
      restore: (request, commit) => {
        const restore = applyForkRestore(
          { sessionId: request.sessionId, operationId: request.operationId, files: request.files },
          commit,
        )
        const inTree = withSessionWorkspace(request.sessionId, restore).pipe(
          Effect.provideService(SessionStore, sessions),
        )
        return (
          Option.isSome(workspaces) ? Effect.provideService(inTree, Workspaces, workspaces.value) : inTree
        ).pipe(
          Effect.provideService(Workspace, workspace),
          Effect.provideService(ArtifactStore, artifacts),
          Effect.provideService(OperationJournal, journal),
        )
      },
    }
  }),
)
