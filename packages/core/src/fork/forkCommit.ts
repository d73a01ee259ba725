/**
 * The idempotent tail every fork command shares: read the source stream, answer a replayed command
 * from its command fact, and commit the new streams together with the fact in one transaction. If
 * a concurrent run of the same command won the race, its recorded child is the answer.
 */
import {
  CommandId,
  type ForkCommand,
  ForkCommandResult,
  refuse,
  type SessionEvent,
  type SessionId,
} from "@rewind/contracts"
import { Effect, Either, Option, Schema } from "effect"
import { SessionStore } from "../ports/SessionStore.js"
import { loadSession } from "../session/loadSession.js"
import type { SessionState } from "../session/sessionState.js"

/** What a fork command answers: its recorded result, and whether this call only replayed it. */
export interface ForkOutcome extends ForkCommandResult {
  readonly replayed: boolean
}

/**
 * The state of the session a fork copies from; refuses when the session does not exist. Through
 * `loadSession`, so a host's SessionStateCache spares re-reading a long parent on every fork.
 */
export const readSessionStream = (sessionId: SessionId) =>
  Effect.map(loadSession(sessionId), (state) => ({ state }) as { readonly state: SessionState })

export const requireCommandId = (commandId: string) =>
  Schema.is(CommandId)(commandId)
    ? Effect.succeed(commandId)
    : refuse(
        "invalid_input",
        `command id '${commandId}' is not valid: 1-200 letters, digits and . _ : - (starting with a letter or digit)`,
      )

const decodeResult = Schema.decodeUnknownEither(ForkCommandResult)
const encodeResult = Schema.encodeSync(ForkCommandResult)

const fromFact = (
  sessionId: SessionId,
  commandId: string,
  command: ForkCommand,
  requestKey: string,
  recorded: unknown,
) => {
  const decoded = decodeResult(recorded)
  if (
    Either.isLeft(decoded) ||
    decoded.right.command !== command ||
    decoded.right.requestKey !== requestKey
  ) {
    return refuse(
      "conflict",
      `command id ${commandId} was already used on session ${sessionId} for a different request; use a new command id`,
    )
  }
  return Effect.succeed<ForkOutcome>({ ...decoded.right, replayed: true })
}

/** The recorded answer when this command already ran on `sessionId`. */
export const replayedFork = (
  sessionId: SessionId,
  commandId: string,
  command: ForkCommand,
  requestKey: string,
) =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    const fact = yield* store.getCommandFact(sessionId, commandId)
    if (Option.isNone(fact)) return Option.none<ForkOutcome>()
    return Option.some(yield* fromFact(sessionId, commandId, command, requestKey, fact.value.result))
  })

export interface NewStream {
  readonly sessionId: SessionId
  readonly events: ReadonlyArray<SessionEvent>
}

export interface ForkCommit {
  /** The session the command ran on: its command fact is written there. */
  readonly sessionId: SessionId
  readonly commandId: string
  readonly result: ForkCommandResult
  readonly streams: ReadonlyArray<NewStream>
  /** Events for the command's own session (only the after-rewind carry writes there). */
  readonly ownAppend?: { readonly expectedVersion: number; readonly events: ReadonlyArray<SessionEvent> }
  readonly at: number
}

/** Commits new streams, any own-session append and the command fact, all or nothing. */
export const commitFork = (input: ForkCommit) =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    const appends = input.streams.map((s) => ({
      sessionId: s.sessionId,
      expectedVersion: 0,
      events: s.events,
      at: input.at,
    }))
    if (input.ownAppend !== undefined && input.ownAppend.events.length > 0) {
      appends.push({ sessionId: input.sessionId, ...input.ownAppend, at: input.at })
    }
    return yield* store
      .commit({
        appends,
        facts: [
          {
            sessionId: input.sessionId,
            commandId: input.commandId,
            result: encodeResult(input.result),
            at: input.at,
          },
        ],
      })
      .pipe(
        Effect.as<ForkOutcome>({ ...input.result, replayed: false }),
        Effect.catchTag("CommandAlreadyRecorded", (e) =>
          fromFact(input.sessionId, input.commandId, input.result.command, input.result.requestKey, e.result),
        ),
      )
  })
