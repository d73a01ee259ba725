/**
 * The service's door, part two: every operation runs in the tree of the session it names
 * (`withSessionWorkspace`), so an isolated fork's operations are confined to its own root and
 * never touch the host's tree. The session is the operation's `session` argument (an object
 * argument: its `sessionId`); `resolveOperation` names none, so its journaled operation's is used.
 */
import type { OperationId, SessionId } from "@rewind/contracts"
import { Effect, Either, Option } from "effect"
import { OperationJournal } from "../ports/OperationJournal.js"
import { withSessionWorkspace } from "../session/sessionWorkspace.js"
import type { RewindApi } from "./api.js"
import { type OperationSpec, RewindOperations } from "./operations.js"

/** The session an operation's arguments name (its `session` argument, or that object's `sessionId`). */
const sessionArgument = (name: keyof RewindApi, args: ReadonlyArray<unknown>): SessionId | undefined => {
  const spec: OperationSpec = RewindOperations[name]
  if (spec.session === undefined) return undefined
  const value = args[spec.args.findIndex((a) => a.name === spec.session)]
  if (typeof value === "string") return value as SessionId
  const inner =
    typeof value === "object" && value !== null ? (value as { sessionId?: unknown }).sessionId : undefined
  return typeof inner === "string" ? (inner as SessionId) : undefined
}

/**
 * Runs an operation in the tree of the session it works on (`withSessionWorkspace`): an isolated
 * fork's own, the host's otherwise. `resolveOperation` names no session: its journaled operation's.
 */
export const inSessionTree = <A, E, R>(
  name: keyof RewindApi,
  args: ReadonlyArray<unknown>,
  program: Effect.Effect<A, E, R>,
) => {
  if (name === "resolveOperation") {
    return Effect.flatMap(
      Effect.either(Effect.flatMap(OperationJournal, (j) => j.get(args[0] as OperationId))),
      (found) =>
        Either.isRight(found) && Option.isSome(found.right)
          ? withSessionWorkspace(found.right.value.intent.sessionId, program)
          : program,
    )
  }
  const sessionId = sessionArgument(name, args)
  return sessionId === undefined ? program : withSessionWorkspace(sessionId, program)
}
