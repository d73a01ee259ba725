/**
 * `layerRewind`: the `Rewind` service over the ports a host supplies, with every engine service
 * built inside — the fork workspace restore, the session state cache and the point artifact
 * cache — so a host that provides only the ports gets the same safe engine the facade runs. GC
 * marks the operation journal's live content itself (`pointGc.ts`), so no host can forget it.
 *
 * Every operation goes through one door (`answer`): its arguments are decoded against its
 * `RewindOperations` Schemas (input they refuse answers `invalid_input` and runs nothing), then
 * the program runs over the engine's context; a refusal becomes `{ ok: false, refusal }`, and a
 * version conflict the engine's retries did not resolve the refusal `conflict`. The conversation
 * commands only load, decide and append, so they run under `retryOnVersionConflict`; the programs
 * that write files retry their own appends.
 *
 * Optional host services (`StoreLocation`, `StoreDoctor`, `FileRewindSettings`) are read from the
 * context the layer is built in.
 */
import {
  type Refusal,
  type Refused,
  refuse,
  toOutcome,
  VersionConflict,
  type WorkspacePath,
} from "@rewind/contracts"
import { Effect, Either, Layer, Option } from "effect"
import { evaluateRewindTarget } from "../conversation/evaluateRewindTarget.js"
import { rewindConversation } from "../conversation/rewindConversation.js"
import { applyFileRewind } from "../files/applyFileRewind.js"
import { recordCheckpointFromIntent } from "../files/checkpointFromIntent.js"
import { previewFileRewind } from "../files/fileRewindPreview.js"
import { recordFileMutation } from "../files/recordFileMutation.js"
import { rewindCascade, rewindToCheckpoint, rewindToMessageCheckpoint } from "../files/restoreCheckpoints.js"
import { getTurnFileChanges } from "../files/turnFileChanges.js"
import { forkAtMessage } from "../fork/forkAtMessage.js"
import { completeTurnWithBoundary } from "../fork/forkBoundary.js"
import { forkFromCheckpoint } from "../fork/forkFromCheckpoint.js"
import { layerForkWorkspaceRestore } from "../fork/forkWorkspaceRestore.js"
import type { ForkWorkspaceRestore } from "../fork/forkWorkspaceRestoreService.js"
import { applyMerge, previewMerge } from "../fork/mergeSessions.js"
import { cancelRewindByFork, previewRewindByFork, rewindByFork } from "../fork/rewindByFork.js"
import { listRewindPoints } from "../fork/rewindByForkPlan.js"
import { diffSessions } from "../fork/sessionTrees.js"
import { createSideChat } from "../fork/sideChat.js"
import type { ArtifactStore } from "../ports/ArtifactStore.js"
import type { BackgroundTasks } from "../ports/BackgroundTasks.js"
import { IdGenerator } from "../ports/IdGenerator.js"
import type { OperationJournal } from "../ports/OperationJournal.js"
import type { SessionStore } from "../ports/SessionStore.js"
import { StoreDoctor } from "../ports/StoreDoctor.js"
import type { Workspace } from "../ports/Workspace.js"
import { recover, resolveOperation } from "../restore/recover.js"
import { redo } from "../restore/redo.js"
import { runningTurn } from "../session/branchView.js"
import { loadSession, retryOnVersionConflict } from "../session/loadSession.js"
import { layerSessionStateCache, type SessionStateCache } from "../session/SessionStateCache.js"
import {
  appendReply,
  appendUserMessage,
  applyCompaction,
  completeTurn,
  createSession,
  finishBackgroundTask,
  listSessions,
  startBackgroundTask,
} from "../session/sessionCommands.js"
import { sessionHistory } from "../session/sessionHistory.js"
import { recordVerification, updateGoal } from "../session/sessionRecords.js"
import { transcript } from "../session/transcript.js"
import { applyPointRestore } from "../snapshot/applyPointRestore.js"
import { capturePoint } from "../snapshot/capturePoint.js"
import { layerPointArtifactCache, type PointArtifactCache } from "../snapshot/pointArtifactCache.js"
import { diffPoint } from "../snapshot/pointDiff.js"
import { cleanup, previewCleanup, snapshotStatus } from "../snapshot/pointGc.js"
import { readPointIndex } from "../snapshot/pointIndex.js"
import { previewPointRestore } from "../snapshot/restoreToPoint.js"
import { declareWriteIntent } from "../snapshot/writeIntents.js"
import { Rewind, type RewindApi, type RewindError } from "./api.js"
import { decodeArguments } from "./arguments.js"
import { RewindOperations, type SuccessOf } from "./operations.js"
import { inSessionTree } from "./sessionTree.js"

