/**
 * Writes a checkpoint straight into a session stream, past `recordFileMutation`'s door: what a
 * store written by an older version, a hostile host or a damaged row can hold. Tests of the
 * restore paths use it to show that a record naming a protected path, or one through a symlink,
 * is refused where it would be written, whatever let it into the store.
 */
import {
  Checkpoint,
  CheckpointCreated,
  type CheckpointId,
  type SessionId,
  type TurnId,
} from "@rewind/contracts"
import { ArtifactStore, appendDecided, IdGenerator, loadSession, toBytes } from "@rewind/core"
import { Effect } from "effect"

export interface InjectedCheckpoint {
  readonly sessionId: SessionId
  readonly turnId: TurnId
  /** Any string: it is data, and not checked here. */
  readonly path: string
  readonly before: string | Uint8Array | null
  readonly after: string | Uint8Array | null
  readonly toolName?: string
}

export const injectCheckpoint = (input: InjectedCheckpoint) =>
  Effect.gen(function* () {
    const artifacts = yield* ArtifactStore
    const ids = yield* IdGenerator
    const version = (content: string | Uint8Array | null) =>
      content === null
        ? Effect.succeed({ _tag: "absent" } as const)
        : Effect.map(
            artifacts.put(toBytes(content)),
            (hash) => ({ _tag: "present", hash, mode: 0o644 }) as const,
          )
    const state = yield* loadSession(input.sessionId)
    const turn = state.turns.get(input.turnId)
    if (turn === undefined) return yield* Effect.dieMessage(`turn ${input.turnId} is not in the session`)
    const checkpoint = Checkpoint.make({
      checkpointId: (yield* ids.next("ckpt")) as CheckpointId,
      turnId: input.turnId,
      anchorMessageId: turn.userMessageId,
      toolName: input.toolName ?? "Write",
      // biome-ignore lint/suspicious/noExplicitAny: the point is to store a path no door let in
      path: input.path as any,
      before: yield* version(input.before),
      after: yield* version(input.after),
      linesAdded: 1,
      linesRemoved: 1,
    })
    yield* appendDecided(state, input.sessionId, [new CheckpointCreated({ checkpoint })])
    return checkpoint
  })
