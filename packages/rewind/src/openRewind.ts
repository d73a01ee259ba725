/**
 * The Promise facade: `openRewind` builds a runtime over the embedded default store (or an
 * injected Layer) and exposes the engine's commands as async functions. Expected "no" answers
 * resolve as `{ ok: false, refusal }`; infrastructure errors reject with the typed error; every
 * call takes an optional AbortSignal that interrupts its fiber; `close()` releases the runtime.
 *
 * Every method goes through one door (`guard`): its arguments are decoded against that method's
 * Schemas (internal/facadeInput.ts) before anything runs, so a wrong-typed argument answers
 * `invalid_input` naming the field (in the method's own answer shape) and never reaches the engine
 * as a raw TypeError; after `close()` every call rejects with `RewindClosed`.
 *
 * Version conflicts: the conversation commands (append a message or reply, complete a turn, apply
 * a compaction) only load, decide and append, so they are re-run under the engine's
 * `retryOnVersionConflict`; the programs that write files retry their own appends. A conflict that
 * outlasts the retries answers a `conflict` refusal, never a raw rejection.
 */

import { join } from "node:path"
import type {
  CheckpointId,
  CommandId,
  FileRewindPreview,
  MessageId,
  OperationId,
  Outcome,
  PointCaptured,
  PointId,
  RewindScope,
  SessionId,
  TurnId,
} from "@rewind/contracts"
import { type Refusal, Refused, refuse, toOutcome, VersionConflict } from "@rewind/contracts"
import {
  appendReply,
  appendUserMessage,
  applyCompaction,
  applyFileRewind,
  applyPointRestore,
  type CaptureOptions,
  type CaptureOutcome,
  type CleanupOptions,
  type CleanupReport,
  type CompactionInput,
  type CreateSessionInput,
  cancelRewindByFork,
  capturePoint,
  cleanup,
  completeTurn,
  completeTurnWithBoundary,
  createSession,
  createSideChat,
  evaluateRewindTarget,
  type FileMutationInput,
  type FileMutationResult,
  type FileRewindTarget,
  type ForkRestoreTarget,
  forkAtMessage,
  forkFromCheckpoint,
  getTurnFileChanges,
  IdGenerator,
  type IncompleteOperation,
  listRewindPoints,
  listSessions,
  loadSession,
  type PointRestorePreview,
  type PointRestoreResult,
  previewCleanup,
  previewFileRewind,
  previewPointRestore,
  previewRewindByFork,
  type RedoResult,
  type ReplyInput,
  type Resolution,
  readPointIndex,
  recordFileMutation,
  recover,
  redo,
  resolveOperation,
  retryOnVersionConflict,
  rewindByFork,
  rewindCascade,
  rewindCode,
  rewindConversation,
  rewindToCheckpoint,
  type SnapshotStatus,
  snapshotStatus,
  transcript,
  type UserMessageInput,
} from "@rewind/core"
import { Cause, Effect, Either, Exit, type Layer, ManagedRuntime } from "effect"
import { RewindClosed } from "./errors.js"
import { type DoctorOptions, type DoctorReport, runDoctor } from "./internal/doctor.js"
import { decodeArguments, type FacadeMethod } from "./internal/facadeInput.js"
import { journalRoots } from "./internal/journalRoots.js"
import {
  ARTIFACTS_DIR,
  type DefaultLayerOptions,
  type EngineServices,
  layerEmbedded,
  type RewindServices,
  storeDirectory,
  withEngineServices,
} from "./layers.js"
import { diffPoint, type PointDiff, type PointDiffOptions } from "./pointDiff.js"

/** Options every facade call accepts. */
export interface CallOptions {
  /** Aborting interrupts the operation's fiber; the promise then rejects. */
  readonly signal?: AbortSignal
}

/** How to open Rewind: the embedded default (SQLite + files under `dir`) or an injected Layer. */
export interface OpenRewindOptions<E = never> extends DefaultLayerOptions {
  /**
   * Replaces the embedded default entirely: a Layer providing every service in `RewindServices`.
   * `dir`, `create`, `sqlite` and `durability` are then ignored.
   */
  readonly layer?: Layer.Layer<RewindServices, E>
}

