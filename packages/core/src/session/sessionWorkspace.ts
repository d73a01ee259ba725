/**
 * Which tree a session works in. A session whose stream holds a `WorkspaceAssigned` (an isolated
 * fork) works in its own root; every other session in the host's workspace. `withSessionWorkspace`
 * runs a program with the session's own `Workspace` (and the store directories inside that tree,
 * for the protection policy) in place of the host's, so every operation on an isolated child —
 * capture, restores, redo, recovery, forks — is confined to the child's root and can never touch
 * the parent's tree. It is applied once, at the service's door (`rewind/layer.ts`), and by the
 * programs that act for a session other than the one they were called for (recovery, merge).
 */
import { refuse, type SessionId } from "@rewind/contracts"
import { Effect, Option } from "effect"
import { Workspace } from "../ports/Workspace.js"
import { Workspaces } from "../ports/Workspaces.js"
import { StoreLocation } from "../workspace/protection.js"
import { loadSession } from "./loadSession.js"
import type { SessionState } from "./sessionState.js"

/** The root a session's own tree lies at; undefined when it works in the host's workspace. */
export const isolatedRootOf = (state: SessionState): string | undefined => state.workspace?.root

/** Runs `program` over the tree `root` (a session's own). */
export const withWorkspaceAt = <A, E, R>(root: string, program: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const workspaces = yield* Effect.serviceOption(Workspaces)
    if (Option.isNone(workspaces)) {
      return yield* refuse(
        "unavailable",
        `this session works in its own tree (${root}), and this host supplies no Workspaces to open it with`,
      )
    }
    const opened = yield* Effect.catchAll(workspaces.value.open(root), (e) =>
      refuse("unavailable", `the session's own tree ${root} cannot be opened: ${e.message}`),
    )
    return yield* program.pipe(
      Effect.provideService(Workspace, opened.workspace),
      Effect.provideService(StoreLocation, { directories: opened.storeDirectories }),
    )
  })

/**
 * Runs `program` in the tree `sessionId` works in: its own when it is an isolated fork, the one in
 * context otherwise (also when the session does not exist: the program gives its own answer).
 */
export const withSessionWorkspace = <A, E, R>(sessionId: SessionId, program: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const state = yield* Effect.either(loadSession(sessionId))
    const root = state._tag === "Right" ? isolatedRootOf(state.right) : undefined
    return yield* root === undefined ? program : withWorkspaceAt(root, program)
  })
