/**
 * Helpers for tests of forks: a completed turn with its boundary pinned, raw checkpoint records
 * (what a tool-level capture would record), a recording ForkWorkspaceRestore, and a session's
 * stream in its stored JSON form for byte-for-byte comparisons.
 */
import {
  type Checkpoint,
  CheckpointCreated,
  type CheckpointId,
  encodeEvent,
  type FileVersion,
  type MessageId,
  type SessionId,
  type TurnId,
  type WorkspacePath,
} from "@rewind/contracts"
import {
  appendReply,
  appendUserMessage,
  completeTurnWithBoundary,
  type ForkRestoreError,
  type ForkRestoreRequest,
  ForkWorkspaceRestore,
  loadSession,
  type PartInput,
  SessionStore,
} from "@rewind/core"
import { Clock, Context, Effect, Layer } from "effect"

export interface TurnOptions {
  /** Assistant replies before the final one (tool calls and their results). */
  readonly intermediateReplies?: number
  /** The final reply ends in an error (no boundary is pinned then). */
  readonly failed?: boolean
  /** Leave the turn running (no final reply, no completion). */
  readonly running?: boolean
}

export interface TurnRecord {
  readonly turnId: TurnId
  readonly user: MessageId
  readonly replies: ReadonlyArray<MessageId>
  /** The final reply: where the boundary is pinned. */
  readonly last: MessageId | undefined
  readonly pinned: boolean
}

/** A user message, its replies, and turn completion with the boundary pinned. */
export const completedTurn = (sessionId: SessionId, text: string, options: TurnOptions = {}) =>
  Effect.gen(function* () {
    const user = yield* appendUserMessage(sessionId, { text })
    const replies: Array<MessageId> = []
    for (let i = 0; i < (options.intermediateReplies ?? 0); i++) {
      const parts: ReadonlyArray<PartInput> = [
        { kind: "tool_call", toolName: "Read", data: { path: `f${i}.ts` } },
        { kind: "tool_result", toolName: "Read", text: `contents ${i}` },
      ]
      replies.push((yield* appendReply(sessionId, { turnId: user.turnId, parts })).messageId)
    }
    if (options.running === true) {
      return {
        turnId: user.turnId,
        user: user.messageId,
        replies,
        last: undefined,
        pinned: false,
      } as TurnRecord
    }
    const final = yield* appendReply(sessionId, {
      turnId: user.turnId,
      parts: [
        { kind: "reasoning", text: `thinking about ${text}` },
        { kind: "text", text: `re: ${text}` },
      ],
      ...(options.failed === true ? { status: "error" as const } : {}),
    })
    replies.push(final.messageId)
    const completed = yield* completeTurnWithBoundary(sessionId, user.turnId)
    return {
      turnId: user.turnId,
      user: user.messageId,
      replies,
      last: final.messageId,
      pinned: completed.boundary !== undefined,
    } as TurnRecord
  })

export interface CheckpointInput {
  readonly checkpointId: string
  readonly turnId: TurnId
  readonly anchorMessageId: MessageId
  readonly path: string
  readonly before: FileVersion
  readonly after: FileVersion
}

/** Appends a checkpoint record as a tool-level capture would. */
export const recordCheckpointEvent = (sessionId: SessionId, input: CheckpointInput) =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    const state = yield* loadSession(sessionId)
    const checkpoint: Checkpoint = {
      checkpointId: input.checkpointId as CheckpointId,
      turnId: input.turnId,
      anchorMessageId: input.anchorMessageId,
      toolName: "Write",
      path: input.path as WorkspacePath,
      before: input.before,
      after: input.after,
      linesAdded: 1,
      linesRemoved: 0,
    }
    yield* store.append({
      sessionId,
      expectedVersion: state.version,
      events: [new CheckpointCreated({ checkpoint })],
      at: yield* Clock.currentTimeMillis,
    })
    return checkpoint
  })

/** A session's stream as stored: one JSON line per event with its sequence and time. */
export const storedLines = (sessionId: SessionId) =>
  Effect.flatMap(SessionStore, (store) => store.read(sessionId)).pipe(
    Effect.map((events) =>
      events.map((e) => JSON.stringify({ sequence: e.sequence, at: e.at, ...encodeEvent(e.event) })),
    ),
  )

/** What a recording restorer saw, and a switch to make its next restores fail. */
export interface RestoreRecorder {
  readonly requests: Array<ForkRestoreRequest>
  failWith: ForkRestoreError | undefined
}

export class ForkRestoreRecorder extends Context.Tag("@rewind/testkit/ForkRestoreRecorder")<
  ForkRestoreRecorder,
  RestoreRecorder
>() {}

/** A ForkWorkspaceRestore that records each request (and can be told to fail), for tests. */
export const layerRecordingRestore: Layer.Layer<ForkWorkspaceRestore | ForkRestoreRecorder> =
  Layer.effectContext(
    Effect.sync(() => {
      const recorder: RestoreRecorder = { requests: [], failWith: undefined }
      return Context.make(ForkRestoreRecorder, recorder).pipe(
        Context.add(ForkWorkspaceRestore, {
          restore: <A, E, R>(request: ForkRestoreRequest, commit: Effect.Effect<A, E, R>) =>
            Effect.suspend((): Effect.Effect<A, E | ForkRestoreError, R> => {
              if (recorder.failWith !== undefined) return Effect.fail(recorder.failWith)
              recorder.requests.push(request)
              return commit
            }),
        }),
      )
    }),
  )