const unwrap = <A, E>(exit: Exit.Exit<A, E>): A => {
  if (Exit.isSuccess(exit)) return exit.value
  // Reject with the typed error itself (or the defect / interruption), not a wrapper around it.
  throw Cause.squash(exit.cause)
}

const conflictAsRefusal = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchIf(
    effect,
    (error): error is E & VersionConflict => error instanceof VersionConflict,
    (error) =>
      refuse(
        "conflict",
        `another writer kept changing session ${error.sessionId} while this ran (${error.message}); its record was not appended, try again`,
      ),
  )

const newCommandId = Effect.map(IdGenerator, (ids) => ids.next("cmd")).pipe(
  Effect.flatten,
  Effect.map((id) => id as CommandId),
)

/** The host's command id (so a retried call replays), or a fresh one. */
const commandIdOr = (commandId: CommandId | undefined) =>
  commandId === undefined ? newCommandId : Effect.succeed(commandId)

/** A `resolveOperation` result: how an interrupted operation was finished, file by file. */
export interface ResolvedOperation {
  readonly operationId: OperationId
  readonly resolution: Resolution
  readonly files: ReadonlyArray<{ readonly path: string; readonly action: string }>
}

/** Adds the journal's live content to the host's own extra roots, so GC keeps what redo and recover need. */
const withJournalRoots = (options: CleanupOptions) =>
  Effect.map(
    journalRoots,
    (roots): CleanupOptions => ({
      ...options,
      extraRoots: [...(options.extraRoots ?? []), ...roots],
    }),
  )

/** A capture refused at the door: no point, and the refusal a program can switch on. */
export interface CaptureRefused {
  readonly _tag: "NotCaptured"
  readonly reason: string
  readonly refusal: Refusal
}

const invalidInput = (message: string): Refusal => ({ kind: "invalid_input", message })

/** How a method answers input its Schemas refuse, in the shape that method documents. */
const answers = {
  /** `{ ok: false, refusal }`, like any other refusal. */
  outcome: (message: string): Outcome<never> => ({ ok: false, refusal: invalidInput(message) }),
  /** Methods without an Outcome reject with the typed `Refused`, as their refusals do. */
  reject: (message: string): never => {
    throw new Refused(invalidInput(message))
  },
  /** `recordFileMutation` never fails: its warning shape. */
  warning: (message: string): FileMutationResult => ({
    recorded: false,
    warning: { reason: "invalid_input", message },
  }),
  /** `capturePoint` never rejects for a capture problem: `NotCaptured`, with the refusal. */
  notCaptured: (message: string): CaptureRefused => ({
    _tag: "NotCaptured",
    reason: message,
    refusal: invalidInput(message),
  }),
}

