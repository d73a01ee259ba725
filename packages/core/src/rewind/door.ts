/**
 * The door every operation of the `Rewind` service goes through (`makeDoor`): its arguments are
 * decoded against its `RewindOperations` Schemas (input they refuse answers `invalid_input` and
 * runs nothing), then the program runs in its session's tree (`inSessionTree`) over the engine's
 * context; a refusal becomes `{ ok: false, refusal }`, and a version conflict the engine's retries
 * did not resolve the refusal `conflict`. Nothing reaches a program undecoded.
 */
import { type Refusal, type Refused, refuse, toOutcome, VersionConflict } from "@rewind/contracts"
import { type Context, Effect, Either } from "effect"
import type { ForkWorkspaceRestore } from "../fork/forkWorkspaceRestoreService.js"
import type { ArtifactStore } from "../ports/ArtifactStore.js"
import type { BackgroundTasks } from "../ports/BackgroundTasks.js"
import type { IdGenerator } from "../ports/IdGenerator.js"
import type { OperationJournal } from "../ports/OperationJournal.js"
import type { SessionStore } from "../ports/SessionStore.js"
import type { Workspace } from "../ports/Workspace.js"
import type { SessionStateCache } from "../session/SessionStateCache.js"
import type { PointArtifactCache } from "../snapshot/pointArtifactCache.js"
import type { TreeStatCache } from "../snapshot/treeStatCache.js"
import type { RewindApi, RewindError } from "./api.js"
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
export type Engine =
  | RewindPorts
  | ForkWorkspaceRestore
  | SessionStateCache
  | PointArtifactCache
  | TreeStatCache

/**
 * Binds operation `name` to its program. `body` is typed by the operation's signature, so a
 * program whose value does not fit the declared success Schema, or that fails with an error outside
 * `RewindError`, does not compile.
 */
export type Door = <K extends keyof RewindApi>(
  name: K,
  body: (
    ...args: Parameters<RewindApi[K]>
  ) => Effect.Effect<SuccessOf<RewindApi[K]>, RewindError | Refused | VersionConflict, Engine>,
) => RewindApi[K]

const conflictRefusal = (error: VersionConflict) =>
  refuse(
    "conflict",
    `another writer kept changing session ${error.sessionId} while this ran (${error.message}); its record was not appended, try again`,
  )

const invalidInput = (message: string): Refusal => ({ kind: "invalid_input", message })

/** The door over the engine's context (built once, by `layerRewind`). */
export const makeDoor = (context: Context.Context<Engine>): Door => {
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
  return answer
}
