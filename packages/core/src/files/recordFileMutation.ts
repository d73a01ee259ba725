/**
 * Recording a checkpoint for one successful file mutation (a Write, an Edit, any fs-level write
 * the host observed). The before and after content and a structured patch go to the artifact
 * store, then `CheckpointCreated` is appended, anchored to the user message of the turn.
 *
 * Paths the protection policy keeps (Rewind's store, `.git`, ignored paths) are refused with the
 * `protected` warning: nothing would ever write them back.
 *
 * The tool already succeeded when this runs, so recording must never fail the host: every problem
 * (bad input, a store that cannot take the content, a session that moved on too often) comes back
 * as a warning and no checkpoint is made. Blobs written before such a failure are left for GC.
 */
import {
  Checkpoint,
  CheckpointCreated,
  type CheckpointId,
  type FileVersion,
  type MessageId,
  type SessionId,
  type TurnId,
  VersionConflict,
  WorkspacePath,
} from "@rewind/contracts"
import { Cause, Data, Effect, Either, Option, Schema } from "effect"
import { ArtifactStore } from "../ports/ArtifactStore.js"
import { IdGenerator } from "../ports/IdGenerator.js"
import type { SessionStore } from "../ports/SessionStore.js"
import { Workspace } from "../ports/Workspace.js"
import { appendDecided, loadSession, retryOnVersionConflict } from "../session/loadSession.js"
import { sameBytes, toBytes } from "../workspace/contentHash.js"
import { makeProtectionCheck } from "../workspace/protection.js"
import { diffMutation } from "./checkpointContent.js"
import { FileRewindSettings } from "./fileRewindSettings.js"

export interface FileMutationInput {
  readonly sessionId: SessionId
  readonly turnId: TurnId
  /** The file's path relative to the workspace root. */
  readonly path: string
  readonly toolName: string
  /** The content before the tool ran; null when the file did not exist. */
  readonly before: Uint8Array | string | null
  /** The content the tool left; null when it deleted the file. */
  readonly after: Uint8Array | string | null
  readonly toolMessageId?: MessageId
  readonly beforeMode?: number
  readonly afterMode?: number
}

export type FileMutationWarningReason =
  | "invalid_input"
  | "protected"
  | "path_refused"
  | "unchanged"
  | "session_unavailable"
  | "turn_not_found"
  | "content_not_stored"
  | "checkpoint_not_stored"
  | "internal_error"
  /** A checkpoint from a write intent (checkpointFromIntent.ts) found no intent naming the path. */
  | "intent_not_found"

export interface FileMutationWarning {
  readonly reason: FileMutationWarningReason
  readonly message: string
}

export type FileMutationResult =
  | { readonly recorded: true; readonly checkpoint: Checkpoint }
  | { readonly recorded: false; readonly warning: FileMutationWarning }

const warn = (reason: FileMutationWarningReason, message: string): FileMutationResult => ({
  recorded: false,
  warning: { reason, message },
})

/** An append the store refused for another reason than a conflict: not retried. */
class StoreRefused extends Data.TaggedError("StoreRefused")<{
  readonly error: { readonly message: string }
}> {}

const validMode = (mode: number | undefined): mode is number =>
  mode !== undefined && Number.isInteger(mode) && mode >= 0 && mode <= 0o7777