const makeApi = (
  runtime: ManagedRuntime.ManagedRuntime<EngineServices, unknown>,
  info: { readonly workspaceRoot: string; readonly dir: string | undefined },
) => {
  let closed = false
  const closedError = (method: string) =>
    new RewindClosed({
      method,
      message: `${method}: this Rewind was closed; nothing ran (open a new one with openRewind)`,
    })

  /**
   * Runs any Effect program over the services; a refusal becomes `{ ok: false, refusal }`. A
   * VersionConflict the engine's own retries did not resolve is a `conflict` refusal too: another
   * writer kept changing the session, and the host can simply ask again.
   */
  const outcome = <A, Err>(
    effect: Effect.Effect<A, Err, EngineServices>,
    options?: CallOptions,
  ): Promise<Outcome<A>> =>
    closed
      ? Promise.reject(closedError("outcome"))
      : runtime.runPromiseExit(toOutcome(conflictAsRefusal(effect)), options).then(unwrap)

  /** Runs any Effect program over the services; its failures (refusals included) reject. */
  const run = <A, Err>(effect: Effect.Effect<A, Err, EngineServices>, options?: CallOptions): Promise<A> =>
    closed ? Promise.reject(closedError("run")) : runtime.runPromiseExit(effect, options).then(unwrap)

  /**
   * The door every facade method goes through: a closed instance rejects with `RewindClosed`;
   * arguments its Schemas refuse get the method's `invalid_input` answer and run nothing; the
   * body gets the decoded arguments.
   */
  const guard =
    <Args extends ReadonlyArray<unknown>, R>(
      method: FacadeMethod,
      invalid: (message: string) => R,
      body: (...args: Args) => Promise<R>,
    ) =>
    (...args: Args): Promise<R> => {
      if (closed) return Promise.reject(closedError(method))
      const decoded = decodeArguments(method, args)
      if (Either.isLeft(decoded)) {
        try {
          return Promise.resolve(invalid(decoded.left))
        } catch (error) {
          return Promise.reject(error)
        }
      }
      return body(...(decoded.right as unknown as Args))
    }

  return {
    /** The workspace root this instance restores files into. */
    workspaceRoot: info.workspaceRoot,
    /** The store directory of the embedded default; undefined when a Layer was injected. */
    dir: info.dir,
    outcome,
    run,

    // --- sessions and conversation -------------------------------------------------------
    /** Creates a session (id generated unless given). */
    createSession: guard(
      "createSession",
      answers.outcome,
      (input: CreateSessionInput, options?: CallOptions) => outcome(createSession(input), options),
    ),
    /** Sessions in the store, newest first. */
    listSessions: guard("listSessions", answers.reject, (options?: CallOptions) =>
      run(listSessions(), options),
    ),
    /** Appends a user message and starts its turn. */
    appendUserMessage: guard(
      "appendUserMessage",
      answers.outcome,
      (sessionId: SessionId, input: UserMessageInput, options?: CallOptions) =>
        outcome(retryOnVersionConflict(appendUserMessage(sessionId, input)), options),
    ),
    /** Appends an assistant (or system) reply to a turn on the active branch. */
    appendReply: guard(
      "appendReply",
      answers.outcome,
      (sessionId: SessionId, input: ReplyInput, options?: CallOptions) =>
        outcome(retryOnVersionConflict(appendReply(sessionId, input)), options),
    ),
    /** Completes a turn without pinning a fork boundary. */
    completeTurn: guard(
      "completeTurn",
      answers.outcome,
      (
        sessionId: SessionId,
        turnId: TurnId,
        status: "completed" | "aborted" = "completed",
        options?: CallOptions,
      ) => outcome(retryOnVersionConflict(completeTurn(sessionId, turnId, status)), options),
    ),
    /** Completes a turn and pins its fork boundary (so `forkAtMessage` can fork at its reply). */
    completeTurnWithBoundary: guard(
      "completeTurnWithBoundary",
      answers.outcome,
      (
        sessionId: SessionId,
        turnId: TurnId,
        status: "completed" | "aborted" = "completed",
        options?: CallOptions,
      ) => outcome(retryOnVersionConflict(completeTurnWithBoundary(sessionId, turnId, status)), options),
    ),
    /** Replaces a contiguous range of the active branch by a summary for the model. */
    applyCompaction: guard(
      "applyCompaction",
      answers.outcome,
      (sessionId: SessionId, input: CompactionInput, options?: CallOptions) =>
        outcome(retryOnVersionConflict(applyCompaction(sessionId, input)), options),
    ),
    /** The active branch as a person reads it. */
    transcript: guard("transcript", answers.outcome, (sessionId: SessionId, options?: CallOptions) =>
      outcome(Effect.map(loadSession(sessionId), transcript), options),
    ),

    // --- checkpoints and file rewind -----------------------------------------------------
    /**
     * Records a checkpoint after a tool wrote a file. Never rejects for a store problem or bad
     * input: it warns. A path like `./a.txt` is normalised to `a.txt`.
     */
    recordFileMutation: guard(
      "recordFileMutation",
      answers.warning,
      (input: FileMutationInput, options?: CallOptions) => run(recordFileMutation(input), options),
    ),
    /** The file changes of a turn (default: the latest). */
    turnFileChanges: guard(
      "turnFileChanges",
      answers.outcome,
      (sessionId: SessionId, turnId?: TurnId, options?: CallOptions) =>
        outcome(getTurnFileChanges(sessionId, turnId), options),
    ),
    /** Which rewinds a message allows, and what each would undo. */
    evaluateRewindTarget: guard(
      "evaluateRewindTarget",
      answers.outcome,
      (sessionId: SessionId, messageId: MessageId, scope: RewindScope, options?: CallOptions) =>
        outcome(
          Effect.map(loadSession(sessionId), (state) => evaluateRewindTarget(state, messageId, scope)),
          options,
        ),
    ),
    /** Moves the conversation back to before a message; files are untouched. */
    rewindConversation: guard(
      "rewindConversation",
      answers.outcome,
      (sessionId: SessionId, messageId: MessageId, options?: CallOptions) =>
        outcome(rewindConversation({ sessionId, messageId }), options),
    ),
    /** Puts back the before-content of one checkpoint. */
    rewindToCheckpoint: guard(
      "rewindToCheckpoint",
      answers.outcome,
      (sessionId: SessionId, checkpointId: CheckpointId, options?: CallOptions) =>
        outcome(rewindToCheckpoint({ sessionId, checkpointId }), options),
    ),
    /** Restores the latest live checkpoint tied to a user message. */
    rewindCode: guard(
      "rewindCode",
      answers.outcome,
      (sessionId: SessionId, messageId: MessageId, options?: CallOptions) =>
        outcome(rewindCode({ sessionId, messageId }), options),
    ),
    /** Undoes everything from a user message onward: files, conversation, or both. */
    rewindCascade: guard(
      "rewindCascade",
      answers.outcome,
      (sessionId: SessionId, messageId: MessageId, scope: RewindScope, options?: CallOptions) =>
        outcome(rewindCascade({ sessionId, messageId, scope }), options),
    ),
    /** What undoing a turn's (or a message onward's) file changes would do; writes nothing. */
    previewFileRewind: guard(
      "previewFileRewind",
      answers.outcome,
      (target: FileRewindTarget, options?: CallOptions) => outcome(previewFileRewind(target), options),
    ),
    /** Applies a preview after re-checking every hash. */
    applyFileRewind: guard(
      "applyFileRewind",
      answers.outcome,
      (preview: FileRewindPreview, options?: CallOptions) => outcome(applyFileRewind(preview), options),
    ),

    // --- forks ---------------------------------------------------------------------------
    /** Forks at a completed turn's reply (a command id is generated unless given, for retries). */
    forkAtMessage: guard(
      "forkAtMessage",
      answers.outcome,
      (sessionId: SessionId, messageId: MessageId, commandId?: CommandId, options?: CallOptions) =>
        outcome(
          Effect.flatMap(commandIdOr(commandId), (id) =>
            forkAtMessage({ sessionId, messageId, commandId: id }),
          ),
          options,
        ),
    ),
    /**
     * Forks the session and puts the shared workspace back: to before an explicit checkpoint (or
     * the latest), or, for a message, to how it was at the end of that turn. Every file is checked
     * first; an unsafe one refuses with nothing written and no fork created.
     */
    forkFromCheckpoint: guard(
      "forkFromCheckpoint",
      answers.outcome,
      (sessionId: SessionId, target: ForkRestoreTarget, commandId?: CommandId, options?: CallOptions) =>
        outcome(
          Effect.flatMap(commandIdOr(commandId), (id) =>
            forkFromCheckpoint({ sessionId, target, commandId: id }),
          ),
          options,
        ),
    ),
    /** Rewind by fork, step 1: the user messages that can be rewound to, with their prompts. */
    listRewindPoints: guard(
      "listRewindPoints",
      answers.outcome,
      (sessionId: SessionId, options?: CallOptions) => outcome(listRewindPoints(sessionId), options),
    ),
    /** Rewind by fork, step 2: what would be restored, checked, with a token when it can be applied. */
    previewRewindByFork: guard(
      "previewRewindByFork",
      answers.outcome,
      (sessionId: SessionId, messageId: MessageId, options?: CallOptions) =>
        outcome(previewRewindByFork({ sessionId, messageId }), options),
    ),
    /**
     * Rewind by fork, step 3: forks, re-checks the workspace, restores it; answers with the child
     * id and the original prompt to refill.
     */
    rewindByFork: guard(
      "rewindByFork",
      answers.outcome,
      (
        sessionId: SessionId,
        messageId: MessageId,
        token: string,
        commandId?: CommandId,
        options?: CallOptions,
      ) =>
        outcome(
          Effect.flatMap(commandIdOr(commandId), (id) =>
            rewindByFork({ sessionId, messageId, token, commandId: id }),
          ),
          options,
        ),
    ),
    /** Rewind by fork, cancelled: spends the token; nothing is forked or restored. */
    cancelRewindByFork: guard(
      "cancelRewindByFork",
      answers.outcome,
      (sessionId: SessionId, messageId: MessageId, token: string, options?: CallOptions) =>
        outcome(cancelRewindByFork({ sessionId, messageId, token }), options),
    ),
    /** Opens a side chat that inherits the conversation as background. */
    createSideChat: guard(
      "createSideChat",
      answers.outcome,
      (sessionId: SessionId, commandId?: CommandId, options?: CallOptions) =>
        outcome(
          Effect.flatMap(commandIdOr(commandId), (id) => createSideChat({ sessionId, commandId: id })),
          options,
        ),
    ),

    // --- snapshot points -----------------------------------------------------------------
    /**
     * Captures a point of the workspace for (session, turn): call it at a turn boundary, before the
     * model request or tool run. Idempotent per turn (`existing: true` the second time). Never
     * rejects for a capture problem: it resolves `{ _tag: "NotCaptured", reason }`, and the turn
     * simply has no point; settings or declared paths its Schemas refuse resolve `NotCaptured`
     * with an `invalid_input` refusal. `onProgress` reports the scan and hash phases.
     */
    capturePoint: guard(
      "capturePoint",
      answers.notCaptured,
      (
        sessionId: SessionId,
        turnId: TurnId,
        options?: CallOptions & CaptureOptions,
      ): Promise<CaptureOutcome | CaptureRefused> =>
        run(capturePoint(sessionId, turnId, options ?? {}), options),
    ),
    /** The session's points (turn and rescue), oldest first; `session_not_found` if there is no session. */
    listPoints: guard(
      "listPoints",
      answers.outcome,
      (sessionId: SessionId, options?: CallOptions): Promise<Outcome<ReadonlyArray<PointCaptured>>> =>
        outcome(
          Effect.zipRight(
            loadSession(sessionId),
            Effect.map(readPointIndex(sessionId), (index) => index.points),
          ),
          options,
        ),
    ),
    /**
     * What differs between a point and the workspace now: added, modified and deleted paths with
     * both sides, and a unified diff per text file. Writes nothing.
     */
    diffPoint: guard(
      "diffPoint",
      answers.outcome,
      (
        sessionId: SessionId,
        pointId: PointId,
        options?: CallOptions & PointDiffOptions,
      ): Promise<Outcome<PointDiff>> => outcome(diffPoint(sessionId, pointId, options), options),
    ),
    /**
     * Lists what restoring a point would write, link and delete, and the conflicts that forbid it.
     * Without conflicts the preview carries a token (five minutes, single use) for `restorePoint`.
     */
    previewPointRestore: guard(
      "previewPointRestore",
      answers.outcome,
      (
        sessionId: SessionId,
        pointId: PointId,
        options?: CallOptions,
      ): Promise<Outcome<PointRestorePreview>> => outcome(previewPointRestore(sessionId, pointId), options),
    ),
    /**
     * Restores the workspace to a point, redeeming the preview's token. Captures a rescue point of
     * every path it touches first (restore that point to undo), and refuses `conflict` when the
     * workspace changed since the preview. A failure undoes every step; nothing is half-written.
     */
    restorePoint: guard(
      "restorePoint",
      answers.outcome,
      (
        sessionId: SessionId,
        pointId: PointId,
        token: string,
        options?: CallOptions,
      ): Promise<Outcome<PointRestoreResult>> =>
        outcome(applyPointRestore(sessionId, pointId, token), options),
    ),

    // --- redo and recovery -----------------------------------------------------------------
    /**
     * Undoes the session's last rewind that wrote files (cascade, direct restore, applied preview):
     * files and conversation come back as they were. Refuses `conflict` (writing nothing) when a
     * file changed since that rewind, `nothing_to_undo` when there is no rewind to redo.
     */
    redo: guard(
      "redo",
      answers.outcome,
      (sessionId: SessionId, options?: CallOptions): Promise<Outcome<RedoResult>> =>
        outcome(redo(sessionId), options),
    ),
    /** Operations interrupted by a crash (begun, never completed), oldest first, with each file's state. */
    recover: guard(
      "recover",
      answers.reject,
      (options?: CallOptions): Promise<ReadonlyArray<IncompleteOperation>> => run(recover(), options),
    ),
    /**
     * Finishes an interrupted operation: `continue` writes what it meant to write, `rollback` what
     * was there before. Refuses `conflict` (writing nothing) when a file holds neither.
     */
    resolveOperation: guard(
      "resolveOperation",
      answers.outcome,
      (
        operationId: OperationId,
        resolution: Resolution,
        options?: CallOptions,
      ): Promise<Outcome<ResolvedOperation>> => outcome(resolveOperation(operationId, resolution), options),
    ),

    // --- maintenance ---------------------------------------------------------------------
    /**
     * Store usage from the snapshot engine's side: blobs, bytes, shared content, index size, points
     * per session and the paths each session's latest point left unprotected.
     */
    snapshotStatus: guard(
      "snapshotStatus",
      answers.reject,
      (options?: CallOptions): Promise<SnapshotStatus> => run(snapshotStatus, options),
    ),
    /**
     * What `cleanup` would delete, deleting nothing. Content the operation journal still needs
     * (interrupted operations, available redo entries) is always kept.
     */
    previewCleanup: guard(
      "previewCleanup",
      answers.reject,
      (options?: CallOptions & CleanupOptions): Promise<CleanupReport> =>
        run(Effect.flatMap(withJournalRoots(options ?? {}), previewCleanup), options),
    ),
    /**
     * Garbage collection of the artifact store: mark from every point, checkpoint, rescue point and
     * journal entry; sweep what is unmarked and older than the grace window. A root that cannot be
     * read stops it with `swept: false`, and nothing is deleted.
     */
    cleanup: guard(
      "cleanup",
      answers.reject,
      (options?: CallOptions & CleanupOptions): Promise<CleanupReport> =>
        run(Effect.flatMap(withJournalRoots(options ?? {}), cleanup), options),
    ),

    // --- maintenance (store health) ------------------------------------------------------
    /**
     * Checks the store: SQLite integrity and schema version (when SQLite), every blob's hash, every
     * reference, the operation journal and (embedded default) leftover temp files. With
     * `repair: true` it also removes orphan temp files, and nothing else.
     */
    doctor: guard(
      "doctor",
      answers.reject,
      (options?: CallOptions & Omit<DoctorOptions, "artifactsDirectory">): Promise<DoctorReport> =>
        run(
          runDoctor({
            ...options,
            ...(info.dir === undefined ? {} : { artifactsDirectory: join(info.dir, ARTIFACTS_DIR) }),
          }),
          options,
        ),
    ),
    /**
     * Releases the runtime: closes the database and finalizes every layer. Idempotent; every later
     * call rejects with `RewindClosed`.
     */
    close: (): Promise<void> => {
      closed = true
      return runtime.dispose()
    },
  }
}