/** What a host supplies: the ports. Everything else the engine builds itself. */
export type RewindPorts =
  | SessionStore
  | OperationJournal
  | ArtifactStore
  | Workspace
  | IdGenerator
  | BackgroundTasks

/** What the engine's programs run over: the ports and the engine's own services. */
type Engine = RewindPorts | ForkWorkspaceRestore | SessionStateCache | PointArtifactCache

/** The engine's own services, over the ports. */
const layerEngine = Layer.mergeAll(
  layerForkWorkspaceRestore,
  layerSessionStateCache(),
  layerPointArtifactCache(),
)

const conflictRefusal = (error: VersionConflict) =>
  refuse(
    "conflict",
    `another writer kept changing session ${error.sessionId} while this ran (${error.message}); its record was not appended, try again`,
  )

const invalidInput = (message: string): Refusal => ({ kind: "invalid_input", message })

const newCommandId = Effect.flatMap(IdGenerator, (ids) => ids.next("cmd"))

/** The host's command id (so a retried call replays), or a fresh one. */
const withCommandId = <A, E, R>(
  commandId: string | undefined,
  body: (commandId: never) => Effect.Effect<A, E, R>,
) =>
  Effect.flatMap(commandId === undefined ? newCommandId : Effect.succeed(commandId), (id) =>
    body(id as never),
  )

/** A conversation rewind as the API answers it: the cursor and the ids, not the folded state. */
const wireConversation = <C extends { readonly cursor: unknown }>(c: C) => {
  const { cursor, targetMessageId, removedMessageIds, stoppedTaskIds } = c as C & {
    readonly targetMessageId: never
    readonly removedMessageIds: never
    readonly stoppedTaskIds: never
  }
  return { cursor, targetMessageId, removedMessageIds, stoppedTaskIds } as never
}

const withWireConversation = <V extends { readonly conversation?: { readonly cursor: unknown } }>(
  value: V,
) =>
  value.conversation === undefined ? value : { ...value, conversation: wireConversation(value.conversation) }

