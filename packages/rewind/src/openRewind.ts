/**
 * The Promise facade: `openRewind` builds a runtime over the embedded default store (or an
 * injected Layer) and exposes the engine's commands as async functions. Expected "no" answers
 * resolve as `{ ok: false, refusal }`; infrastructure errors reject with the typed error; every
 * call takes an optional AbortSignal that interrupts its fiber; `close()` releases the runtime.
 */
import type {
  CheckpointId,
  CommandId,
  FileRewindPreview,
  MessageId,
  Outcome,
  RewindScope,
  SessionId,
  TurnId,
} from "@rewind/contracts"
import { toOutcome } from "@rewind/contracts"
import {
  appendReply,
  appendUserMessage,
  applyCompaction,
  applyFileRewind,
  type CompactionInput,
  type CreateSessionInput,
  cancelRewindByFork,
  completeTurn,
  completeTurnWithBoundary,
  createSession,
  createSideChat,
  evaluateRewindTarget,
  type FileMutationInput,
  type FileRewindTarget,
  type ForkRestoreTarget,
  forkAtMessage,
  forkFromCheckpoint,
  getTurnFileChanges,
  IdGenerator,
  listRewindPoints,
  listSessions,
  loadSession,
  previewFileRewind,
  previewRewindByFork,
  type ReplyInput,
  recordFileMutation,
  rewindByFork,
  rewindCascade,
  rewindCode,
  rewindConversation,
  rewindToCheckpoint,
  transcript,
  type UserMessageInput,
} from "@rewind/core"
import { Cause, Effect, Exit, type Layer, ManagedRuntime } from "effect"
import { type DoctorReport, runDoctor } from "./internal/doctor.js"
import {
  type DefaultLayerOptions,
  type EngineServices,
  layerEmbedded,
  type RewindServices,
  storeDirectory,
  withEngineServices,
} from "./layers.js"

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

const newCommandId = Effect.map(IdGenerator, (ids) => ids.next("cmd")).pipe(
  Effect.flatten,
  Effect.map((id) => id as CommandId),
)

