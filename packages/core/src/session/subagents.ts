/**
 * Subagent sessions: a turn spawns a session of kind `subagent` whose parent is the spawning
 * session. The child's SessionCreated and the parent's SubagentSpawned link are committed together,
 * so there is never a subagent without its link or a link without its subagent.
 */
import {
  type MessageId,
  refuse,
  Session,
  SessionCreated,
  type SessionId,
  SubagentSpawned,
  type TurnId,
} from "@rewind/contracts"
import { Clock, Effect } from "effect"
import { IdGenerator } from "../ports/IdGenerator.js"
import { SessionStore } from "../ports/SessionStore.js"
import { branchView } from "./branchView.js"
import { loadSession } from "./loadSession.js"

export interface SpawnSubagentInput {
  readonly parentSessionId: SessionId
  /** The turn spawning the subagent: it must be on the parent's active branch. */
  readonly turnId: TurnId
  /** The message that spawned it (typically the tool call), if the host knows it. */
  readonly messageId?: MessageId
  readonly title: string
  readonly sessionId?: SessionId
}

export const spawnSubagent = (input: SpawnSubagentInput) =>
  Effect.gen(function* () {
    const ids = yield* IdGenerator
    const store = yield* SessionStore
    const parent = yield* loadSession(input.parentSessionId)
    const turn = parent.turns.get(input.turnId)
    if (turn === undefined) {
      return yield* refuse("not_found", `turn ${input.turnId} is not in session ${input.parentSessionId}`)
    }
    if (!branchView(parent).positions.has(turn.userMessageId)) {
      return yield* refuse("not_on_active_branch", `turn ${input.turnId} was cut by a rewind`)
    }
    if (input.messageId !== undefined && parent.messages.get(input.messageId)?.turnId !== input.turnId) {
      return yield* refuse("not_found", `message ${input.messageId} is not a message of turn ${input.turnId}`)
    }
    const id = input.sessionId ?? ((yield* ids.next("ses")) as SessionId)
    if ((yield* store.version(id)) > 0) return yield* refuse("conflict", `session ${id} already exists`)
    const at = yield* Clock.currentTimeMillis
    const session = new Session({
      id,
      parentId: input.parentSessionId,
      rootTraceId: parent.session!.rootTraceId,
      kind: "subagent",
      title: input.title,
      cwd: parent.session!.cwd,
      createdAt: at,
    })
    yield* store.commit({
      appends: [
        { sessionId: id, expectedVersion: 0, events: [new SessionCreated({ session })], at },
        {
          sessionId: input.parentSessionId,
          expectedVersion: parent.version,
          events: [
            new SubagentSpawned({
              subagentSessionId: id,
              turnId: input.turnId,
              spawnedAt: at,
              ...(input.messageId === undefined ? {} : { messageId: input.messageId }),
            }),
          ],
          at,
        },
      ],
    })
    return session
  })
