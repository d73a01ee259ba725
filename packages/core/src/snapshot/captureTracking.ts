/**
 * The tracked set of a capture beyond what its scan listed: the previous point's paths,
 * checkpoints, write intents and what the host declares — each only while the protection policy
 * leaves it in scope (a path that became ignored drops out; one under `.git` or the store never
 * enters). The scan (or the live tree) already decided every path in a directory it listed; the
 * rest are asked of the policy. What the host declared and cannot be taken is reported, never
 * dropped silently. One module for full and live captures, so both track the same paths.
 */
import { type SkippedPath, type WorkspacePath, workspacePathProblem } from "@rewind/contracts"
import { Effect, Either, Option } from "effect"
import { Workspace } from "../ports/Workspace.js"
import type { SessionState } from "../session/sessionState.js"
import { makeProtectionCheck } from "../workspace/protection.js"
import type { PointIndex } from "./pointIndex.js"

export const makeTracker = (
  listed: ReadonlyMap<WorkspacePath, unknown>,
  outOfScope: (path: string) => boolean | undefined,
) =>
  Effect.gen(function* () {
    const skippedDeclared: Array<SkippedPath> = []
    const tracked = new Set<WorkspacePath>()
    const protectionOf = yield* makeProtectionCheck()
    const workspace = yield* Workspace
    const track = (path: WorkspacePath, declaredByHost: boolean) =>
      Effect.gen(function* () {
        if (listed.has(path) || tracked.has(path)) return
        const decided = outOfScope(path)
        const protection = decided === false ? Option.none() : yield* protectionOf(path)
        if (Option.isSome(protection)) {
          if (declaredByHost)
            skippedDeclared.push({ path, reason: "protected", detail: protection.value.message })
          return
        }
        if (declaredByHost) {
          // What the host names under a linked directory is not a path of this tree (links are
          // recorded as links, never followed): say so rather than record it absent.
          const at = yield* Effect.either(workspace.stat(path))
          if (Either.isLeft(at) && at.left._tag === "PathRefused") {
            skippedDeclared.push({ path, reason: "not_a_regular_file", detail: at.left.message })
            return
          }
        }
        tracked.add(path)
      })
    const trackDeclared = (declared: ReadonlyArray<string>) =>
      Effect.forEach(
        declared,
        (p) => {
          const problem = typeof p === "string" ? workspacePathProblem(p) : "a declared path must be a string"
          if (problem === undefined) return track(p as WorkspacePath, true)
          skippedDeclared.push({ path: String(p), reason: "invalid_path", detail: problem })
          return Effect.void
        },
        { discard: true },
      )
    /**
     * The paths the session names: its checkpoints' and its write intents' (the valid ones `where`
     * wants, all by default: a capture that re-examines part of the tree tracks only those there).
     */
    const trackSession = (
      state: Pick<SessionState, "checkpoints">,
      index: Pick<PointIndex, "writeIntents">,
      where: (path: WorkspacePath) => boolean = () => true,
    ) =>
      Effect.gen(function* () {
        const named = (path: WorkspacePath) => workspacePathProblem(path) === undefined && where(path)
        for (const c of state.checkpoints) if (named(c.path)) yield* track(c.path, false)
        for (const intent of index.writeIntents)
          for (const e of intent.entries) if (named(e.path)) yield* track(e.path, false)
      })
    return { track, trackDeclared, trackSession, tracked, skippedDeclared }
  })