const makeRewind = Effect.gen(function* () {
  const context = yield* Effect.context<Engine>()

  /**
   * The door every operation goes through (see the module comment). `body` is typed by the
   * operation's signature, so a program whose value does not fit the declared success Schema, or
   * that fails with an error outside `RewindError`, does not compile.
   */
  const answer = <K extends keyof RewindApi>(
    name: K,
    body: (
      ...args: Parameters<RewindApi[K]>
    ) => Effect.Effect<SuccessOf<RewindApi[K]>, RewindError | Refused | VersionConflict, Engine>,
  ): RewindApi[K] => {
    const run = (...args: ReadonlyArray<unknown>) =>
      Effect.suspend(() => {
        const decoded = decodeArguments(name, RewindOperations[name].args, args)
        if (Either.isLeft(decoded)) {
          return Effect.succeed({ ok: false as const, refusal: invalidInput(decoded.left) })
        }
        const program = inSessionTree(
          name,
          decoded.right,
          body(...(decoded.right as Parameters<RewindApi[K]>)),
        )
        return toOutcome(
          Effect.catchIf(program, (e): e is VersionConflict => e instanceof VersionConflict, conflictRefusal),
        ).pipe(Effect.provide(context))
      })
    // The decoded arguments are the typed ones; the answer is `Outcome<SuccessOf<K>>` by construction.
    return run as unknown as RewindApi[K]
  }

  const api: RewindApi = {
    createSession: answer("createSession", createSession),
    listSessions: answer("listSessions", listSessions),
    runningTurn: answer("runningTurn", (sessionId) => Effect.map(loadSession(sessionId), runningTurn)),
    appendUserMessage: answer("appendUserMessage", (sessionId, input) =>
      retryOnVersionConflict(appendUserMessage(sessionId, input)),
    ),
    appendReply: answer("appendReply", (sessionId, input) =>
      retryOnVersionConflict(appendReply(sessionId, input)),
    ),
    completeTurn: answer("completeTurn", (sessionId, turnId, status) =>
      retryOnVersionConflict(completeTurn(sessionId, turnId, status)),
    ),
    completeTurnWithBoundary: answer("completeTurnWithBoundary", (sessionId, turnId, status) =>
      retryOnVersionConflict(completeTurnWithBoundary(sessionId, turnId, status)),
    ),
    applyCompaction: answer("applyCompaction", (sessionId, input) =>
      retryOnVersionConflict(applyCompaction(sessionId, input)),
    ),
    transcript: answer("transcript", (sessionId) => Effect.map(loadSession(sessionId), transcript)),
    sessionHistory: answer("sessionHistory", (sessionId, window) =>
      Effect.map(loadSession(sessionId), (state) => sessionHistory(state, window)),
    ),
    updateGoal: answer("updateGoal", (sessionId, input) =>
      retryOnVersionConflict(updateGoal(sessionId, input)),
    ),
    recordVerification: answer("recordVerification", (sessionId, input) =>
      retryOnVersionConflict(recordVerification(sessionId, input)),
    ),
    startBackgroundTask: answer("startBackgroundTask", (sessionId, turnId, description, taskId) =>
      retryOnVersionConflict(startBackgroundTask(sessionId, turnId, description, taskId)),
    ),
    finishBackgroundTask: answer("finishBackgroundTask", (sessionId, taskId, outcome) =>
      retryOnVersionConflict(finishBackgroundTask(sessionId, taskId, outcome)),
    ),
    recordFileMutation: answer("recordFileMutation", recordFileMutation),
    declareWriteIntent: answer("declareWriteIntent", declareWriteIntent),
    recordCheckpointFromIntent: answer("recordCheckpointFromIntent", (input) =>
      // The door decoded it with `WorkspacePathFromHost`: the path is a normalised workspace path.
      recordCheckpointFromIntent({ ...input, path: input.path as WorkspacePath }),
    ),
    listCheckpoints: answer("listCheckpoints", (sessionId) =>
      Effect.map(loadSession(sessionId), (state) => state.checkpoints),
    ),
    turnFileChanges: answer("turnFileChanges", getTurnFileChanges),
    evaluateRewindTarget: answer("evaluateRewindTarget", (sessionId, messageId, scope) =>
      Effect.map(loadSession(sessionId), (state) => evaluateRewindTarget(state, messageId, scope)),
    ),
    rewindConversation: answer("rewindConversation", (sessionId, messageId) =>
      Effect.map(rewindConversation({ sessionId, messageId }), wireConversation),
    ),
    rewindToCheckpoint: answer("rewindToCheckpoint", (sessionId, checkpointId) =>
      Effect.map(rewindToCheckpoint({ sessionId, checkpointId }), withWireConversation),
    ),
    rewindToMessageCheckpoint: answer("rewindToMessageCheckpoint", (sessionId, messageId) =>
      Effect.map(rewindToMessageCheckpoint({ sessionId, messageId }), withWireConversation),
    ),
    rewindCascade: answer("rewindCascade", (sessionId, messageId, scope) =>
      Effect.map(rewindCascade({ sessionId, messageId, scope }), withWireConversation),
    ),
    previewFileRewind: answer("previewFileRewind", previewFileRewind),
    applyFileRewind: answer("applyFileRewind", (preview) =>
      Effect.map(applyFileRewind(preview), withWireConversation),
    ),
    forkAtMessage: answer("forkAtMessage", (sessionId, messageId, commandId, workspace) =>
      withCommandId(commandId, (id) => forkAtMessage({ sessionId, messageId, commandId: id, workspace })),
    ),
    forkFromCheckpoint: answer("forkFromCheckpoint", (sessionId, target, commandId, workspace) =>
      withCommandId(commandId, (id) => forkFromCheckpoint({ sessionId, target, commandId: id, workspace })),
    ),
    listRewindPoints: answer("listRewindPoints", listRewindPoints),
    previewRewindByFork: answer("previewRewindByFork", (sessionId, messageId) =>
      previewRewindByFork({ sessionId, messageId }),
    ),
    rewindByFork: answer("rewindByFork", (sessionId, messageId, token, commandId, workspace) =>
      withCommandId(commandId, (id) =>
        rewindByFork({ sessionId, messageId, token, commandId: id, workspace }),
      ),
    ),
    cancelRewindByFork: answer("cancelRewindByFork", (sessionId, messageId, token) =>
      cancelRewindByFork({ sessionId, messageId, token }),
    ),
    createSideChat: answer("createSideChat", (sessionId, commandId) =>
      withCommandId(commandId, (id) => createSideChat({ sessionId, commandId: id })),
    ),
    capturePoint: answer("capturePoint", (sessionId, turnId, options) =>
      capturePoint(sessionId, turnId, options ?? {}),
    ),
    listPoints: answer("listPoints", (sessionId) =>
      Effect.zipRight(
        loadSession(sessionId),
        Effect.map(readPointIndex(sessionId), (index) => index.points),
      ),
    ),
    diffPoint: answer("diffPoint", (sessionId, pointId, options) => diffPoint(sessionId, pointId, options)),
    previewPointRestore: answer("previewPointRestore", previewPointRestore),
    restorePoint: answer("restorePoint", applyPointRestore),
    redo: answer("redo", redo),
    recover: answer("recover", recover),
    resolveOperation: answer("resolveOperation", resolveOperation),
    snapshotStatus: answer("snapshotStatus", () => snapshotStatus),
    previewCleanup: answer("previewCleanup", (options) => previewCleanup(options ?? {})),
    cleanup: answer("cleanup", (options) => cleanup(options ?? {})),
    diffSessions: answer("diffSessions", (sessionId, otherSessionId, options) =>
      diffSessions(sessionId, otherSessionId, options ?? {}),
    ),
    previewMerge: answer("previewMerge", (sessionId, sourceSessionId, options) =>
      previewMerge(sessionId, sourceSessionId, options ?? {}),
    ),
    applyMerge: answer("applyMerge", applyMerge),
    doctor: answer("doctor", (options) =>
      Effect.gen(function* () {
        const doctor = yield* Effect.serviceOption(StoreDoctor)
        if (Option.isNone(doctor)) {
          return yield* refuse(
            "unavailable",
            "doctor: this host supplies no StoreDoctor, so the store cannot be checked here",
          )
        }
        return yield* doctor.value.check(options ?? {})
      }),
    ),
  }
  return api
})

/**
 * The `Rewind` service over the ports (`RewindPorts`); the engine's own services are built inside.
 * Provide `StoreLocation`, `StoreDoctor` or `FileRewindSettings` beside the ports to use them.
 */
export const layerRewind: Layer.Layer<Rewind, never, RewindPorts> = Layer.effect(Rewind, makeRewind).pipe(
  Layer.provide(layerEngine),
)
