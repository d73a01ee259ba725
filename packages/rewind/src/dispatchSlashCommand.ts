/**
 * Runs a `/rewind …`, `/fork …` or `/side …` line typed in a host's TUI: parses it with
 * `parseSlashCommand` and calls the matching facade operation, answering with an outcome. A line
 * that does not parse is an `invalid_input` refusal whose message includes the help.
 */
import type { CheckpointId, Outcome, Refusal, SessionId } from "@rewind/contracts"
import type { ForkOutcome } from "@rewind/core"
import { loadSession, type RewindResults, type TurnFileChanges } from "@rewind/core"

/** What a restore answers (the service's success Schema). */
type FileRestoreResult = typeof RewindResults.FileRestoreResult.Type

import { Effect, Either } from "effect"
import type { CallOptions, Rewind } from "./openRewind.js"
import { parseSlashCommand, SLASH_HELP } from "./slashCommand.js"

export type SlashCommandResult =
  | { readonly _tag: "Help"; readonly text: string }
  /** `/rewind` and `/rewind status`: the latest turn's file changes (undefined before any). */
  | { readonly _tag: "Status"; readonly changes: TurnFileChanges | undefined }
  | { readonly _tag: "Restored"; readonly result: FileRestoreResult }
  | { readonly _tag: "ConversationRewound"; readonly removedMessageIds: ReadonlyArray<string> }
  | { readonly _tag: "SideChat"; readonly fork: ForkOutcome }
  /** `/fork …`: the child, with the workspace put back (`fork.restoredFiles`). */
  | { readonly _tag: "Forked"; readonly fork: ForkOutcome }

const refused = (refusal: Refusal): Outcome<never> => ({ ok: false, refusal })

const map = async <A, B>(pending: Promise<Outcome<A>>, f: (a: A) => B): Promise<Outcome<B>> => {
  const outcome = await pending
  return outcome.ok ? { ok: true, value: f(outcome.value) } : outcome
}

/** The newest checkpoint of the session that no restore has used yet. */
const latestLiveCheckpoint = (rewind: Rewind, sessionId: SessionId, options?: CallOptions) =>
  rewind.outcome(
    Effect.map(loadSession(sessionId), (state) =>
      state.checkpoints.filter((c) => !state.spentCheckpointIds.has(c.checkpointId)).at(-1),
    ),
    options,
  )

/**
 * Parses `input` and runs it on `sessionId`. Refusals (including a line that does not parse) come
 * back as `{ ok: false, refusal }`; infrastructure errors reject, as with every facade call.
 */
export const dispatchSlashCommand = async (
  rewind: Rewind,
  sessionId: SessionId,
  input: string,
  options?: CallOptions,
): Promise<Outcome<SlashCommandResult>> => {
  const parsed = parseSlashCommand(input)
  if (Either.isLeft(parsed)) return refused({ kind: "invalid_input", message: parsed.left.message })
  const command = parsed.right
  const restored = (result: FileRestoreResult): SlashCommandResult => ({ _tag: "Restored", result })
  switch (command._tag) {
    case "RewindHelp":
      return { ok: true, value: { _tag: "Help", text: SLASH_HELP } }
    case "RewindStatus":
      return map(rewind.turnFileChanges(sessionId, undefined, options), (changes) => ({
        _tag: "Status" as const,
        changes,
      }))
    case "RewindCheckpoint": {
      let checkpointId: CheckpointId
      if (command.checkpoint === "latest") {
        const latest = await latestLiveCheckpoint(rewind, sessionId, options)
        if (!latest.ok) return latest
        if (latest.value === undefined) {
          return refused({
            kind: "nothing_to_undo",
            message: `session ${sessionId} has no checkpoint left to restore`,
          })
        }
        checkpointId = latest.value.checkpointId
      } else {
        checkpointId = command.checkpoint
      }
      return map(rewind.rewindToCheckpoint(sessionId, checkpointId, options), restored)
    }
    case "RewindConversation":
      return map(rewind.rewindConversation(sessionId, command.messageId, options), (r) => ({
        _tag: "ConversationRewound" as const,
        removedMessageIds: r.removedMessageIds,
      }))
    case "RewindCode":
      return map(rewind.rewindToMessageCheckpoint(sessionId, command.messageId, options), restored)
    case "RewindBoth":
      // Files first, then the conversation, committed together: what a cascade of scope `both` does.
      return map(rewind.rewindCascade(sessionId, command.messageId, "both", options), restored)
    case "RewindCascade":
      return map(rewind.rewindCascade(sessionId, command.messageId, command.scope, options), restored)
    case "Fork":
      // `/fork` alone forks from the latest checkpoint, like `/fork latest`.
      return map(
        rewind.forkFromCheckpoint(
          sessionId,
          command.checkpoint === undefined || command.checkpoint === "latest"
            ? { latest: true }
            : { checkpointId: command.checkpoint },
          undefined,
          command.isolated === undefined ? undefined : { mode: "isolated", root: command.isolated },
          options,
        ),
        (fork) => ({ _tag: "Forked" as const, fork }),
      )
    case "SideChat": {
      const fork = await rewind.createSideChat(sessionId, undefined, options)
      if (!fork.ok) return fork
      const asked = await rewind.appendUserMessage(
        fork.value.childSessionId,
        { text: command.question },
        options,
      )
      if (!asked.ok) return asked
      return { ok: true, value: { _tag: "SideChat", fork: fork.value } }
    }
  }
}