const makeApi = (
  runtime: ManagedRuntime.ManagedRuntime<EngineServices, unknown>,
  info: { readonly workspaceRoot: string; readonly dir: string | undefined },
) => {
  /** Runs any Effect program over the services; a refusal becomes `{ ok: false, refusal }`. */
  const outcome = <A, Err>(
    effect: Effect.Effect<A, Err, EngineServices>,
    options?: CallOptions,
  ): Promise<Outcome<A>> => runtime.runPromiseExit(toOutcome(effect), options).then(unwrap)

  /** Runs any Effect program over the services; its failures (refusals included) reject. */
  const run = <A, Err>(effect: Effect.Effect<A, Err, EngineServices>, options?: CallOptions): Promise<A> =>
    runtime.runPromiseExit(effect, options).then(unwrap)

  return {
    /** The workspace root this instance restores files into. */
    workspaceRoot: info.workspaceRoot,
    /** The store directory of the embedded default; undefined when a Layer was injected. */
    dir: info.dir,
    outcome,
    run,

    // --- sessions and conversation -------------------------------------------------------
    /** Creates a session (id generated unless given). */
    createSession: (input: CreateSessionInput, options?: CallOptions) =>
      outcome(createSession(input), options),
    /** Sessions in the store, newest first. */
    listSessions: (options?: CallOptions) => run(listSessions(), options),
    /** Appends a user message and starts its turn. */
    appendUserMessage: (sessionId: SessionId, input: UserMessageInput, options?: CallOptions) =>
      outcome(appendUserMessage(sessionId, input), options),
    /** Appends an assistant (or system) reply to a turn on the active branch. */
    appendReply: (sessionId: SessionId, input: ReplyInput, options?: CallOptions) =>
      outcome(appendReply(sessionId, input), options),
    /** Completes a turn without pinning a fork boundary. */
    completeTurn: (
      sessionId: SessionId,
      turnId: TurnId,
      status: "completed" | "aborted" = "completed",
      options?: CallOptions,
    ) => outcome(completeTurn(sessionId, turnId, status), options),
    /** Completes a turn and pins its fork boundary (so `forkAtMessage` can fork at its reply). */
    completeTurnWithBoundary: (
      sessionId: SessionId,
      turnId: TurnId,
      status: "completed" | "aborted" = "completed",
      options?: CallOptions,
    ) => outcome(completeTurnWithBoundary(sessionId, turnId, status), options),
    /** Replaces a contiguous range of the active branch by a summary for the model. */
    applyCompaction: (sessionId: SessionId, input: CompactionInput, options?: CallOptions) =>
      outcome(applyCompaction(sessionId, input), options),
    /** The active branch as a person reads it. */
    transcript: (sessionId: SessionId, options?: CallOptions) =>
      outcome(Effect.map(loadSession(sessionId), transcript), options),

    // --- checkpoints and file rewind -----------------------------------------------------
    /** Records a checkpoint after a tool wrote a file. Never rejects for a store problem: it warns. */
    recordFileMutation: (input: FileMutationInput, options?: CallOptions) =>
      run(recordFileMutation(input), options),
    /** The file changes of a turn (default: the latest). */
    turnFileChanges: (sessionId: SessionId, turnId?: TurnId, options?: CallOptions) =>
      outcome(getTurnFileChanges(sessionId, turnId), options),
    /** Which rewinds a message allows, and what each would undo. */
    evaluateRewindTarget: (
      sessionId: SessionId,
      messageId: MessageId,
      scope: RewindScope,
      options?: CallOptions,
    ) =>
      outcome(
        Effect.map(loadSession(sessionId), (state) => evaluateRewindTarget(state, messageId, scope)),
        options,
      ),
    /** Moves the conversation back to before a message; files are untouched. */
    rewindConversation: (sessionId: SessionId, messageId: MessageId, options?: CallOptions) =>
      outcome(rewindConversation({ sessionId, messageId }), options),
    /** Puts back the before-content of one checkpoint. */
    rewindToCheckpoint: (sessionId: SessionId, checkpointId: CheckpointId, options?: CallOptions) =>
      outcome(rewindToCheckpoint({ sessionId, checkpointId }), options),
    /** Restores the latest live checkpoint tied to a user message. */
    rewindCode: (sessionId: SessionId, messageId: MessageId, options?: CallOptions) =>
      outcome(rewindCode({ sessionId, messageId }), options),
    /** Undoes everything from a user message onward: files, conversation, or both. */
    rewindCascade: (sessionId: SessionId, messageId: MessageId, scope: RewindScope, options?: CallOptions) =>
      outcome(rewindCascade({ sessionId, messageId, scope }), options),
    /** What undoing a turn's (or a message onward's) file changes would do; writes nothing. */
    previewFileRewind: (target: FileRewindTarget, options?: CallOptions) =>
      outcome(previewFileRewind(target), options),
    /** Applies a preview after re-checking every hash. */
    applyFileRewind: (preview: FileRewindPreview, options?: CallOptions) =>
      outcome(applyFileRewind(preview), options),

    // --- forks ---------------------------------------------------------------------------
    /** Forks at a completed turn's reply (a command id is generated unless given, for retries). */
    forkAtMessage: (
      sessionId: SessionId,
      messageId: MessageId,
      commandId?: CommandId,
      options?: CallOptions,
    ) =>
      outcome(
        Effect.flatMap(commandId === undefined ? newCommandId : Effect.succeed(commandId), (id) =>
          forkAtMessage({ sessionId, messageId, commandId: id }),
        ),
        options,
      ),
    /**
     * Forks the session and puts the shared workspace back: to before an explicit checkpoint (or
     * the latest), or, for a message, to how it was at the end of that turn. Every file is checked
     * first; an unsafe one refuses with nothing written and no fork created.
     */
    forkFromCheckpoint: (
      sessionId: SessionId,
      target: ForkRestoreTarget,
      commandId?: CommandId,
      options?: CallOptions,
    ) =>
      outcome(
        Effect.flatMap(commandId === undefined ? newCommandId : Effect.succeed(commandId), (id) =>
          forkFromCheckpoint({ sessionId, target, commandId: id }),
        ),
        options,
      ),
    /** Rewind by fork, step 1: the user messages that can be rewound to, with their prompts. */
    listRewindPoints: (sessionId: SessionId, options?: CallOptions) =>
      outcome(listRewindPoints(sessionId), options),
    /** Rewind by fork, step 2: what would be restored, checked, with a token when it can be applied. */
    previewRewindByFork: (sessionId: SessionId, messageId: MessageId, options?: CallOptions) =>
      outcome(previewRewindByFork({ sessionId, messageId }), options),
    /**
     * Rewind by fork, step 3: forks, re-checks the workspace, restores it; answers with the child
     * id and the original prompt to refill.
     */
    rewindByFork: (
      sessionId: SessionId,
      messageId: MessageId,
      token: string,
      commandId?: CommandId,
      options?: CallOptions,
    ) =>
      outcome(
        Effect.flatMap(commandId === undefined ? newCommandId : Effect.succeed(commandId), (id) =>
          rewindByFork({ sessionId, messageId, token, commandId: id }),
        ),
        options,
      ),
    /** Rewind by fork, cancelled: spends the token; nothing is forked or restored. */
    cancelRewindByFork: (sessionId: SessionId, messageId: MessageId, token: string, options?: CallOptions) =>
      outcome(cancelRewindByFork({ sessionId, messageId, token }), options),
    /** Opens a side chat that inherits the conversation as background. */
    createSideChat: (sessionId: SessionId, commandId?: CommandId, options?: CallOptions) =>
      outcome(
        Effect.flatMap(commandId === undefined ? newCommandId : Effect.succeed(commandId), (id) =>
          createSideChat({ sessionId, commandId: id }),
        ),
        options,
      ),

    // --- maintenance ---------------------------------------------------------------------
    /** Checks the store: SQLite integrity (when SQLite) and every blob's hash. */
    doctor: (
      options?: CallOptions & { readonly onProgress?: (checked: number) => void },
    ): Promise<DoctorReport> => run(runDoctor(options?.onProgress), options),
    /** Releases the runtime: closes the database and finalizes every layer. Idempotent. */
    close: (): Promise<void> => runtime.dispose(),
  }
}

/** An open Rewind: the engine's commands as Promises. */
export type Rewind = ReturnType<typeof makeApi>

/**
 * Opens Rewind on a workspace. Without `layer`, the embedded default: SQLite at
 * `<dir>/rewind.db` and blobs under `<dir>/artifacts`, `dir` defaulting to `<workspaceRoot>/.rewind`.
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

export type { DoctorReport } from "./internal/doctor.js"