/** An open Rewind: the engine's commands as Promises. */
export type Rewind = ReturnType<typeof makeApi>

/**
 * Opens Rewind on a workspace. Without `layer`, the embedded default: SQLite at
 * `<dir>/rewind.db` (events, journal and blobs in one SQLite file), `dir` defaulting to `<workspaceRoot>/.rewind`.
 * Rejects with the typed error when the store cannot be opened.
 */
export const openRewind = async <E = never>(options: OpenRewindOptions<E>): Promise<Rewind> => {
  const layer: Layer.Layer<EngineServices, unknown> =
    options.layer === undefined ? layerEmbedded(options) : withEngineServices(options.layer)
  const runtime = ManagedRuntime.make(layer)
  try {
    // Build now, so a store that cannot be opened rejects here rather than on the first call.
    await runtime.runPromiseExit(Effect.void).then(unwrap)
  } catch (error) {
    await runtime.dispose()
    throw error
  }
  return makeApi(runtime, {
    workspaceRoot: options.workspaceRoot,
    dir: options.layer === undefined ? storeDirectory(options) : undefined,
  })
}

export type {
  CaptureOptions,
  CaptureOutcome,
  CaptureProgress,
  CleanupOptions,
  CleanupReport,
  IncompleteOperation,
  PointRestorePreview,
  PointRestoreResult,
  RedoResult,
  Resolution,
  SnapshotStatus,
} from "@rewind/core"
export type { DoctorOptions, DoctorProblem, DoctorProblemKind, DoctorReport } from "./internal/doctor.js"