const record = (input: FileMutationInput) =>
  Effect.gen(function* () {
    const path = Schema.decodeUnknownEither(WorkspacePath)(input.path)
    if (Either.isLeft(path)) {
      return warn("invalid_input", `no checkpoint for ${JSON.stringify(input.path)}: not a workspace path`)
    }
    // The protection policy: the store, `.git` and ignored paths are never recorded (a checkpoint
    // is a promise to write the path back, and those are never written).
    const protection = yield* (yield* makeProtectionCheck())(path.right)
    if (Option.isSome(protection)) {
      return warn("protected", `no checkpoint for ${input.path}: ${protection.value.message}`)
    }
    // A path the workspace refuses (through a symlink, out of the root, too long once rooted) could
    // never be written back: no checkpoint promises it.
    const reachable = yield* Effect.either((yield* Workspace).stat(path.right))
    if (Either.isLeft(reachable) && reachable.left._tag === "PathRefused") {
      return warn("path_refused", `no checkpoint for ${input.path}: ${reachable.left.message}`)
    }
    if (typeof input.toolName !== "string" || input.toolName.length === 0) {
      return warn("invalid_input", "no checkpoint: the tool name is empty")
    }
    if (input.before === null && input.after === null) {
      return warn(
        "invalid_input",
        `no checkpoint for ${input.path}: neither before nor after content was given`,
      )
    }
    const before = input.before === null ? null : toBytes(input.before)
    const after = input.after === null ? null : toBytes(input.after)
    if (before !== null && after !== null && sameBytes(before, after)) {
      return warn("unchanged", `no checkpoint for ${input.path}: the content did not change`)
    }

    const settings = yield* FileRewindSettings
    const diff = diffMutation(path.right, before, after, settings.maxPatchBytes)
    const artifacts = yield* ArtifactStore
    // One batch: a store with transactions commits the three blobs at once.
    const contents = [before, after, diff.patch === undefined ? null : toBytes(JSON.stringify(diff.patch))]
    const present = contents.filter((c): c is Uint8Array => c !== null)
    const stored = yield* Effect.either(artifacts.putMany(present))
    if (Either.isLeft(stored)) {
      return warn(
        "content_not_stored",
        `no checkpoint for ${input.path}: its content could not be stored (${stored.left.message})`,
      )
    }
    const hashes = [...stored.right]
    const [beforeHash, afterHash, patchHash] = contents.map((c) => (c === null ? undefined : hashes.shift()))
    const version = (hash: typeof beforeHash, mode: number | undefined): FileVersion =>
      hash === undefined
        ? { _tag: "absent" }
        : validMode(mode)
          ? { _tag: "present", hash, mode }
          : { _tag: "present", hash }

    const ids = yield* IdGenerator
    const checkpointId = (yield* ids.next("ckpt")) as CheckpointId
    // Parallel tool results of one turn race for the same stream: each attempt re-reads it.
    const attempt = Effect.gen(function* () {
      const state = yield* loadSession(input.sessionId)
      const turn = state.turns.get(input.turnId)
      if (turn === undefined) {
        return warn(
          "turn_not_found",
          `no checkpoint for ${input.path}: turn ${input.turnId} is not in this session`,
        )
      }
      const checkpoint = Checkpoint.make({
        checkpointId,
        turnId: input.turnId,
        anchorMessageId: turn.userMessageId,
        ...(input.toolMessageId === undefined ? {} : { toolMessageId: input.toolMessageId }),
        toolName: input.toolName,
        path: path.right,
        before: version(beforeHash, input.beforeMode),
        after: version(afterHash, input.afterMode),
        ...(patchHash === undefined ? {} : { patchHash }),
        linesAdded: diff.linesAdded,
        linesRemoved: diff.linesRemoved,
      })
      return yield* appendDecided(state, input.sessionId, [new CheckpointCreated({ checkpoint })]).pipe(
        Effect.as<FileMutationResult>({ recorded: true, checkpoint }),
        // Only a conflict is worth another attempt; any other refusal of the store is the answer.
        Effect.catchIf(
          (error) => !(error instanceof VersionConflict),
          (error) => Effect.fail(new StoreRefused({ error })),
        ),
      )
    })
    return yield* retryOnVersionConflict(attempt).pipe(
      Effect.catchIf(
        (error): error is VersionConflict | StoreRefused =>
          error instanceof VersionConflict || error instanceof StoreRefused,
        (error) => {
          const message = error instanceof StoreRefused ? error.error.message : error.message
          return Effect.succeed(
            warn(
              "checkpoint_not_stored",
              `no checkpoint for ${input.path}: the session store refused it (${message})`,
            ),
          )
        },
      ),
    )
  })

/**
 * Records a checkpoint for a file mutation that already happened. Never fails: a problem is a
 * warning in the result and the tool's own result is unaffected.
 */
export const recordFileMutation = (
  input: FileMutationInput,
): Effect.Effect<FileMutationResult, never, ArtifactStore | IdGenerator | SessionStore | Workspace> =>
  record(input).pipe(
    Effect.catchAll((error) =>
      Effect.succeed(
        warn(
          error._tag === "Refused" && error.kind === "session_not_found"
            ? "session_unavailable"
            : "checkpoint_not_stored",
          `no checkpoint for ${input.path}: ${error.message}`,
        ),
      ),
    ),
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.failCause(cause as Cause.Cause<never>)
        : Effect.succeed(warn("internal_error", `no checkpoint for ${input.path}: ${Cause.pretty(cause)}`)),
    ),
  )
