/**
 * Write intents: before a tool writes, the host declares the paths; the engine reads each one and
 * stores its pre-image itself (content in the artifact store, the record in the session stream),
 * so even a tool that reports no before-content can be undone. A path whose read fails is recorded
 * as unreadable, never as absent, so nothing later mistakes it for a file that did not exist.
 * Declared paths are tracked by every later capture of the session. A path the protection policy
 * keeps (the store, `.git`, ignored paths) refuses the declaration whole.
 */
import {
  type PreImage,
  refuse,
  type SessionId,
  type TurnId,
  type WorkspacePath,
  WriteIntentDeclared,
  workspacePathProblem,
} from "@rewind/contracts"
import { Clock, Effect, Either, Option } from "effect"
import { ArtifactStore } from "../ports/ArtifactStore.js"
import { SessionStore } from "../ports/SessionStore.js"
import { Workspace } from "../ports/Workspace.js"
import { loadSession, retryOnVersionConflict } from "../session/loadSession.js"
import { checkProtection } from "../workspace/protection.js"

const preImageOf = (path: WorkspacePath) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const artifacts = yield* ArtifactStore
    const attempt = yield* Effect.either(
      Effect.gen(function* () {
        const stat = yield* workspace.stat(path)
        if (Option.isNone(stat)) return { state: "absent" } as PreImage
        if (stat.value.kind === "symlink")
          return { state: "link", target: yield* workspace.readLink(path) } as PreImage
        const file = yield* workspace.read(path)
        if (Option.isNone(file)) return { state: "absent" } as PreImage
        const hash = yield* artifacts.put(file.value.content)
        return { state: "file", hash, mode: file.value.mode } as PreImage
      }),
    )
    return Either.isRight(attempt)
      ? attempt.right
      : ({ state: "unreadable", detail: attempt.left.message } satisfies PreImage)
  })

/** Reads and stores the pre-images of `paths`, then records them as a write intent of the turn. */
export const declareWriteIntent = (sessionId: SessionId, turnId: TurnId, paths: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const invalid = paths.filter((p) => workspacePathProblem(p) !== undefined)
    if (invalid.length > 0) {
      return yield* refuse("invalid_input", `not workspace paths: ${invalid.join(", ")}`, invalid)
    }
    const unique = [...new Set(paths)] as Array<WorkspacePath>
    // The protection policy: a pre-image promises a write back, and the store, `.git` and ignored
    // paths are never written, so declaring one is refused whole (nothing stored or recorded).
    const protectedPaths = yield* checkProtection(unique)
    if (protectedPaths.size > 0) {
      const list = [...protectedPaths.values()]
      return yield* refuse(
        "unsafe_files",
        `refused to declare ${list.map((p) => p.message).join("; ")}; nothing was recorded`,
        { protected: list },
      )
    }
    const entries: Array<{ path: WorkspacePath; preImage: PreImage }> = []
    for (const path of unique) entries.push({ path, preImage: yield* preImageOf(path) })
    const event = new WriteIntentDeclared({ turnId, entries })
    yield* retryOnVersionConflict(
      Effect.gen(function* () {
        const state = yield* loadSession(sessionId)
        const store = yield* SessionStore
        const at = yield* Clock.currentTimeMillis
        yield* store.append({ sessionId, expectedVersion: state.version, events: [event], at })
      }),
    )
    return event
  })
